export type AddonName = 'cluster-proxy' | 'managed-serviceaccount' | 'cluster-gateway';
export const ADDON_NAMES: readonly AddonName[] = ['cluster-proxy', 'managed-serviceaccount', 'cluster-gateway'];

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
/** Addons are installed by later parts of the lab; this list grows as they land. */
export const DEFAULT_ADDONS: AddonName[] = [];
export const MAX_CLUSTERS = 8;
export const MAX_VPCS = 4;
export const MAX_LAB_NAME = 20;
