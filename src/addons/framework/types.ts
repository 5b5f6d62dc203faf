import type { KubeClient } from '../../kube/client.js';
import type { Condition, KubeObject } from '../../kube/objects.js';
import type { PolicyRule } from '../../kube/builders.js';

export type { PolicyRule };

export type HealthCheck = 'DeploymentAvailability' | 'Customized';

/** What the cluster's AddOnDeploymentConfig gives an addon to render its agent with. */
export interface AgentValues {
  /** spec.customizedVariables by name (empty without a config). */
  variables: Record<string, string>;
  /**
   * Where the agent's namespaced objects end up (agentInstallNamespace, else the addon's
   * installNamespace). The framework moves the objects itself; this is for values that name it.
   */
  installNamespace: string;
}

/** What an addon author writes; the framework's manager does the rest. */
export interface AddonDefinition {
  name: string;
  displayName: string;
  description: string;
  /** Namespace on every managed cluster where the agent runs. */
  installNamespace: string;
  /**
   * Which clusters get the addon: `AllClusters` (default) — the manager creates a
   * ManagedClusterAddOn on every accepted cluster; `Manual` — only clusters someone gave one
   * (`ocm-lab addon enable`, as `clusteradm addon enable` does) are served.
   */
  install?: 'AllClusters' | 'Manual';
  /**
   * The agent's objects for one cluster; they travel in the ManifestWork `addon-<name>-deploy-0`.
   * `values` come from the cluster's AddOnDeploymentConfig; the framework then applies the
   * config's registries, node placement, proxy, resources and install namespace to the objects.
   */
  agentManifests(cluster: string, hub: KubeClient, values?: AgentValues): Promise<KubeObject[]>;
  /**
   * The AddOnDeploymentConfig every cluster uses unless its ManagedClusterAddOn's `spec.configs`
   * names one (the ClusterManagementAddOn's `supportedConfigs[].defaultConfig`). Unset: a default
   * a user put on the ClusterManagementAddOn is kept.
   */
  defaultDeploymentConfig?: { namespace: string; name: string };
  /**
   * When set, the agent gets a hub kubeconfig (Secret `<name>-hub-kubeconfig` in the install
   * namespace, written by the cluster's registration agent from a CSR the manager approves) with
   * these permissions in the cluster's namespace on the hub.
   */
  hubPermissions?: PolicyRule[];
  /** Hub-side work of the addon on every pass (e.g. cluster-proxy's certificates and proxy-server). */
  reconcileHub?(hub: KubeClient): Promise<void>;
  /**
   * How the manager judges Available; either way the ManagedClusterAddOn's health check mode is
   * `Customized`, so the cluster's registration agent leaves Available to the manager:
   * - `DeploymentAvailability` (default): from the cluster's work agent's status feedback of every
   *   Deployment among the agent manifests (ReadyReplicas ≥ 1), as upstream's addon-framework
   *   does with its Deployment prober;
   * - `Customized`: the addon says, via clusterAvailability.
   * (Upstream's `Lease` mode is not offered: its 30 s check interval is what made `up` slow.)
   */
  healthCheck?: HealthCheck;
  /** Customized health: the Available condition for one cluster on this pass (null: leave it). */
  clusterAvailability?(cluster: string, hub: KubeClient): Promise<Condition | null>;
}
