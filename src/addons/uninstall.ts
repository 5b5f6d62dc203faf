import type { KubeClient } from '../kube/client.js';
import { collectionPath, type KubeObject } from '../kube/objects.js';
import { allSettledOrThrow, deleteAndWait, labelledObjects, releaseOnHub, waitGone, type RemovalOptions } from '../ocm/removal.js';
import { gatewayRbacObjects, gatewayServingObjects } from './cluster-gateway/hub-install.js';
import { CREDENTIALS_NAMESPACE, GATEWAY_NAMESPACE } from './cluster-gateway/constants.js';
import { PROXY_API, PROXY_CONFIGURATION_NAME, PROXY_NAMESPACE } from './cluster-proxy/constants.js';
import { MSA_NAMESPACE } from './managed-serviceaccount/constants.js';
import { ADDON_API, ADDON_MANAGER_NAMESPACE, ADDON_NAME_LABEL, deployWorkName, WORK_API } from './framework/names.js';
import { addonCrd, LAB_ADDONS, managerObjects } from './install.js';
import { upstreamLeftovers } from './upstream/index.js';
import { removePlacementObjects } from './placements.js';
import { namespace } from '../kube/builders.js';
import { HELD_BY_SPOKE } from '../ocm/uninstall.js';

/**
 * Taking the lab's addons off a lab, the reverse of src/addons/install.ts and
 * the gateway's hub install: agents leave the spokes through the addon
 * framework (ManagedClusterAddOn deleted → its ManifestWork deleted → the work
 * agent removes what it applied), then the hub side goes.
 */

/** Where each addon's agent runs on a spoke (the ManifestWork creates it; the registration agent writes its hub kubeconfig there). */
const AGENT_NAMESPACES = [PROXY_NAMESPACE, MSA_NAMESPACE, GATEWAY_NAMESPACE];

/**
 * Removes the lab's addons from one cluster: its ManagedClusterAddOns are
 * deleted, then this waits until they and their ManifestWorks are gone, i.e.
 * the work agent removed the agents from the spoke. Needs the cluster's
 * klusterlet running. The addon managers create a ManagedClusterAddOn for
 * every accepted cluster, so call it while they are stopped or once the
 * cluster's ManagedCluster is being deleted.
 */
async function removeAddonsFromCluster(hub: KubeClient, cluster: string, options: RemovalOptions, unreachable: boolean): Promise<string[]> {
  const mcas = LAB_ADDONS.map((addon) => ({ apiVersion: ADDON_API, kind: 'ManagedClusterAddOn', metadata: { name: addon, namespace: cluster } }));
  const works = LAB_ADDONS.map((addon) => ({ apiVersion: WORK_API, kind: 'ManifestWork', metadata: { name: deployWorkName(addon), namespace: cluster } }));
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
  return [...new Set(list.items.filter((m) => (LAB_ADDONS as readonly string[]).includes(m.metadata.name)).map((m) => m.metadata.namespace ?? ''))].filter(
    Boolean,
  );
}

/**
 * Everything the lab's addons put on a lab, removed: the managers and the
 * gateway stop first (so nothing recreates what follows), the agents leave
 * every spoke (removeAddonsFromCluster), then the hub side — the
 * ClusterManagementAddOns, ManagedProxyConfiguration, APIService, cluster-scoped
 * RBAC, the addon CRDs, the addons' CSRs and namespaces — and on the spokes any
 * agent namespace left. Idempotent. Returns what it deleted.
 */
export async function uninstallAddons(
  hub: KubeClient,
  spokes: readonly KubeClient[],
  options: RemovalOptions,
  /** Clusters that cannot be reached (`down --force`): their agents stay; the hub lets go of them. */
  unreachable: readonly string[] = [],
): Promise<string[]> {
  const deleted: string[] = [];
  const managers = LAB_ADDONS.flatMap((addon) => managerObjects(addon, ''));
  const deployments = [...managers, ...gatewayServingObjects('')].filter((o) => o.kind === 'Deployment');
  deleted.push(...(await deleteAndWait(hub, deployments, 'stopping the addon managers and the gateway', options)));
  const pods = await labelledObjects(hub, 'v1', 'Pod', `/api/v1/namespaces/${ADDON_MANAGER_NAMESPACE}/pods`, '').catch(() => []);
  await waitGone(hub, pods, 'the addon manager pods', options);

  for (const done of await allSettledOrThrow(
    (await clustersWithAddons(hub)).map((cluster) => removeAddonsFromCluster(hub, cluster, options, unreachable.includes(cluster))),
  ))
    deleted.push(...done);

  // The Placements of their install strategies (helloworld's lives in open-cluster-management, which stays).
  for (const addon of LAB_ADDONS) deleted.push(...(await removePlacementObjects(hub, addon, options)));

  const cmas = LAB_ADDONS.map((addon) => ({ apiVersion: ADDON_API, kind: 'ClusterManagementAddOn', metadata: { name: addon } }));
  const mpc = { apiVersion: PROXY_API, kind: 'ManagedProxyConfiguration', metadata: { name: PROXY_CONFIGURATION_NAME } };
  const crds = (await Promise.all(LAB_ADDONS.map(addonCrd))).filter((c): c is KubeObject => !!c);
  const csrs = (
    await Promise.all(
      LAB_ADDONS.map((addon) =>
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
  // The APIService first: while it points at a gateway that is gone, the aggregator reports the group unavailable.
  const hubSide = [
    ...gatewayServingObjects('').filter((o) => o.kind === 'APIService'),
    ...cmas,
    mpc,
    ...gatewayRbacObjects(),
    ...managers.filter((o) => o.kind !== 'Namespace' && o.kind !== 'Deployment'),
    ...gatewayServingObjects('').filter((o) => o.kind === 'Service'),
    // Upstream's managers (when the lab ran `implementation: upstream`) share our names for the rest.
    ...upstreamLeftovers(),
    ...crds,
    ...csrs,
    ...[ADDON_MANAGER_NAMESPACE, GATEWAY_NAMESPACE, CREDENTIALS_NAMESPACE, PROXY_NAMESPACE].map(namespace),
  ];
  deleted.push(...(await deleteAndWait(hub, hubSide, "removing the addons' hub objects", options)));

  for (const done of await allSettledOrThrow(spokes.map((spoke) => removeAgentNamespaces(spoke, options)))) deleted.push(...done);
  return deleted;
}

/** The addon agents' namespaces left on a spoke (the work agent removes the agents; the namespaces are shared). */
export function removeAgentNamespaces(spoke: KubeClient, options: RemovalOptions): Promise<string[]> {
  return deleteAndWait(spoke, AGENT_NAMESPACES.map(namespace), 'removing addon agent namespaces left on a spoke', options);
}
