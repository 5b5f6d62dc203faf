import type { KubeObject } from '../../kube/objects.js';
import { upstreamHubObjects } from './hub-objects.js';
import { UPSTREAM_ADDONS } from './names.js';

/** The CRDs only upstream brings (ours installs managedproxyconfigurations and managedserviceaccounts too). */
const UPSTREAM_ONLY_CRDS = ['managedproxyserviceresolvers.proxy.open-cluster-management.io'];

/**
 * What upstream's install leaves on the hub that ocm-lab's own uninstall
 * (src/addons/uninstall.ts) does not already remove by name or with a
 * namespace: the cluster-scoped RBAC of upstream's managers and the CRDs only
 * upstream has. Safe to delete on a lab that never ran upstream (absent = done).
 */
export function upstreamLeftovers(): KubeObject[] {
  const cluster = UPSTREAM_ADDONS.flatMap((a) => upstreamHubObjects(a)).filter((o) => o.kind === 'ClusterRole' || o.kind === 'ClusterRoleBinding');
  const seen = new Set<string>();
  const unique = cluster.filter((o) => {
    const key = `${o.kind}/${o.metadata.name}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  const crds = UPSTREAM_ONLY_CRDS.map((name) => ({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name } }));
  return [...unique, ...crds];
}
