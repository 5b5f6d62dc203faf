import type { BuiltinAddon } from '../builtin.js';
import { ADDON_MANAGER_NAMESPACE } from '../framework/names.js';
import { MANAGED_SERVICEACCOUNT, MSA_GROUP, MSA_NAMESPACE } from './constants.js';

/** managed-serviceaccount as the lab installs it (its line in addons/registry.ts). */
export const managedServiceAccountBuiltin: BuiltinAddon = {
  name: MANAGED_SERVICEACCOUNT,
  crds: ['managedserviceaccounts.yaml'],
  managerRules: [
    { apiGroups: [MSA_GROUP], resources: ['managedserviceaccounts', 'managedserviceaccounts/status'], verbs: ['*'] },
    // managed-serviceaccount's ClusterProfile credential sync and the access providers the lab writes.
    { apiGroups: ['multicluster.x-k8s.io'], resources: ['clusterprofiles'], verbs: ['get', 'list', 'watch'] },
    { apiGroups: ['multicluster.x-k8s.io'], resources: ['clusterprofiles/status'], verbs: ['get', 'update', 'patch'] },
  ],
  definition: (_flags, log) => import('./addon.js').then((m) => m.managedServiceAccountAddon(log)),
  // managed-serviceaccount v0.10.0's chart: agentInstallAll (default true) → Placement global, rollout All.
  install: { type: 'Placements', placements: [{ name: 'global', namespace: ADDON_MANAGER_NAMESPACE, rolloutStrategy: { type: 'All' } }] },
  // Its chart's Placement also keeps unreachable clusters.
  placementSpec: {
    tolerations: [
      { key: 'cluster.open-cluster-management.io/unreachable', operator: 'Equal' },
      { key: 'cluster.open-cluster-management.io/unavailable', operator: 'Equal' },
    ],
  },
  agentNamespaces: [MSA_NAMESPACE],
};
