import type { KubeClient } from '../kube/client.js';
import { collectionPath, type KubeObject } from '../kube/objects.js';
import { allSettledOrThrow, deleteAndWait, labelledObjects, releaseOnHub, waitGone, type RemovalOptions } from '../ocm/removal.js';
import { ADDON_API, ADDON_MANAGER_NAMESPACE, ADDON_NAME_LABEL, deployWorkName, WORK_API } from './framework/names.js';
import { addonCrds, managerObjects } from './install.js';
import { builtinAddonNames, builtinAddons } from './registry.js';
import { upstreamLeftovers } from './upstream/index.js';
import { removePlacementObjects } from './placements.js';
import { namespace } from '../kube/builders.js';
import { HELD_BY_SPOKE } from '../ocm/uninstall.js';

/**
 * Taking the lab's addons off a lab, the reverse of src/addons/install.ts and
 * of what each addon adds to the hub (its definition's `hub`): agents leave the
 * spokes through the addon framework (ManagedClusterAddOn deleted → its
 * ManifestWork deleted → the work agent removes what it applied), then the hub
 * side goes. Every built-in addon is removed, whether the lab file named it or not.
 */

/** Where each addon's agent runs on a spoke (the ManifestWork creates it; the registration agent writes its hub kubeconfig there). */
function agentNamespaces(): string[] {
  return builtinAddons().flatMap((a) => a.agentNamespaces ?? []);
}

/** What uninstallAddons deletes by name, before it looks at the hub (the CSRs and the clusters with addons it finds there). */
interface AddonRemoval {
  /** The addons whose ManagedClusterAddOns and ManifestWorks go from each cluster. */
  addons: string[];
  /** Stopped first: the managers and what else runs on the hub (the gateway). */
  workloads: KubeObject[];
  /** The hub side, in deletion order (APIServices first: while one points at a server that is gone, the aggregator reports its group unavailable). */
  hubSide: KubeObject[];
  /** The hub namespaces, deleted last (after the addons' CSRs). */
  hubNamespaces: string[];
  /** On each spoke, the agents' namespaces. */
  agentNamespaces: string[];
}

/** The objects of uninstallAddons, from every built-in addon's definition. */
export async function addonRemoval(): Promise<AddonRemoval> {
  const names = builtinAddonNames();
  const definitions = builtinAddons();
  const managers = names.flatMap((addon) => managerObjects(addon, ''));
  const extraWorkloads = (await Promise.all(definitions.map((d) => d.hub?.workloads?.() ?? []))).flat();
  const extraObjects = (await Promise.all(definitions.map((d) => d.hub?.objects?.() ?? []))).flat();
  const hubNamespaces = [ADDON_MANAGER_NAMESPACE, ...definitions.flatMap((d) => d.hubNamespaces ?? [])];
  const hubSide = [
    ...names.map((addon) => ({ apiVersion: ADDON_API, kind: 'ClusterManagementAddOn', metadata: { name: addon } })),
    ...extraObjects,
    ...managers.filter((o) => o.kind !== 'Namespace' && o.kind !== 'Deployment'),
    // Upstream's managers (when the lab ran `implementation: upstream`) share our names for the rest.
    ...upstreamLeftovers(),
    ...(await Promise.all(names.map(addonCrds))).flat(),
  ];
  return {
    addons: names,
    workloads: [...managers.filter((o) => o.kind === 'Deployment'), ...extraWorkloads],
    hubSide: [...hubSide.filter((o) => o.kind === 'APIService'), ...hubSide.filter((o) => o.kind !== 'APIService')],
    hubNamespaces: [...new Set(hubNamespaces)],
    agentNamespaces: agentNamespaces(),
  };
}

/**
 * Removes the lab's addons from one cluster: its ManagedClusterAddOns are
 * deleted, then this waits until they and their ManifestWorks are gone, i.e.
 * the work agent removed the agents from the spoke. Needs the cluster's
 * klusterlet running. The addon managers create a ManagedClusterAddOn for
 * every accepted cluster, so call it while they are stopped or once the
 * cluster's ManagedCluster is being deleted.
 */
async function removeAddonsFromCluster(hub: KubeClient, cluster: string, options: RemovalOptions, unreachable: boolean): Promise<string[]> {
  const addons = builtinAddonNames();
  const mcas = addons.map((addon) => ({ apiVersion: ADDON_API, kind: 'ManagedClusterAddOn', metadata: { name: addon, namespace: cluster } }));
  const works = addons.map((addon) => ({ apiVersion: WORK_API, kind: 'ManifestWork', metadata: { name: deployWorkName(addon), namespace: cluster } }));
  // A cluster that cannot be reached has no work agent to remove the agents: its works are let go on the hub.
  const release = () => releaseOnHub(hub, cluster, HELD_BY_SPOKE, options.progress);
  const waiting = unreachable ? { ...options, whileWaiting: release } : options;
  const deleted = await deleteAndWait(hub, mcas, `removing addons from ${cluster}`, waiting);
  await waitGone(hub, works, `the addon agents leaving ${cluster} (their ManifestWorks)`, waiting);
  return deleted;
}

/** The clusters that have a ManagedClusterAddOn of one of the lab's addons. */
async function clustersWithAddons(hub: KubeClient): Promise<string[]> {
  const list = await hub.get<{ items: KubeObject[] }>(collectionPath(ADDON_API, 'ManagedClusterAddOn')).catch(() => ({ items: [] as KubeObject[] }));
  const addons: readonly string[] = builtinAddonNames();
  return [...new Set(list.items.filter((m) => addons.includes(m.metadata.name)).map((m) => m.metadata.namespace ?? ''))].filter(Boolean);
}

/**
 * Everything the lab's addons put on a lab, removed: the managers and the
 * gateway stop first (so nothing recreates what follows), the agents leave
 * every spoke (removeAddonsFromCluster), then the hub side (addonRemoval) — the
 * ClusterManagementAddOns, what each addon added (ManagedProxyConfiguration,
 * APIService, cluster-scoped RBAC), the addon CRDs, the addons' CSRs and
 * namespaces — and on the spokes any agent namespace left. Idempotent. Returns what it deleted.
 */
export async function uninstallAddons(
  hub: KubeClient,
  spokes: readonly KubeClient[],
  options: RemovalOptions,
  /** Clusters that cannot be reached (`down --force`): their agents stay; the hub lets go of them. */
  unreachable: readonly string[] = [],
): Promise<string[]> {
  const deleted: string[] = [];
  const removal = await addonRemoval();
  deleted.push(...(await deleteAndWait(hub, removal.workloads, 'stopping the addon managers and the gateway', options)));
  const pods = await labelledObjects(hub, 'v1', 'Pod', `/api/v1/namespaces/${ADDON_MANAGER_NAMESPACE}/pods`, '').catch(() => []);
  await waitGone(hub, pods, 'the addon manager pods', options);

  for (const done of await allSettledOrThrow(
    (await clustersWithAddons(hub)).map((cluster) => removeAddonsFromCluster(hub, cluster, options, unreachable.includes(cluster))),
  ))
    deleted.push(...done);

  // The Placements of their install strategies (helloworld's lives in open-cluster-management, which stays).
  for (const addon of removal.addons) deleted.push(...(await removePlacementObjects(hub, addon, options)));

  const csrs = (
    await Promise.all(
      removal.addons.map((addon) =>
        labelledObjects(
          hub,
          'certificates.k8s.io/v1',
          'CertificateSigningRequest',
          '/apis/certificates.k8s.io/v1/certificatesigningrequests',
          `${ADDON_NAME_LABEL}=${addon}`,
        ).catch(() => []),
      ),
    )
  ).flat();
  const hubSide = [...removal.hubSide, ...csrs, ...removal.hubNamespaces.map(namespace)];
  deleted.push(...(await deleteAndWait(hub, hubSide, "removing the addons' hub objects", options)));

  for (const done of await allSettledOrThrow(spokes.map((spoke) => removeAgentNamespaces(spoke, options)))) deleted.push(...done);
  return deleted;
}

/** The addon agents' namespaces left on a spoke (the work agent removes the agents; the namespaces are shared). */
export function removeAgentNamespaces(spoke: KubeClient, options: RemovalOptions): Promise<string[]> {
  return deleteAndWait(spoke, agentNamespaces().map(namespace), 'removing addon agent namespaces left on a spoke', options);
}
