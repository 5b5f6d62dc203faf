import type { LabConfig } from '../config/index.js';
import { KubeClient } from '../kube/client.js';
import { uninstallAddons } from '../addons/uninstall.js';
import { labOperators } from '../ocm/operators.js';
import { allSettledOrThrow } from '../ocm/removal.js';
import { deregisterCluster, uninstallHub } from '../ocm/uninstall.js';
import type { Runtime } from '../runtime/types.js';

export const UNINSTALL_TIMEOUT_MS = 120_000;

/**
 * Takes everything `up` installed off the lab's clusters, in the reverse
 * order: the addons (agents leave the spokes while the klusterlets still
 * run), then every spoke's registration and klusterlet, then the hub's OCM.
 * For runtimes whose clusters outlive the lab (existing clusters); nothing to
 * do when the lab is not recorded.
 */
export async function uninstallFromClusters(runtime: Runtime<unknown>, config: LabConfig, progress: (line: string) => void = () => undefined): Promise<void> {
  if (!(await runtime.status(config)).exists) return;
  const clusters = await runtime.clusters(config);
  const hub = clusters.find((c) => c.hub);
  if (!hub) throw new Error(`internal: lab '${config.name}' has no hub cluster`);
  const spokes = clusters.filter((c) => !c.hub);
  const { 'cluster-manager': clusterManagerObjects, klusterlet: klusterletObjects } = await labOperators({ ...config, onProgress: progress });
  const hubClient = await KubeClient.fromKubeconfig(hub.kubeconfig);
  const spokeClients = await Promise.all(spokes.map((s) => KubeClient.fromKubeconfig(s.kubeconfig)));
  try {
    const options = { timeoutMs: UNINSTALL_TIMEOUT_MS, progress };
    await uninstallAddons(hubClient, spokeClients, options);
    await allSettledOrThrow(
      spokes.map((spoke, i) => deregisterCluster(hubClient, spokeClients[i]!, spoke.name, { ...options, operatorObjects: klusterletObjects })),
    );
    await uninstallHub(hubClient, { ...options, operatorObjects: clusterManagerObjects });
  } finally {
    hubClient.close();
    for (const c of spokeClients) c.close();
  }
}
