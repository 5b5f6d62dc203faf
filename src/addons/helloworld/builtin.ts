import { labelledObjects } from '../../ocm/removal.js';
import type { BuiltinAddon } from '../builtin.js';
import { HELLOWORLD, HELLOWORLD_NAMESPACE, SYNCED_FROM_HUB_LABEL } from './constants.js';

/** Where upstream's helloworld example (addon-framework v1.2.0, kustomize) puts its Placement and binding. */
const HELLOWORLD_PLACEMENT_NAMESPACE = 'open-cluster-management';

/**
 * helloworld as the lab installs it (its line in addons/registry.ts): no CRD, and not in the
 * default set; `addon enable|disable` install and remove it cluster by cluster.
 */
export const helloworldBuiltin: BuiltinAddon = {
  name: HELLOWORLD,
  definition: () => import('./addon.js').then((m) => m.helloworldAddon()),
  // addon-framework v1.2.0's helloworld example: Placement global in open-cluster-management.
  install: { type: 'Placements', placements: [{ name: 'global', namespace: HELLOWORLD_PLACEMENT_NAMESPACE }] },
  placementSpec: { predicates: [{ requiredClusterSelector: { labelSelector: {} } }] },
  enabledPerCluster: true,
  // No agentNamespaces: its agent runs in the klusterlet's addon namespace, which is not ours to remove.
  // Upstream's example removes the copies in a pre-delete job.
  clusterLeftovers: {
    stays: `the ConfigMaps labelled ${SYNCED_FROM_HUB_LABEL} in ${HELLOWORLD_NAMESPACE}`,
    title: 'ConfigMap copies',
    async find(spoke) {
      const { copiesConfigMap } = await import('./copier.js');
      // kube-root-ca.crt is never a copy (an older agent may have labelled it; the cluster would recreate it at once).
      const labelled = await labelledObjects(spoke, 'v1', 'ConfigMap', `/api/v1/namespaces/${HELLOWORLD_NAMESPACE}/configmaps`, SYNCED_FROM_HUB_LABEL);
      return labelled.filter((c) => copiesConfigMap(c.metadata.name));
    },
  },
};
