import type { KubeClient } from '../../kube/client.js';
import type { Condition, KubeObject } from './objects.js';

export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

/** What an addon author writes; the framework's manager does the rest. */
export interface AddonDefinition {
  name: string;
  displayName: string;
  description: string;
  /** Namespace on every managed cluster where the agent runs (and renews its Lease). */
  installNamespace: string;
  /** The agent's objects for one cluster; they travel in the ManifestWork `addon-<name>-deploy-0`. */
  agentManifests(cluster: string, hub: KubeClient): Promise<KubeObject[]>;
  /**
   * When set, the agent gets a hub kubeconfig (Secret `<name>-hub-kubeconfig` in the install
   * namespace, written by the cluster's registration agent from a CSR the manager approves) with
   * these permissions in the cluster's namespace on the hub.
   */
  hubPermissions?: PolicyRule[];
  /** Hub-side work of the addon on every pass (e.g. cluster-proxy's certificates and proxy-server). */
  reconcileHub?(hub: KubeClient): Promise<void>;
  /**
   * How Available is judged: `Lease` (default; the agent renews a Lease, the cluster's
   * registration agent reads it) or `Customized` (the addon says, via clusterAvailability).
   */
  healthCheck?: 'Lease' | 'Customized';
  /** Customized health: the Available condition for one cluster on this pass (null: leave it). */
  clusterAvailability?(cluster: string, hub: KubeClient): Promise<Condition | null>;
}
