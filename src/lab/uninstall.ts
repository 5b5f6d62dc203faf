import { LOCAL_CLUSTER_NAME, type LabConfig } from '../config/index.js';
import { NotReadyError } from '../errors.js';
import { KubeClient } from '../kube/client.js';
import { readyz } from '../kube/readyz.js';
import { removeAgentNamespaces, uninstallAddons } from '../addons/uninstall.js';
import { labOperators } from '../ocm/operators.js';
import { allSettledOrThrow } from '../ocm/removal.js';
import { deregisterCluster, deregisterOnHub, isManagedCluster, removeKlusterlet, uninstallHub } from '../ocm/uninstall.js';
import type { LabCluster, Runtime } from '../runtime/types.js';

export const UNINSTALL_TIMEOUT_MS = 120_000;
/** How long a cluster has to answer GET /readyz before `down` calls it unreachable. */
const ANSWER_TIMEOUT_MS = 10_000;

interface Reached {
  cluster: LabCluster;
  client: KubeClient | null;
  /** Why it cannot be reached; null when it answered. */
  silent: string | null;
}

async function reach(cluster: LabCluster): Promise<Reached> {
  let client: KubeClient;
  try {
    client = await KubeClient.fromKubeconfig(cluster.kubeconfig);
  } catch (err) {
    return { cluster, client: null, silent: `its kubeconfig ${cluster.kubeconfig} cannot be read: ${(err as Error).message}` };
  }
  // A failing credential plugin leaves the cluster as unreachable as a closed port does.
  const answer = await readyz(client.endpoint, ANSWER_TIMEOUT_MS).catch((err: Error) => ({ ok: false, said: err.message }));
  if (answer.ok) return { cluster, client, silent: null };
  client.close();
  return { cluster, client: null, silent: `${client.endpoint.server} does not answer GET /readyz with ok: ${answer.said}` };
}

/**
 * Takes everything `up` installed off the lab's clusters, in the reverse
 * order: the addons (agents leave the spokes while the klusterlets still
 * run), then every spoke's registration and klusterlet, then the hub's OCM.
 * For runtimes whose clusters outlive the lab (existing clusters); nothing to
 * do when the lab is not recorded.
 *
 * Every cluster must answer first: one that does not fails `down`, naming it, unless `force`. With
 * `force` what can be reached is cleaned (the hub lets go of unreachable spokes, releasing what their
 * agents would have) and the rest is returned, one phrase per thing left on a cluster.
 */
export async function uninstallFromClusters(
  runtime: Runtime<unknown>,
  config: LabConfig,
  progress: (line: string) => void = () => undefined,
  force = false,
): Promise<string[]> {
  if (!(await runtime.status(config)).exists) return [];
  const reached = await Promise.all((await runtime.clusters(config)).map(reach));
  const silent = reached.filter((r) => r.silent !== null);
  const closeAll = () => reached.forEach((r) => r.client?.close());
  if (silent.length && !force) {
    closeAll();
    throw new NotReadyError(
      `cannot take the lab's OCM off ${silent.map((r) => r.cluster.name).join(', ')}:\n${silent.map((r) => `  ${r.cluster.name}: ${r.silent}`).join('\n')}`,
      {
        hint:
          "bring the cluster back and run down again, or run 'ocm-lab down --force' to remove the lab anyway " +
          '(what is on a cluster it cannot reach stays there)',
      },
    );
  }
  const left = silent.map((r) => `OCM and the addons on ${r.cluster.name} (${r.silent})`);
  const hub = reached.find((r) => r.cluster.hub);
  if (!hub) throw new Error(`internal: lab '${config.name}' has no hub cluster`);
  const spokes = reached.filter((r) => !r.cluster.hub);
  const live = spokes.filter((r): r is Reached & { client: KubeClient } => r.client !== null);
  const { 'cluster-manager': clusterManagerObjects, klusterlet: klusterletObjects } = await labOperators({ ...config, onProgress: progress });
  const options = { timeoutMs: UNINSTALL_TIMEOUT_MS, progress };
  const attempt = async (what: string, work: () => Promise<unknown>): Promise<void> => {
    if (!force) {
      await work();
      return;
    }
    await work().catch((err: unknown) => {
      left.push(`${what} (${(err as Error).message.split('\n').join('; ')})`);
      progress(`${what}: could not: ${(err as Error).message}`);
    });
  };
  try {
    if (hub.client) {
      const hubClient = hub.client;
      const unreachable = spokes.filter((r) => r.client === null).map((r) => r.cluster.name);
      await attempt('the addons on the hub', () =>
        uninstallAddons(
          hubClient,
          live.map((r) => r.client),
          options,
          unreachable,
        ),
      );
      await attempt('the spokes of the hub', () =>
        allSettledOrThrow(
          spokes.map((s) =>
            s.client
              ? deregisterCluster(hubClient, s.client, s.cluster.name, { ...options, operatorObjects: klusterletObjects })
              : deregisterOnHub(hubClient, s.cluster.name, { ...options, operatorObjects: klusterletObjects }, true),
          ),
        ),
      );
      // The hub joined to itself (local-cluster): deregistered like a spoke, its klusterlet off the hub before the hub's OCM goes.
      if (await isManagedCluster(hubClient, LOCAL_CLUSTER_NAME))
        await attempt(`${LOCAL_CLUSTER_NAME} on the hub`, () =>
          deregisterCluster(hubClient, hubClient, LOCAL_CLUSTER_NAME, { ...options, operatorObjects: klusterletObjects }, true),
        );
      await attempt("OCM's hub on the hub", () => uninstallHub(hubClient, { ...options, operatorObjects: clusterManagerObjects }));
    } else {
      // No hub to let the spokes go: take the agents and the klusterlet off what answers.
      for (const s of live) {
        await attempt(`OCM and the addons on ${s.cluster.name}`, async () => {
          await removeKlusterlet(s.client, s.cluster.name, { ...options, operatorObjects: klusterletObjects });
          await removeAgentNamespaces(s.client, options);
        });
      }
    }
  } finally {
    closeAll();
  }
  return left;
}
