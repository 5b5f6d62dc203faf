import { ocmImage } from '../images/catalogue.js';
import type { KubeClient } from '../kube/client.js';
import { kubeconfigContext, renderKubeconfig, type KubeconfigContext } from '../kube/kubeconfig.js';
import { applyObject, conditionOf, fromBase64, getOrNull, toBase64, type KubeObject } from '../kube/objects.js';
import { waitUntil } from '../kube/wait.js';
import { OPERATOR_API } from './cluster-manager.js';
import {
  AGENT_DEPLOYMENTS,
  AGENT_NAMESPACE,
  BOOTSTRAP_HUB_KUBECONFIG_SECRET,
  BOOTSTRAP_SERVICE_ACCOUNT,
  BOOTSTRAP_TOKEN_SECONDS,
  HUB_BOOTSTRAP_NAMESPACE,
  KLUSTERLET_NAME,
} from './constants.js';
import { applyOperator, deploymentSummary, type InstallProgress } from './operator-install.js';
import { namespace } from '../kube/builders.js';
import { componentGateList, gateComponents, type FeatureGateSettings } from '../config/feature-gates.js';

/** Each agent's `featureGates` (registrationConfiguration, workConfiguration), as `clusteradm join --feature-gates` sets them. */
function klusterletGateConfigurations(ocmVersion: string, settings: FeatureGateSettings | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [component, known] of gateComponents(ocmVersion, 'klusterlet')) {
    const featureGates = componentGateList(known, settings ?? {});
    if (featureGates) out[`${component}Configuration`] = { featureGates };
  }
  return out;
}

/** The Klusterlet clusteradm join creates (Default mode), with every image at the lab's OCM version and the lab's klusterlet gates. */
export function klusterletObject(clusterName: string, ownServer: string, ocmVersion: string, featureGates?: FeatureGateSettings): KubeObject {
  return {
    apiVersion: OPERATOR_API,
    kind: 'Klusterlet',
    metadata: { name: KLUSTERLET_NAME },
    spec: {
      clusterName,
      namespace: AGENT_NAMESPACE,
      deployOption: { mode: 'Default' },
      registrationImagePullSpec: ocmImage('registration', ocmVersion),
      workImagePullSpec: ocmImage('work', ocmVersion),
      imagePullSpec: ocmImage('registration-operator', ocmVersion),
      externalServerURLs: [{ url: ownServer }],
      ...klusterletGateConfigurations(ocmVersion, featureGates),
    },
  };
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

/** True when the existing bootstrap kubeconfig already names this hub and CA and its token has time left. */
export function bootstrapKubeconfigIsCurrent(text: string | null, hubServer: string, hubCaPem: string, now = Date.now()): boolean {
  if (!text) return false;
  let hub: KubeconfigContext;
  try {
    hub = kubeconfigContext(text, { source: BOOTSTRAP_HUB_KUBECONFIG_SECRET, dir: '/' });
  } catch {
    return false;
  }
  const token = hub.token;
  if (!token || hub.server !== hubServer || hub.caPem !== hubCaPem) return false;
  const exp = tokenExpiry(token);
  return exp !== null && exp - now > (BOOTSTRAP_TOKEN_SECONDS * 1000) / 10;
}

/**
 * Secret `open-cluster-management-agent/bootstrap-hub-kubeconfig`: the hub
 * address the spoke's VPC reaches, the hub CA and a token of the bootstrap
 * ServiceAccount (TokenRequest, as clusteradm does). A still valid one is
 * kept, so a second `up` does not disturb the agent.
 */
async function ensureBootstrapSecret(spoke: KubeClient, hub: KubeClient, hubServer: string, hubCaPem: string): Promise<'written' | 'kept'> {
  const path = `/api/v1/namespaces/${AGENT_NAMESPACE}/secrets/${BOOTSTRAP_HUB_KUBECONFIG_SECRET}`;
  const existing = await getOrNull<KubeObject & { data?: Record<string, string> }>(spoke, path);
  if (bootstrapKubeconfigIsCurrent(existing?.data?.kubeconfig ? fromBase64(existing.data.kubeconfig) : null, hubServer, hubCaPem)) return 'kept';
  const request = await hub.post<{ status?: { token?: string } }>(
    `/api/v1/namespaces/${HUB_BOOTSTRAP_NAMESPACE}/serviceaccounts/${BOOTSTRAP_SERVICE_ACCOUNT}/token`,
    {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { audiences: [], expirationSeconds: BOOTSTRAP_TOKEN_SECONDS },
    },
  );
  const token = request.status?.token;
  if (!token) throw new Error(`the hub returned no token for ServiceAccount ${HUB_BOOTSTRAP_NAMESPACE}/${BOOTSTRAP_SERVICE_ACCOUNT}`);
  await applyObject(spoke, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: BOOTSTRAP_HUB_KUBECONFIG_SECRET, namespace: AGENT_NAMESPACE },
    type: 'Opaque',
    data: { kubeconfig: toBase64(renderKubeconfig([{ name: 'hub', server: hubServer, caPem: hubCaPem, token }])) },
  });
  return 'written';
}

export interface JoinOptions extends InstallProgress {
  clusterName: string;
  /** The hub's API server as the spoke's pods reach it. */
  hubServer: string;
  hubCaPem: string;
  /** The spoke's own API server URL (the Klusterlet's externalServerURLs). */
  ownServer: string;
  ocmVersion: string;
  operatorObjects: KubeObject[];
  /** The lab's `featureGates.klusterlet`. */
  featureGates?: FeatureGateSettings;
}

/**
 * `clusteradm join` on a spoke: the agent namespace with the bootstrap hub
 * kubeconfig, the klusterlet operator (upstream's kustomization) and a
 * Klusterlet. The agent then registers with the hub by itself; accepting it is
 * the hub's side (accept.ts).
 */
export async function joinCluster(spoke: KubeClient, hub: KubeClient, options: JoinOptions): Promise<string[]> {
  const changed: string[] = [];
  if ((await applyObject(spoke, namespace(AGENT_NAMESPACE))) === 'created') changed.push(`namespace ${AGENT_NAMESPACE} created`);
  if ((await ensureBootstrapSecret(spoke, hub, options.hubServer, options.hubCaPem)) === 'written')
    changed.push(`bootstrap kubeconfig for ${options.hubServer}`);
  changed.push(...(await applyOperator(spoke, options.operatorObjects, 'klusterlets.operator.open-cluster-management.io', options.timeoutMs)));
  const result = await applyObject(spoke, klusterletObject(options.clusterName, options.ownServer, options.ocmVersion, options.featureGates));
  if (result !== 'unchanged') changed.push(`Klusterlet ${result}`);
  if (await moveClientConfig(hub, options.clusterName, options.ownServer, options.timeoutMs))
    changed.push(`ManagedCluster's client config moved to ${options.ownServer}`);
  return changed;
}

/**
 * The spoke's API server URL in its ManagedCluster, when the spoke's address changed (a kind node
 * that Docker restarted with another address). The registration agent writes the Klusterlet's
 * externalServerURLs there only while the number of URLs changes (OCM v1.2.1,
 * creating_controller.go), never a changed one, so the hub would keep the old address for good.
 * Only a cluster with one client config is moved: more are the user's.
 */
async function moveClientConfig(hub: KubeClient, clusterName: string, ownServer: string, timeoutMs: number): Promise<boolean> {
  const path = `/apis/cluster.open-cluster-management.io/v1/managedclusters/${clusterName}`;
  const cluster = (await getOrNull<KubeObject>(hub, path)) as { spec?: { managedClusterClientConfigs?: { url: string; caBundle?: string }[] } } | null;
  const configs = cluster?.spec?.managedClusterClientConfigs ?? [];
  if (configs.length !== 1 || configs[0]!.url === ownServer) return false;
  // The hub's admission webhook for ManagedClusters is a pod: after a restart of the hub's node it may not answer yet.
  await waitUntil(
    async () => {
      await hub.mergePatch(path, { spec: { managedClusterClientConfigs: [{ ...configs[0], url: ownServer }] } });
      return true;
    },
    { timeoutMs, intervalMs: 2_000, what: `ManagedCluster ${clusterName}'s client config moved to ${ownServer}` },
  );
  return true;
}

/**
 * Waits until the Klusterlet says its agents are Available. The work agent
 * starts only after the registration agent got its hub credentials, so a
 * cluster can be accepted and joined while ManifestWorks are not yet applied.
 */
export async function waitForKlusterlet(spoke: KubeClient, options: InstallProgress & { clusterName: string }): Promise<void> {
  await waitUntil(
    async () => {
      const k = await getOrNull<KubeObject>(spoke, `/apis/${OPERATOR_API}/klusterlets/${KLUSTERLET_NAME}`);
      const available = conditionOf(k, 'Available');
      if (available?.status === 'True') return true;
      options.progress(
        `${options.clusterName}: Klusterlet Available is ` +
          `${available ? `${available.status} (${available.reason}${available.message ? `: ${available.message}` : ''})` : 'not reported yet'}`,
      );
      return undefined;
    },
    {
      timeoutMs: options.timeoutMs,
      what: `the Klusterlet of ${options.clusterName} to be Available`,
      report: async () => deploymentSummary(spoke, AGENT_NAMESPACE, AGENT_DEPLOYMENTS),
    },
  );
}
