import type { KubeClient } from '../../kube/client.js';
import type { Condition, KubeObject } from '../../kube/objects.js';
import type { PolicyRule } from '../../kube/builders.js';
import type { AddonInstall } from './install-strategy.js';

export type { PolicyRule };

export type HealthCheck = 'DeploymentAvailability' | 'Customized';

/** What the cluster's AddOnDeploymentConfig gives an addon to render its agent with. */
export interface AgentValues {
  /** spec.customizedVariables by name (empty without a config). */
  variables: Record<string, string>;
  /**
   * Where the agent's namespaced objects end up (agentInstallNamespace, else the addon's
   * installNamespace; always the latter for an addon that ignores it). The framework moves the
   * objects itself; this is for values that name it.
   */
  installNamespace: string;
}

/**
 * How an addon's agent takes each field of an AddOnDeploymentConfig. Upstream's addons differ
 * (docs/addons.md has the table per addon and field, upstream's rule beside ours):
 * - installNamespace `follow`: the agent moves to spec.agentInstallNamespace when it is not empty,
 *   else stays in the addon's installNamespace; `ignore`: it always stays there (the API server
 *   fills agentInstallNamespace in on every config, so a config set for anything else would move it);
 * - nodePlacement / resourceRequirements: `apply` to every pod template / matching container, or `ignore`;
 * - proxyConfig `template`: HTTP(S)_PROXY and NO_PROXY in both spellings and the CA bundle mounted
 *   (OCM's AddOnTemplate addons); `env`: HTTP_PROXY, HTTPS_PROXY and NO_PROXY only, no CA bundle;
 *   `ignore`. proxyContainers limits the variables to the containers named (default: every one).
 * Images follow the config's registries and the cluster's annotation for every addon (image-registries.ts).
 */
export interface DeploymentConfigUse {
  installNamespace: 'follow' | 'ignore';
  nodePlacement: 'apply' | 'ignore';
  proxyConfig: 'template' | 'env' | 'ignore';
  proxyContainers?: string[];
  resourceRequirements: 'apply' | 'ignore';
}

/** What an addon author writes; the framework's manager does the rest. */
export interface AddonDefinition {
  name: string;
  displayName: string;
  description: string;
  /** Namespace on every managed cluster where the agent runs. */
  installNamespace: string;
  /**
   * Which clusters get the addon (install-strategy.ts): `AllClusters` (default) — the manager creates a
   * ManagedClusterAddOn on every accepted cluster; an install strategy — what a new
   * ClusterManagementAddOn says: `{type: 'Manual'}` (only clusters someone gave one, e.g.
   * `ocm-lab addon enable --cluster`) or `{type: 'Placements', placements}` (the clusters the
   * Placements' decisions list; the lab creates the Placements). A strategy a user writes on the
   * ClusterManagementAddOn afterwards is kept.
   */
  install?: AddonInstall;
  /**
   * The agent's objects for one cluster; they travel in the ManifestWork `addon-<name>-deploy-0`.
   * `values` come from the cluster's AddOnDeploymentConfig; the framework then applies the
   * config's registries, and node placement, proxy, resources and install namespace as
   * deploymentConfigUse says, to the objects.
   */
  agentManifests(cluster: string, hub: KubeClient, values?: AgentValues): Promise<KubeObject[]>;
  /**
   * Which fields of an AddOnDeploymentConfig the agent takes, and how; unset: all of them, as
   * OCM's template addons take them (FRAMEWORK_CONFIG_USE in agent-config.ts).
   */
  deploymentConfigUse?: DeploymentConfigUse;
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
