/** Names and numbers shared by the OCM parts of the lab (upstream names kept where upstream has one). */

/** Hub namespace of the bootstrap ServiceAccount (upstream: the cluster-manager operator namespace). */
export const HUB_BOOTSTRAP_NAMESPACE = 'open-cluster-management';
/** Hub namespace the controllers record events in (upstream: where the cluster manager runs them). */
export const HUB_CONTROLLER_NAMESPACE = 'open-cluster-management-hub';
export const BOOTSTRAP_SERVICE_ACCOUNT = 'agent-registration-bootstrap';
export const BOOTSTRAP_CLUSTER_ROLE = 'open-cluster-management:bootstrap';
export const BOOTSTRAP_CLUSTER_ROLE_BINDING = 'open-cluster-management:bootstrap:agent-registration';
/** The user a CSR made with the bootstrap token is requested by: the only requester `accept` approves. */
export const BOOTSTRAP_USERNAME = `system:serviceaccount:${HUB_BOOTSTRAP_NAMESPACE}:${BOOTSTRAP_SERVICE_ACCOUNT}`;

/** Spoke namespaces: where the klusterlet agent keeps its hub credentials, and where addon agents go. */
export const AGENT_NAMESPACE = 'open-cluster-management-agent';
export const AGENT_ADDON_NAMESPACE = 'open-cluster-management-agent-addon';
/** The Secret the agent stores its hub kubeconfig in (on the spoke) — upstream default. */
export const HUB_KUBECONFIG_SECRET = 'hub-kubeconfig-secret';

/** Label the registration agent puts on its CSRs and the hub on per-cluster objects. */
export const CLUSTER_NAME_LABEL = 'open-cluster-management.io/cluster-name';
export const CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client';

/** Field manager for everything ocm-lab writes with server-side apply. */
export const FIELD_MANAGER = 'ocm-lab';

/**
 * Ports, bound to the cluster's own address (never 0.0.0.0, whose default
 * :8443 every controller would fight over). The conversion webhook
 * (controller-runtime) also binds :8000 (health) and :8080 (metrics) on every
 * address of the hub's namespace — upstream hard-codes those.
 */
export const PORTS = {
  registrationController: 9441,
  addonManager: 9442,
  addonWebhook: 9443,
  addonWebhookHealth: 8000,
  placementController: 9444,
  klusterletAgent: 9450,
} as const;

/** How long a bootstrap token lives; re-issued when less than a tenth of it is left. */
export const BOOTSTRAP_TOKEN_SECONDS = 365 * 24 * 3600;

export type HubComponent = 'addon-webhook' | 'registration-controller' | 'addon-manager' | 'placement-controller';
/** The hub's OCM processes (started side by side once the CRDs are Established). */
export const HUB_COMPONENTS: HubComponent[] = ['addon-webhook', 'registration-controller', 'addon-manager', 'placement-controller'];
export const KLUSTERLET_COMPONENT = 'klusterlet-agent';

/** ManagedCluster condition types (cluster.open-cluster-management.io/v1). */
export const CONDITION = {
  hubAccepted: 'HubAcceptedManagedCluster',
  joined: 'ManagedClusterJoined',
  available: 'ManagedClusterConditionAvailable',
} as const;
