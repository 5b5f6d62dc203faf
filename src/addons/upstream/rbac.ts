import type { PolicyRule } from '../../kube/builders.js';

/** Every list below is the set of permissions upstream's chart grants its manager (a fact, written here in our own form). */
export type Rule = PolicyRule;

const READ = ['get', 'list', 'watch'];
const ALL = ['*'];

const rule = (apiGroups: string[], resources: string[], verbs: string[], resourceNames?: string[]): Rule => ({
  apiGroups,
  resources,
  verbs,
  ...(resourceNames ? { resourceNames } : {}),
});

/** cluster-proxy v0.10.0's manager on the hub (charts/cluster-proxy/templates/clusterrole.yaml, impersonation on). */
export const CLUSTER_PROXY_MANAGER_CLUSTER_RULES: Rule[] = [
  rule(['cluster.open-cluster-management.io'], ['managedclusters', 'managedclustersets'], READ),
  rule(
    ['addon.open-cluster-management.io'],
    [
      'clustermanagementaddons',
      'managedclusteraddons',
      'clustermanagementaddons/status',
      'clustermanagementaddons/finalizers',
      'managedclusteraddons/status',
      'managedclusteraddons/finalizers',
    ],
    ALL,
  ),
  rule(['addon.open-cluster-management.io'], ['addondeploymentconfigs'], READ),
  rule(
    ['proxy.open-cluster-management.io'],
    [
      'managedproxyconfigurations',
      'managedproxyconfigurations/status',
      'managedproxyconfigurations/finalizers',
      'managedproxyserviceresolvers',
      'managedproxyserviceresolvers/status',
      'managedproxyserviceresolvers/finalizers',
    ],
    ALL,
  ),
  rule(
    ['certificates.k8s.io'],
    ['certificatesigningrequests', 'certificatesigningrequests/approval', 'certificatesigningrequests/status'],
    [...READ, 'update', 'patch'],
  ),
  rule(['certificates.k8s.io'], ['signers'], ALL, ['open-cluster-management.io/proxy-agent-signer', 'kubernetes.io/kube-apiserver-client']),
  rule([''], ['namespaces', 'secrets', 'pods', 'pods/portforward', 'configmaps'], ALL),
  rule([''], ['serviceaccounts', 'services'], READ),
  rule(['apps'], ['deployments'], READ),
  rule(['apps'], ['replicasets'], ['get']),
  rule(['rbac.authorization.k8s.io'], ['roles', 'rolebindings'], [...READ, 'create', 'update', 'patch']),
  rule(['rbac.authorization.k8s.io'], ['clusterroles', 'clusterrolebindings'], [...READ, 'create', 'delete']),
  rule(['authentication.k8s.io'], ['tokenreviews'], ['create']),
  rule(['work.open-cluster-management.io'], ['manifestworks'], [...READ, 'create', 'update', 'patch', 'delete']),
  rule(['coordination.k8s.io'], ['leases'], ALL),
  rule(['', 'events.k8s.io'], ['events'], ['create', 'patch', 'update']),
  rule(['imageregistry.open-cluster-management.io'], ['managedclusterimageregistries'], READ),
  rule(['multicluster.x-k8s.io'], ['clusterprofiles'], READ),
  rule(['multicluster.x-k8s.io'], ['clusterprofiles/status'], ['update', 'patch']),
];

/** cluster-proxy's manager in its own (release) namespace: it runs the proxy-server there when the configuration says so. */
export const CLUSTER_PROXY_MANAGER_NAMESPACE_RULES: Rule[] = [
  rule([''], ['services', 'events', 'serviceaccounts'], ALL),
  rule(['apps'], ['deployments', 'deployments/scale'], ALL),
  rule([''], ['configmaps'], ['get', 'create', 'update', 'patch']),
  rule(['coordination.k8s.io'], ['leases'], ['get', 'create', 'update', 'patch']),
];

/**
 * cluster-proxy's manager in the proxy-server namespace: the same rights as in
 * its own, as the chart grants them when both are the release namespace. We
 * keep the proxy-server in open-cluster-management-cluster-proxy (the CRD's
 * default and the namespace ocm-lab's tooling reads), so this Role repeats them there.
 * Kept as its own name (knip: an alias) because the two Roles may diverge as upstream's chart does.
 * @alias
 */
export const CLUSTER_PROXY_MANAGER_PROXY_NAMESPACE_RULES: Rule[] = CLUSTER_PROXY_MANAGER_NAMESPACE_RULES;

/** managed-serviceaccount v0.10.0's manager (charts/managed-serviceaccount/templates/clusterrole.yaml, Deployment mode, no feature gates). */
export const MSA_MANAGER_CLUSTER_RULES: Rule[] = [
  rule(['cluster.open-cluster-management.io'], ['managedclusters'], READ),
  rule(['addon.open-cluster-management.io'], ['clustermanagementaddons'], [...READ, 'patch']),
  rule(['addon.open-cluster-management.io'], ['clustermanagementaddons/finalizers', 'managedclusteraddons/finalizers'], ['update']),
  rule(['addon.open-cluster-management.io'], ['managedclusteraddons'], [...READ, 'create', 'update', 'patch', 'delete']),
  rule(['addon.open-cluster-management.io'], ['managedclusteraddons/status'], ['update', 'patch']),
  rule(['addon.open-cluster-management.io'], ['addondeploymentconfigs'], READ),
  rule(['authentication.open-cluster-management.io'], ['managedserviceaccounts', 'managedserviceaccounts/status'], [...READ, 'update', 'patch']),
  rule(['certificates.k8s.io'], ['certificatesigningrequests'], READ),
  rule(['certificates.k8s.io'], ['certificatesigningrequests/approval', 'certificatesigningrequests/status'], ['update']),
  rule(['certificates.k8s.io'], ['signers'], ['approve', 'sign'], ['kubernetes.io/kube-apiserver-client']),
  rule([''], ['secrets'], [...READ, 'create', 'update']),
  rule([''], ['configmaps', 'events'], ['get', 'create', 'update', 'patch']),
  rule(['rbac.authorization.k8s.io'], ['roles', 'rolebindings'], ['get', 'create', 'update']),
  rule(['work.open-cluster-management.io'], ['manifestworks'], [...READ, 'create', 'update', 'patch']),
  rule(['coordination.k8s.io'], ['leases'], [...READ, 'create', 'update', 'patch']),
];
