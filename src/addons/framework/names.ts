/** Names fixed by OCM's addon API, so upstream components (registration agent, addon manager) understand ours. */
export const ADDON_API = 'addon.open-cluster-management.io/v1alpha1';
export const WORK_API = 'work.open-cluster-management.io/v1';
export const CLUSTER_API = 'cluster.open-cluster-management.io/v1';

/** On a ClusterManagementAddOn: "self" tells OCM's addon manager that the addon's own manager installs it. */
export const LIFECYCLE_ANNOTATION = 'addon.open-cluster-management.io/lifecycle';
export const LIFECYCLE_SELF = 'self';

export const ADDON_NAME_LABEL = 'open-cluster-management.io/addon-name';
export { CLUSTER_NAME_LABEL, CLIENT_SIGNER as KUBE_CLIENT_SIGNER } from '../../ocm/constants.js';

/** The namespace on the hub where the addon managers run (upstream's charts use it too). */
export const ADDON_MANAGER_NAMESPACE = 'open-cluster-management-addon';

/** The ManifestWork that carries an addon's agent to a cluster (the addon-framework's name). */
export function deployWorkName(addon: string): string {
  return `addon-${addon}-deploy-0`;
}

/** The Secret the spoke's registration agent writes with the agent's hub kubeconfig. */
export function hubKubeconfigSecretName(addon: string): string {
  return `${addon}-hub-kubeconfig`;
}

/** Group every agent of an addon on one cluster belongs to; hub RBAC is bound to it. */
export function agentGroup(cluster: string, addon: string): string {
  return `system:open-cluster-management:cluster:${cluster}:addon:${addon}`;
}

/** The identity an addon agent gets in its hub client certificate. */
export function agentSubject(cluster: string, addon: string): { user: string; groups: string[] } {
  return {
    user: `system:open-cluster-management:cluster:${cluster}:addon:${addon}:agent:${addon}-agent`,
    groups: [agentGroup(cluster, addon), `system:open-cluster-management:addon:${addon}`, 'system:authenticated'],
  };
}

/** The hub identity of a cluster's klusterlet starts with this; only it may ask for an addon certificate. */
export function clusterAgentUserPrefix(cluster: string): string {
  return `system:open-cluster-management:${cluster}:`;
}
