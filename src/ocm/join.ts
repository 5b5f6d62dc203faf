import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import YAML from 'yaml';
import type { ClusterPlan } from '../lab/plan.js';
import { renderKubeconfig } from '../kube/kubeconfig.js';
import { writeSecretFile } from '../pki/index.js';
import { AGENT_ADDON_NAMESPACE, AGENT_NAMESPACE, BOOTSTRAP_SERVICE_ACCOUNT, BOOTSTRAP_TOKEN_SECONDS, HUB_BOOTSTRAP_NAMESPACE, PORTS } from './constants.js';
import { ensureCrds, readCrds, SPOKE_CRD_FILES } from './crds.js';
import { ensureExists, type KubeClients } from './kube.js';
import type { OcmLayout } from './layout.js';
import { klusterletSpec, type OcmBinaries } from './processes.js';
import { answers200, ensureProcess } from './supervise.js';

/** What a spoke needs before its agent starts: the agent namespaces and the two spoke CRDs. */
export async function prepareSpoke(spoke: KubeClients, apiModuleDir: string): Promise<{ createdNamespaces: number; crdsApplied: string[] }> {
  let createdNamespaces = 0;
  for (const name of [AGENT_NAMESPACE, AGENT_ADDON_NAMESPACE]) {
    if ((await ensureExists(spoke, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } })) === 'created') createdNamespaces += 1;
  }
  const { applied } = await ensureCrds(spoke, await readCrds(apiModuleDir, SPOKE_CRD_FILES));
  return { createdNamespaces, crdsApplied: applied };
}

/** The `exp` claim of a JWT, in ms since the epoch; null when the token carries none. */
export function tokenExpiry(token: string): number | null {
  const payload = token.split('.')[1];
  if (!payload) return null;
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { exp?: unknown };
    return typeof claims.exp === 'number' ? claims.exp * 1000 : null;
  } catch {
    return null;
  }
}

interface KubeconfigDoc {
  clusters?: { cluster?: { server?: string; 'certificate-authority-data'?: string } }[];
  users?: { user?: { token?: string } }[];
}

/** True when the existing bootstrap kubeconfig already names this hub and CA and its token has time left. */
export function bootstrapKubeconfigIsCurrent(text: string | null, hubServer: string, hubCaPem: string, now = Date.now()): boolean {
  if (!text) return false;
  let doc: KubeconfigDoc;
  try {
    doc = (YAML.parse(text) as KubeconfigDoc | null) ?? {};
  } catch {
    return false;
  }
  const cluster = doc.clusters?.[0]?.cluster;
  const token = doc.users?.[0]?.user?.token;
  if (!cluster || !token) return false;
  if (cluster.server !== hubServer) return false;
  if (Buffer.from(cluster['certificate-authority-data'] ?? '', 'base64').toString('utf8') !== hubCaPem) return false;
  const exp = tokenExpiry(token);
  return exp !== null && exp - now > (BOOTSTRAP_TOKEN_SECONDS * 1000) / 10;
}

/**
 * Writes the spoke's bootstrap kubeconfig: the hub address reachable from the
 * spoke's VPC, the hub CA, and a token of the bootstrap ServiceAccount
 * (TokenRequest, as clusteradm does). An existing, still valid one is kept,
 * so the agent is not disturbed by a second `up`.
 */
export async function ensureBootstrapKubeconfig(hub: KubeClients, hubPlan: ClusterPlan, hubCaPem: string, layout: OcmLayout): Promise<'written' | 'kept'> {
  const existing = await fs.readFile(layout.bootstrapKubeconfig, 'utf8').catch(() => null);
  if (bootstrapKubeconfigIsCurrent(existing, hubPlan.apiServerUrl, hubCaPem)) return 'kept';
  const request = await hub.core.createNamespacedServiceAccountToken({
    name: BOOTSTRAP_SERVICE_ACCOUNT,
    namespace: HUB_BOOTSTRAP_NAMESPACE,
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences: [], expirationSeconds: BOOTSTRAP_TOKEN_SECONDS } },
  });
  const token = request.status?.token;
  if (!token) throw new Error(`the hub returned no token for ServiceAccount ${HUB_BOOTSTRAP_NAMESPACE}/${BOOTSTRAP_SERVICE_ACCOUNT}`);
  await fs.mkdir(layout.dir, { recursive: true, mode: 0o700 });
  await writeSecretFile(layout.bootstrapKubeconfig, renderKubeconfig([{ name: 'hub', server: hubPlan.apiServerUrl, caPem: hubCaPem, token }]));
  return 'written';
}

/** The agent ID, generated once per spoke and kept (upstream uses the Klusterlet's UID). */
export async function ensureAgentId(layout: OcmLayout): Promise<string> {
  const existing = (await fs.readFile(layout.agentIdFile, 'utf8').catch(() => '')).trim();
  if (existing) return existing;
  const id = crypto.randomUUID();
  await fs.mkdir(layout.dir, { recursive: true, mode: 0o700 });
  await fs.writeFile(layout.agentIdFile, `${id}\n`, { mode: 0o644 });
  return id;
}

/** Starts the spoke's klusterlet agent unless it runs already. */
export async function ensureKlusterlet(
  spoke: ClusterPlan,
  binaries: Pick<OcmBinaries, 'registration-operator'>,
  layout: OcmLayout,
  options: { timeoutMs: number; progress?: (line: string) => void },
): Promise<'running' | 'started'> {
  await fs.mkdir(layout.hubKubeconfigDir, { recursive: true, mode: 0o700 });
  const spec = klusterletSpec(spoke, binaries, layout, await ensureAgentId(layout));
  return ensureProcess(spec, () => answers200(`https://${spoke.address}:${PORTS.klusterletAgent}/healthz`), options);
}
