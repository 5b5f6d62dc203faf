/** Names and numbers shared by the OCM parts of the lab (upstream names kept where upstream has one). */

/** The operators' namespace on every cluster; on the hub also the bootstrap ServiceAccount's (as clusteradm init). */
export const OPERATOR_NAMESPACE = 'open-cluster-management';
/** The bootstrap ServiceAccount's namespace: the same as the operators' today, a name of its own as in clusteradm. @alias */
export const HUB_BOOTSTRAP_NAMESPACE = OPERATOR_NAMESPACE;
/** Where the cluster-manager operator runs the hub's controllers and webhooks. */
export const HUB_CONTROLLER_NAMESPACE = 'open-cluster-management-hub';
/** clusteradm init's names for the identity joining clusters use. */
export const BOOTSTRAP_SERVICE_ACCOUNT = 'cluster-bootstrap';
export const BOOTSTRAP_CLUSTER_ROLE = 'system:open-cluster-management:bootstrap';
export const BOOTSTRAP_CLUSTER_ROLE_BINDING = 'cluster-bootstrap-sa';
/** The one ClusterManager and, on each spoke, the one Klusterlet (upstream's default names). */
export const CLUSTER_MANAGER_NAME = 'cluster-manager';
export const KLUSTERLET_NAME = 'klusterlet';
/** The Secret (key `kubeconfig`) the klusterlet bootstraps from, in the agent namespace. */
export const BOOTSTRAP_HUB_KUBECONFIG_SECRET = 'bootstrap-hub-kubeconfig';
/** The user a CSR made with the bootstrap token is requested by: the only requester `accept` approves. */
export const BOOTSTRAP_USERNAME = `system:serviceaccount:${HUB_BOOTSTRAP_NAMESPACE}:${BOOTSTRAP_SERVICE_ACCOUNT}`;

/** Spoke namespaces: where the klusterlet agent keeps its hub credentials, and where addon agents go. */
export const AGENT_NAMESPACE = 'open-cluster-management-agent';
export const AGENT_ADDON_NAMESPACE = 'open-cluster-management-agent-addon';

/** Label the registration agent puts on its CSRs and the hub on per-cluster objects. */
export const CLUSTER_NAME_LABEL = 'open-cluster-management.io/cluster-name';
export const CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client';

/** Field manager for everything ocm-lab writes with server-side apply. */
export const FIELD_MANAGER = 'ocm-lab';

/** How long a bootstrap token lives; re-issued when less than a tenth of it is left. */
export const BOOTSTRAP_TOKEN_SECONDS = 365 * 24 * 3600;

/** The hub Deployments the cluster-manager operator runs in Default mode (names as `kubectl get deploy` shows them). */
export const HUB_DEPLOYMENTS = [
  'cluster-manager-registration-controller',
  'cluster-manager-registration-webhook',
  'cluster-manager-work-webhook',
  'cluster-manager-placement-controller',
  'cluster-manager-addon-manager-controller',
  'cluster-manager-addon-webhook',
] as const;
/** The spoke Deployments the klusterlet operator runs in Default mode (clusteradm join's default). */
export const AGENT_DEPLOYMENTS = ['klusterlet-registration-agent', 'klusterlet-work-agent'] as const;

/** ManagedCluster condition types (cluster.open-cluster-management.io/v1). */
export const CONDITION = {
  hubAccepted: 'HubAcceptedManagedCluster',
  joined: 'ManagedClusterJoined',
  available: 'ManagedClusterConditionAvailable',
} as const;
