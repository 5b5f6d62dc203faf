import fs from 'node:fs/promises';
import path from 'node:path';
import type { ClusterPlan } from '../lab/plan.js';
import { ensureBinaries, ensureGoModuleSource, OCM_BINARIES } from '../provision/index.js';
import { logTail } from '../runtime/local/process.js';
import type { LocalContext } from '../runtime/local/runtime.js';
import type { Step } from '../runtime/types.js';
import { acceptClusters, type AcceptDiagnostics } from './accept.js';
import { KLUSTERLET_COMPONENT } from './constants.js';
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
      title: 'OCM binaries',
      run: async (ctx, progress) => {
        const found = await ensureBinaries([...OCM_BINARIES], {
          binDir: ctx.options.binDir,
          allowDownload: ctx.options.allowDownload,
          ocmVersion: ctx.config.ocmVersion,
          onProgress: progress,
        });
        state.binaries = found as unknown as OcmBinaries;
        state.apiModuleDir = await ensureGoModuleSource(OCM_API_MODULE, OCM_API_VERSION);
        return `${ctx.config.ocmVersion}; CRDs from ${OCM_API_MODULE}@${OCM_API_VERSION}`;
      },
    },
    {
      title: 'OCM hub',
      run: async (ctx, progress) => {
        const hub = hubOf(ctx);
        const pki = need(ctx.pki.get(hub.name), `PKI of ${hub.name}`);
        const binaries = need(state.binaries, 'OCM binaries');
        const layout = ocmLayout(hub);
        const options = { timeoutMs: timeout(ctx), progress };
        await fs.mkdir(layout.dir, { recursive: true, mode: 0o700 });
        const cert = await ensureWebhookCertificate(hub, pki, layout);
        const started = await ensureHubProcesses(hub, binaries, layout, ['addon-webhook'], options);
        const clients = kubeClients(layout.adminKubeconfig);
        const caBundlePem = await fs.readFile(pki.caCert, 'utf8');
        const [crds] = await Promise.all([
          installHubCrds(clients, need(state.apiModuleDir, 'OCM API module'), { url: conversionWebhookUrl(hub), caBundlePem }),
          ensureHubBootstrapObjects(clients),
        ]);
        started.push(...(await ensureHubProcesses(hub, binaries, layout, ['registration-controller', 'addon-manager', 'placement-controller'], options)));
        const parts = [
          crds.applied.length ? `${crds.applied.length} CRDs applied` : 'CRDs current',
          cert === 'issued' ? 'webhook certificate issued' : null,
          started.length ? `started ${started.join(', ')}` : 'all running',
        ];
        return parts.filter(Boolean).join('; ');
      },
    },
    {
      title: 'OCM join',
      concurrent: true,
      children: (ctx) =>
        ctx.clusters
          .filter((c) => !c.hub)
          .map((spoke) => ({
            title: `${spoke.name}: klusterlet`,
            run: async (c, progress) => {
              const hub = hubOf(c);
              const hubPki = need(c.pki.get(hub.name), `PKI of ${hub.name}`);
              const layout = ocmLayout(spoke);
              const prepared = await prepareSpoke(kubeClients(layout.adminKubeconfig), need(state.apiModuleDir, 'OCM API module'));
              const bootstrap = await ensureBootstrapKubeconfig(kubeClients(ocmLayout(hub).adminKubeconfig), hub, await fs.readFile(hubPki.caCert, 'utf8'), layout);
              const agent = await ensureKlusterlet(spoke, need(state.binaries, 'OCM binaries'), layout, { timeoutMs: timeout(c), progress });
              const parts = [
                prepared.crdsApplied.length ? `${prepared.crdsApplied.length} CRDs applied` : null,
                bootstrap === 'written' ? `bootstrap kubeconfig for ${hub.apiServerUrl}` : null,
                agent === 'started' ? 'agent started' : 'agent running',
              ];
              return parts.filter(Boolean).join('; ');
            },
          })),
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
