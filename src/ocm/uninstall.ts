import type { KubeClient } from '../kube/client.js';
import { getOrNull, objectPath, type KubeObject } from '../kube/objects.js';
import { hubBootstrapObjects, OPERATOR_API } from './cluster-manager.js';
import {
  AGENT_ADDON_NAMESPACE,
  AGENT_NAMESPACE,
  CLUSTER_MANAGER_NAME,
  CLUSTER_NAME_LABEL,
  HUB_CONTROLLER_NAMESPACE,
  KLUSTERLET_NAME,
  OPERATOR_NAMESPACE,
} from './constants.js';
import { deleteAndWait, labelledObjects, releaseOnHub, type RemovalOptions } from './removal.js';
import { namespace } from '../kube/builders.js';
import { managedClusterPath } from './accept.js';
import { CLUSTER_INVENTORY_NAMESPACE, clusterProfileCrd, clusterProfileCrdMark } from './clusterprofile.js';

/**
 * Taking OCM off clusters, the reverse of clusteradm init/join/accept: first
 * the custom resources, so the operators remove what they made from them while
 * they still run, then the operators themselves and what stays after them
 * (docs/notes.md#ocm-as-clusteradm-installs-it).
 */
export interface UninstallOptions extends RemovalOptions {
  /** The operator's objects as `up` applied them (operatorManifests of the lab's OCM version). */
  operatorObjects: KubeObject[];
}

const crd = (name: string) => ({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name } });

/**
 * CRDs the klusterlet operator creates on a spoke and leaves there when its
 * Klusterlet is deleted (they may be shared by several klusterlets; ours is the only one).
 */
const SPOKE_CRDS = [
  'appliedmanifestworks.work.open-cluster-management.io',
  'clusterclaims.cluster.open-cluster-management.io',
  'clusterproperties.about.k8s.io',
];

/** The operator's objects in the order to delete them: the Deployment first (it stops reconciling), its CRD and namespace last. */
function operatorObjectsForRemoval(objects: KubeObject[]): KubeObject[] {
  const rank = (o: KubeObject) => (o.kind === 'Deployment' ? 0 : o.kind === 'CustomResourceDefinition' ? 2 : o.kind === 'Namespace' ? 3 : 1);
  return [...objects].sort((a, b) => rank(a) - rank(b));
}

/** What a spoke's agents release on the hub (finalizers of its work agent and addon agents): released by hand when it cannot be reached. */
export const HELD_BY_SPOKE = [
  { apiVersion: 'work.open-cluster-management.io/v1', kind: 'ManifestWork' },
  { apiVersion: 'addon.open-cluster-management.io/v1alpha1', kind: 'ManagedClusterAddOn' },
] as const;

/**
 * Takes one spoke out of the lab: its ManagedCluster is deleted on the hub
 * and gone (the hub's controllers first clean its addons and ManifestWorks,
 * so the agents remove what they applied), its hub namespace and CSRs are
 * gone; on the spoke the Klusterlet is deleted and gone (the operator removes
 * the agents), then the klusterlet operator, the spoke CRDs and the agent
 * namespaces. Idempotent. Returns what it deleted.
 */
export async function deregisterCluster(hub: KubeClient, spoke: KubeClient, name: string, options: UninstallOptions, onHub = false): Promise<string[]> {
  return [...(await deregisterOnHub(hub, name, options)), ...(await removeKlusterlet(spoke, name, options, onHub))];
}

/**
 * The hub's half of deregisterCluster. For a spoke that cannot be reached (`unreachable`), what its
 * agents would have released on the hub (ManifestWorks, ManagedClusterAddOns) is deleted with its
 * finalizers removed, so the hub's controllers can finish the ManagedCluster; the spoke keeps what
 * was on it.
 */
export async function deregisterOnHub(hub: KubeClient, name: string, options: UninstallOptions, unreachable = false): Promise<string[]> {
  const deleted: string[] = [];
  const release = () => releaseOnHub(hub, name, HELD_BY_SPOKE, options.progress);
  if (unreachable) deleted.push(...(await release()));
  const mc = { apiVersion: 'cluster.open-cluster-management.io/v1', kind: 'ManagedCluster', metadata: { name } };
  deleted.push(...(await deleteAndWait(hub, [mc], `deregistering ${name} on the hub`, unreachable ? { ...options, whileWaiting: release } : options)));
  const csrs = await labelledObjects(
    hub,
    'certificates.k8s.io/v1',
    'CertificateSigningRequest',
    '/apis/certificates.k8s.io/v1/certificatesigningrequests',
    `${CLUSTER_NAME_LABEL}=${name}`,
  ).catch(() => []);
  deleted.push(...(await deleteAndWait(hub, [...csrs, namespace(name)], `removing ${name}'s namespace and CSRs on the hub`, options)));
  return deleted;
}

/**
 * The spoke's half of deregisterCluster: the Klusterlet, then the klusterlet operator, OCM's CRDs and namespaces.
 * On the hub joined to itself (`onHub`), the operators' namespace stays for the cluster-manager operator, which
 * uninstallHub removes after it.
 */
export async function removeKlusterlet(spoke: KubeClient, name: string, options: UninstallOptions, onHub = false): Promise<string[]> {
  const deleted: string[] = [];
  const klusterlet = { apiVersion: OPERATOR_API, kind: 'Klusterlet', metadata: { name: KLUSTERLET_NAME } };
  // Only while the Klusterlet CRD is served; without it there is no Klusterlet (and a 404 says so).
  deleted.push(...(await deleteAndWait(spoke, [klusterlet], `removing the Klusterlet of ${name}`, options)));
  deleted.push(
    ...(await deleteAndWait(
      spoke,
      [
        ...operatorObjectsForRemoval(options.operatorObjects).filter((o) => !(onHub && o.kind === 'Namespace' && o.metadata.name === OPERATOR_NAMESPACE)),
        ...SPOKE_CRDS.map(crd),
        namespace(AGENT_NAMESPACE),
        namespace(AGENT_ADDON_NAMESPACE),
        ...(onHub ? [] : [namespace(OPERATOR_NAMESPACE)]),
      ],
      `removing the klusterlet operator, OCM's CRDs and namespaces from ${name}`,
      options,
    )),
  );
  return deleted;
}

/**
 * `clusteradm clean` on the hub: the ClusterManager deleted and gone (the
 * operator removes the hub's controllers, CRDs, webhooks and
 * open-cluster-management-hub), then the cluster-manager operator, its
 * clustermanagers CRD, the bootstrap identity and the namespaces. Run it after
 * every spoke was deregistered. Idempotent. Returns what it deleted.
 */
export async function uninstallHub(hub: KubeClient, options: UninstallOptions): Promise<string[]> {
  const deleted: string[] = [];
  const cm = { apiVersion: OPERATOR_API, kind: 'ClusterManager', metadata: { name: CLUSTER_MANAGER_NAME } };
  // The ClusterProfile inventory namespace (its binding, profiles and synced tokens with it). OCM's operator
  // leaves the CRD; it goes only where the lab installed it (its mark says so): another inventory provider's stays.
  deleted.push(...(await deleteAndWait(hub, [namespace(CLUSTER_INVENTORY_NAMESPACE)], 'removing the ClusterProfile inventory namespace', options)));
  if (await getOrNull<KubeObject>(hub, objectPath(clusterProfileCrdMark()))) {
    deleted.push(...(await deleteAndWait(hub, [clusterProfileCrd(), clusterProfileCrdMark()], 'removing the ClusterProfile CRD the lab installed', options)));
  }
  deleted.push(...(await deleteAndWait(hub, [cm], 'removing the ClusterManager', options)));
  deleted.push(
    ...(await deleteAndWait(
      hub,
      [...hubBootstrapObjects(), ...operatorObjectsForRemoval(options.operatorObjects), namespace(HUB_CONTROLLER_NAMESPACE), namespace(OPERATOR_NAMESPACE)],
      'removing the cluster-manager operator, its CRD, the bootstrap identity and the namespaces',
      options,
    )),
  );
  return deleted;
}

/** Whether the hub has ManagedCluster `name` (false where OCM's CRDs are gone). */
export async function isManagedCluster(hub: KubeClient, name: string): Promise<boolean> {
  return (await getOrNull(hub, managedClusterPath(name)).catch(() => null)) !== null;
}
