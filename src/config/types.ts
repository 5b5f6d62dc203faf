export type AddonName = 'cluster-proxy' | 'managed-serviceaccount' | 'cluster-gateway';
export const ADDON_NAMES = ['cluster-proxy', 'managed-serviceaccount', 'cluster-gateway'] as const satisfies readonly AddonName[];

export interface ClusterConfig {
  name: string;
  vpc: string;
  hub: boolean;
}

export interface VpcConfig {
  name: string;
}

export interface LabConfig {
  name: string;
  kubernetesVersion: string;
  ocmVersion: string;
  network: { cidr?: string };
  vpcs: VpcConfig[];
  clusters: ClusterConfig[];
  addons: AddonName[];
  /** Absolute path of the lab file, or null for the built-in default lab. */
  source: string | null;
}

export const API_VERSION = 'ocm-lab/v1alpha1';
export const KIND = 'Lab';
export const SUPPORTED_KUBERNETES_VERSIONS = ['v1.34.4'] as const;
export const SUPPORTED_OCM_VERSIONS = ['v1.2.1'] as const;
/** Addons a lab gets when its file names none (the seed-000 pair). */
export const DEFAULT_ADDONS: readonly AddonName[] = ['cluster-proxy', 'managed-serviceaccount'];
/** Known to the lab file, not implemented yet: a lab file naming one is rejected rather than silently half-built. */
export const NOT_YET_BUILT_ADDONS: readonly AddonName[] = ['cluster-gateway'];

/** Every cluster runs its own etcd, kube-apiserver and kube-controller-manager; more do not fit a 2-core machine. */
export const MAX_CLUSTERS = 8;
export const MAX_VPCS = 4;
/** The lab name prefixes network namespace and interface names, which have tight length limits. */
export const MAX_LAB_NAME = 20;
export const MAX_NAME = 63;

/**
 * Cluster names become kubeconfig contexts and namespaces on the hub (one per
 * managed cluster), so they must not collide with namespaces every cluster has.
 */
export const RESERVED_CLUSTER_NAMES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'] as const;
export const RESERVED_CLUSTER_PREFIX = 'open-cluster-management';
