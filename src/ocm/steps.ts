import fs from 'node:fs/promises';
import path from 'node:path';
import type { ClusterPlan } from '../lab/plan.js';
import { ensureGoModuleSource } from '../provision/index.js';
import { logTail } from '../runtime/local/process.js';
import type { LocalContext } from '../runtime/local/runtime.js';
import type { Step } from '../runtime/types.js';
import { acceptClusters, type AcceptDiagnostics } from './accept.js';
import { HUB_COMPONENTS, KLUSTERLET_COMPONENT } from './constants.js';
import { OCM_API_MODULE, OCM_API_VERSION } from './crds.js';
import { conversionWebhookUrl, ensureHubBootstrapObjects, ensureHubProcesses, ensureWebhookCertificate, installHubCrds } from './hub.js';
import { ensureBootstrapKubeconfig, ensureKlusterlet, prepareSpoke } from './join.js';
import { kubeClients } from './kube.js';
import { ocmLayout } from './layout.js';
import type { OcmBinaries } from './processes.js';

const DEFAULT_TIMEOUT_MS = 120_000;

interface OcmState {
  binaries?: OcmBinaries;
  apiModuleDir?: string;
}

function hubOf(ctx: LocalContext): ClusterPlan {
  const hub = ctx.clusters.find((c) => c.hub);
  if (!hub) throw new Error('internal: the lab has no hub cluster plan yet');
  return hub;
}

function need<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`internal: ${what} is not ready yet`);
  return value;
}

/** Log tails that usually say why a cluster did not join: its agent's and the hub registration controller's. */
export function acceptDiagnostics(ctx: LocalContext): AcceptDiagnostics {
  return {
    logTails: async (cluster) => {
      const spoke = ctx.clusters.find((c) => c.name === cluster);
      const hub = hubOf(ctx);
      const files = [
        ...(spoke ? [{ name: `${cluster}/${KLUSTERLET_COMPONENT}`, file: path.join(spoke.logDir, `${KLUSTERLET_COMPONENT}.log`) }] : []),
        { name: `${hub.name}/registration-controller`, file: path.join(hub.logDir, 'registration-controller.log') },
      ];
      return Promise.all(files.map(async (f) => ({ ...f, tail: await logTail(f.file, 15) })));
    },
  };
}

/** The hub's API objects: CRDs (addon CRDs pointed at the webhook) and the bootstrap identity. */
async function hubObjectsStep(ctx: LocalContext, state: OcmState): Promise<string> {
  const hub = hubOf(ctx);
  const pki = need(ctx.pki.get(hub.name), `PKI of ${hub.name}`);
  const layout = ocmLayout(hub);
  await fs.mkdir(layout.dir, { recursive: true, mode: 0o700 });
  const clients = kubeClients(layout.adminKubeconfig);
  const caBundlePem = await fs.readFile(pki.caCert, 'utf8');
  const [crds, created] = await Promise.all([
    installHubCrds(clients, need(state.apiModuleDir, 'OCM API module'), { url: conversionWebhookUrl(hub), caBundlePem }),
    ensureHubBootstrapObjects(clients),
  ]);
  return [crds.applied.length ? `${crds.applied.length} CRDs applied` : 'CRDs current', created ? `${created} bootstrap objects created` : null].filter(Boolean).join('; ');
}

/**
 * The hub's processes: the conversion webhook and the controllers side by
 * side (the CRDs may name the webhook before it answers; only v1beta1 addon
 * requests need it).
 */
async function hubProcessesStep(ctx: LocalContext, state: OcmState, progress: (line: string) => void): Promise<string> {
  const options = { timeoutMs: ctx.options.readyTimeoutMs ?? DEFAULT_TIMEOUT_MS, progress };
  const hub = hubOf(ctx);
  const layout = ocmLayout(hub);
  const cert = await ensureWebhookCertificate(hub, need(ctx.pki.get(hub.name), `PKI of ${hub.name}`), layout);
  const started = await ensureHubProcesses(hub, need(state.binaries, 'OCM binaries'), layout, HUB_COMPONENTS, options);
  return [cert === 'issued' ? 'webhook certificate issued' : null, started.length ? `started ${started.join(', ')}` : 'all running'].filter(Boolean).join('; ');
}

/**
 * The `up` steps that install upstream OCM on a lab whose control planes are
 * ready: binaries and CRD source, the hub (conversion webhook, CRDs, bootstrap
 * identity, controllers), each spoke's klusterlet, and the accept. Every step
 * leaves what is already right alone, so a second `up` restarts nothing.
 */
export function ocmSteps(): Step<LocalContext>[] {
  const state: OcmState = {};
  const timeout = (ctx: LocalContext) => ctx.options.readyTimeoutMs ?? DEFAULT_TIMEOUT_MS;
  return [
    {
      title: 'OCM API module',
      run: async (ctx) => {
        state.binaries = need(ctx.binaries, 'OCM binaries') as unknown as OcmBinaries;
        state.apiModuleDir = await ensureGoModuleSource(OCM_API_MODULE, OCM_API_VERSION);
        return `${ctx.config.ocmVersion}; CRDs from ${OCM_API_MODULE}@${OCM_API_VERSION}`;
      },
    },
    {
      title: 'OCM CRDs and bootstrap identity',
      concurrent: true,
      children: (ctx) => [
        { title: 'hub: OCM CRDs and bootstrap identity', run: async (c) => hubObjectsStep(c, state) },
        ...ctx.clusters
          .filter((cl) => !cl.hub)
          .map((spoke) => ({
            title: `${spoke.name}: agent namespaces and CRDs`,
            run: async () => {
              const prepared = await prepareSpoke(kubeClients(ocmLayout(spoke).adminKubeconfig), need(state.apiModuleDir, 'OCM API module'));
              return prepared.crdsApplied.length || prepared.createdNamespaces ? `${prepared.crdsApplied.length} CRDs applied, ${prepared.createdNamespaces} namespaces created` : 'current';
            },
          })),
      ],
    },
    {
      // Agents register (ManagedCluster + CSR) while the hub controllers start: neither waits for the other.
      title: 'OCM processes',
      concurrent: true,
      children: (ctx) => [
        { title: 'OCM hub', run: async (c, progress) => hubProcessesStep(c, state, progress) },
        ...ctx.clusters
          .filter((cl) => !cl.hub)
          .map((spoke) => ({
            title: `${spoke.name}: klusterlet`,
            run: async (c: LocalContext, progress: (line: string) => void) => {
              const hub = hubOf(c);
              const hubPki = need(c.pki.get(hub.name), `PKI of ${hub.name}`);
              const layout = ocmLayout(spoke);
              const bootstrap = await ensureBootstrapKubeconfig(kubeClients(ocmLayout(hub).adminKubeconfig), hub, await fs.readFile(hubPki.caCert, 'utf8'), layout);
              const agent = await ensureKlusterlet(spoke, need(state.binaries, 'OCM binaries'), layout, { timeoutMs: timeout(c), progress });
              return [bootstrap === 'written' ? `bootstrap kubeconfig for ${hub.apiServerUrl}` : null, agent === 'started' ? 'agent started' : 'agent running'].filter(Boolean).join('; ');
            },
          })),
      ],
    },
    {
      title: 'OCM accept',
      run: async (ctx, progress) => {
        const hub = hubOf(ctx);
        const spokes = ctx.clusters.filter((c) => !c.hub).map((c) => c.name);
        const states = await acceptClusters(kubeClients(ocmLayout(hub).adminKubeconfig), spokes, {
          timeoutMs: timeout(ctx),
          diagnostics: acceptDiagnostics(ctx),
          progress,
        });
        return `${states.map((s) => s.name).join(', ')} accepted, joined, available`;
      },
    },
  ];
}
