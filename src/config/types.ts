import type { ArtifactsMode } from '../provision/artifacts.js';
import { acceptedKubernetesVersions, KUBERNETES_RELEASES, OCM_RELEASES, OCM_VERSION } from '../provision/versions.js';
import type { FeatureGateSettings } from './feature-gates.js';

export { UPSTREAM_ADDONS, isUpstreamAddon } from './upstream-addons.js';
export type { AddonRequirement, AddonVocabulary } from './addon-vocabulary.js';

/**
 * A built-in addon's name: a key of BUILTIN_ADDONS (src/addons/registry.ts, the only list of them). A plain
 * string, so that an addon is its folder and its registry line: a lab file's names are checked against the
 * registry when it is parsed (addon-vocabulary.ts), code that takes a name from elsewhere uses knownAddon.
 */
export type AddonName = string;

/** Whose build of an addon a lab runs: ours (TypeScript) or upstream's Go one, for the conformance matrix. */
export type AddonImplementation = 'ocm-lab' | 'upstream';
export const ADDON_IMPLEMENTATIONS = ['ocm-lab', 'upstream'] as const satisfies readonly AddonImplementation[];

/**
 * How cluster-proxy's agents reach the proxy-server (the ManagedProxyConfiguration's entrypoint type the lab
 * writes): `hostname` the hub's address (upstream's Hostname), `port-forward` through the hub's API server
 * (PortForward: spokes need only the API server), `load-balancer` a Service of type LoadBalancer (LoadBalancerService).
 */
export type ProxyEntrypoint = 'hostname' | 'port-forward' | 'load-balancer';
export const PROXY_ENTRYPOINTS = ['hostname', 'port-forward', 'load-balancer'] as const satisfies readonly ProxyEntrypoint[];

export interface ClusterConfig {
  name: string;
  vpc: string;
  hub: boolean;
}

interface VpcConfig {
  name: string;
}

/**
 * The lab file's `runtime:` section: which runtime (`name`, as `--runtime`; flags override) and each
 * runtime's own options under its name (e.g. `existing: {kubeconfig, hubContext, spokeContexts}`),
 * which that runtime validates when it is made.
 */
export interface RuntimeSection {
  name?: string;
  options: Record<string, Record<string, unknown>>;
}

export interface LabConfig {
  name: string;
  /** The patch built here for the lab's Kubernetes minor (the binaries' version, the release row of versions.ts). */
  kubernetesVersion: string;
  /**
   * What the lab file or --kubernetes-version named, if anything (the default lab names nothing and takes
   * either source's patch): a minor (`v1.36`, which either source satisfies), the patch built here
   * (`v1.36.3`) or the patch of kind's published node image (`v1.36.4`). up checks it against the source
   * it decides on (provision/versions.ts kubernetesPatchFor).
   */
  kubernetesRequest?: string;
  ocmVersion: string;
  network: { cidr?: string };
  vpcs: VpcConfig[];
  clusters: ClusterConfig[];
  addons: AddonName[];
  /** Addons run from upstream's build; an addon not named here runs ours. */
  addonImplementations: Partial<Record<AddonName, AddonImplementation>>;
  /** Absolute path of the lab file, or null for the built-in default lab. */
  source: string | null;
  /** The lab file's `runtime:` section, when it has one. */
  runtime?: RuntimeSection;
  /** The lab file's `artifacts:` (`--artifacts` and $OCM_LAB_ARTIFACTS win over it). */
  artifacts?: ArtifactsMode;
  /** The lab file's `mirrors:`, as an absolute path (relative to the lab file when written relative). */
  mirrorsFile?: string;
  /**
   * The lab file's `ocmSource:` (`--ocm-source` and $OCM_LAB_OCM_SOURCE win over it), as an absolute path: the source
   * archive the built path takes the lab's OCM from where the Go module proxy does not serve it.
   */
  ocmSource?: string;
  /**
   * The lab file's `clusterProfile:` (default true): the cluster inventory API (ClusterProfile CRD, OCM's
   * feature gate, a profile per cluster), managed-serviceaccount's token sync to it and `ocm-lab cp-creds`.
   * Absent in a lab recorded before the switch existed, which counts as on.
   */
  clusterProfile?: boolean;
  /**
   * The lab file's `localCluster:`: the hub joined to itself as ManagedCluster `local-cluster`, labelled
   * `local-cluster=true`, as upstream's local-up.sh of v1.3.1 does. Unset: the line's default (localClusterEnabled).
   */
  localCluster?: boolean;
  /**
   * OCM's own feature gates (`featureGates:`; `--hub-feature-gates` and `--klusterlet-feature-gates` add to and
   * override them), as upstream names them; ClusterProfile is kept as `clusterProfile`, never here.
   */
  featureGates?: { hub?: FeatureGateSettings; klusterlet?: FeatureGateSettings };
  /** The lab file's `clusterProxy:` (`--proxy-entrypoint` wins); absent: the Hostname entrypoint. */
  clusterProxy?: { entrypoint: ProxyEntrypoint };
}

export const API_VERSION = 'ocm-lab/v1alpha1';
export const KIND = 'Lab';
/** Newest first; the first is the default. From provision/versions.ts, where each release names its etcd and images. */
export const SUPPORTED_KUBERNETES_VERSIONS = KUBERNETES_RELEASES.map((r) => r.kubernetes) as [string, ...string[]];
/** What `kubernetesVersion:` and --kubernetes-version accept: per minor, the minor, the patch built here and kind's node image's patch. */
export const KUBERNETES_VERSION_CHOICES = acceptedKubernetesVersions() as [string, ...string[]];
/** Newest first, from provision/versions.ts; the default is DEFAULT_OCM_VERSION, not necessarily the first. */
export const SUPPORTED_OCM_VERSIONS = OCM_RELEASES.map((r) => r.ocm) as [string, ...string[]];
export const DEFAULT_OCM_VERSION = OCM_VERSION;
/**
 * Addons a lab gets when its file names none: the three of the seed articles (000, 001). What the default lab
 * runs, not a list of the built-in addons (test/unit/addon-registry-names.test.ts checks each is one).
 */
export const DEFAULT_ADDONS: readonly AddonName[] = ['cluster-proxy', 'managed-serviceaccount', 'cluster-gateway'];
/**
 * What the default /16 lab range holds: MAX_VPCS VPCs of 15 clusters each (network/plan.ts). Whether
 * the machine can run that many is checked by `up` against its memory and limits, not here; 20 run on a
 * 2-core 24 GB machine (docs/reliability.md).
 */
export const MAX_CLUSTERS = 60;
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

/** The implementation a lab runs of `addon` (ours unless the lab file says upstream; a lab recorded before the field existed runs ours). */
export function addonImplementation(config: Partial<Pick<LabConfig, 'addonImplementations'>>, addon: AddonName): AddonImplementation {
  return config.addonImplementations?.[addon] ?? 'ocm-lab';
}

/** Whether a lab publishes ClusterProfiles (on unless its file says `clusterProfile: false`). */
export function clusterProfileEnabled(config: Pick<LabConfig, 'clusterProfile'>): boolean {
  return config.clusterProfile !== false;
}

/** The ManagedCluster name and label of the hub joined to itself (upstream's local-up.sh, ocm PR #1515). */
export const LOCAL_CLUSTER_NAME = 'local-cluster';
export const LOCAL_CLUSTER_LABEL = 'local-cluster';

/** Whether the hub joins itself as local-cluster: the lab file's `localCluster:`, else on for OCM v1.3.x (whose local-up.sh does) and off before. */
export function localClusterEnabled(config: Pick<LabConfig, 'localCluster' | 'ocmVersion'>): boolean {
  return config.localCluster ?? !config.ocmVersion.startsWith('v1.2.');
}
