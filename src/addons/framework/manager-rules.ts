/**
 * What the framework's AddonManager does on the hub, whichever addon it runs: the addon API and
 * AddOnDeploymentConfigs, ManifestWorks, ManagedClusters, Placements and their decisions, approving its agents' CSRs
 * (kube-apiserver-client only) and granting its agents hub permissions in cluster namespaces
 * (hence `bind`/`escalate` on Roles).
 */
export const FRAMEWORK_MANAGER_RULES = [
  {
    apiGroups: ['addon.open-cluster-management.io'],
    resources: ['clustermanagementaddons', 'managedclusteraddons', 'managedclusteraddons/status', 'clustermanagementaddons/status'],
    verbs: ['*'],
  },
  { apiGroups: ['addon.open-cluster-management.io'], resources: ['addondeploymentconfigs'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: ['work.open-cluster-management.io'], resources: ['manifestworks'], verbs: ['*'] },
  { apiGroups: ['cluster.open-cluster-management.io'], resources: ['managedclusters'], verbs: ['get', 'list', 'watch'] },
  // installStrategy Placements: which clusters the Placements decide; the ManagedClusterAddOns it creates are owned by the CMA.
  { apiGroups: ['cluster.open-cluster-management.io'], resources: ['placements', 'placementdecisions'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: ['addon.open-cluster-management.io'], resources: ['clustermanagementaddons/finalizers'], verbs: ['update'] },
  { apiGroups: ['certificates.k8s.io'], resources: ['certificatesigningrequests'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: ['certificates.k8s.io'], resources: ['certificatesigningrequests/approval'], verbs: ['update'] },
  { apiGroups: ['certificates.k8s.io'], resources: ['signers'], resourceNames: ['kubernetes.io/kube-apiserver-client'], verbs: ['approve'] },
  {
    apiGroups: ['rbac.authorization.k8s.io'],
    resources: ['roles', 'rolebindings'],
    verbs: ['get', 'list', 'watch', 'create', 'update', 'delete', 'bind', 'escalate'],
  },
];
