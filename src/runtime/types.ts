import type { LabConfig } from '../config/index.js';
import type { BinaryName } from '../provision/index.js';

export type RuntimeName = 'local' | 'kind' | 'existing';

export interface ComponentStatus {
  name: string;
  running: boolean;
  pid: number | null;
}

export interface ClusterStatus {
  name: string;
  vpc: string;
  hub: boolean;
  apiServer: string;
  /** kube-apiserver answered /readyz with 200. */
  ready: boolean;
  components: ComponentStatus[];
}

export interface VpcStatus {
  name: string;
  /** local: the VPC's network namespace. */
  netns: string | null;
  subnet: string | null;
  /** kind: the VPC's Docker network and the containers attached to it. */
  network?: string;
  containers?: string[];
}

export interface LabStatus {
  lab: string;
  runtime: RuntimeName;
  /** False when no lab of this name exists (never brought up, or taken down). */
  exists: boolean;
  kubeconfig: string | null;
  clusters: ClusterStatus[];
  vpcs: VpcStatus[];
  isolation: { enforced: boolean; reason: string | null };
  /** What this lab can do, for documents that need it (e.g. 'control-plane', 'vpc-isolation', 'ocm'). */
  capabilities: string[];
}

/** One named action of `up`; children run after `run`, concurrently when `concurrent` is set. */
export interface Step<Ctx> {
  title: string;
  run?: (ctx: Ctx, progress: (line: string) => void) => Promise<string | void>;
  children?: (ctx: Ctx) => Step<Ctx>[];
  concurrent?: boolean;
}

export interface UpOptions {
  binDir?: string;
  /** kind: the node image to create clusters from (default: the one `setup --runtime kind` builds offline). Other runtimes ignore it. */
  nodeImage?: string;
  allowDownload?: boolean;
  /** Keep a half-created lab when `up` fails, for inspection (default: a lab created by this run is removed again). */
  retain?: boolean;
  readyTimeoutMs?: number;
  /**
   * local: binaries the nodelets may map images to besides the lab's own (the gateway bench's
   * upstream cluster-gateway, `UPSTREAM_CLUSTER_GATEWAY_IMAGE`); provisioned in the Binaries step.
   * Other runtimes ignore it.
   */
  extraImageBinaries?: BinaryName[];
  /**
   * Called before a runtime deletes clusters the new config no longer has, while
   * they still run (so OCM can let them go cleanly); `all` are the lab's clusters before.
   */
  beforeRemove?: (removed: LabCluster[], all: LabCluster[], progress: (line: string) => void) => Promise<void>;
}

export interface DownOptions {
  keepData?: boolean;
}

export interface DownResult {
  lab: string;
  existed: boolean;
  stoppedProcesses: string[];
  removedNetworkResources: number;
  keptData: boolean;
}

/**
 * One cluster as a runtime provides it: all the install layer (OCM, addons,
 * scenarios) knows about a cluster. Everything else goes through its API.
 */
export interface LabCluster {
  name: string;
  vpc: string;
  hub: boolean;
  /** An admin kubeconfig for the host (one context, named after the cluster). */
  kubeconfig: string;
  /** The API server's URL as pods of the lab reach it (from its own VPC, and from other VPCs where the rules allow). */
  internalServer: string;
  /** The address other VPCs reach this cluster's published ports at (the hub's API server and proxy-server agent port). */
  internalAddress: string;
  /** The CA that signs the API server's serving certificate. */
  caPem: string;
}

/** What `--dry-run` asks a runtime for: the plan of `up` or of `down`. */
export interface PlanOptions {
  action: 'up' | 'down';
  /** kind: the node image `up --node-image` would use. Other runtimes ignore it. */
  nodeImage?: string;
  /** `down --keep-data`. */
  keepData?: boolean;
}

/** A runtime's answer to `--dry-run`: worked out without creating, writing or starting anything. */
export interface RuntimePlan {
  runtime: RuntimeName;
  /** Titles of the runtime's `up` steps, in order (empty for `down`). */
  steps: string[];
  /** Plain data with its keys in a fixed order: `--output json` prints it as it is. */
  plan: object;
  /** The same plan for people. */
  text: string;
}

/**
 * A way to run labs: it creates the clusters of a lab in their VPCs (with
 * nodes that can run the lab's images), says how to reach them
 * (`clusters`), reports their status and deletes them. It knows nothing of
 * OCM or addons. `local` runs control planes in network namespaces with a
 * nodelet as each cluster's node; `kind` and `existing` implement the same.
 */
export interface Runtime<Ctx = unknown> {
  readonly name: RuntimeName;
  /** True when the clusters outlive the lab (existing clusters): `down` then first takes off what `up` installed. */
  readonly keepsClusters: boolean;
  available(): Promise<{ available: boolean; reason: string | null }>;
  /** The ordered actions that bring `config` up; running them on a healthy lab changes nothing. */
  upSteps(config: LabConfig, options: UpOptions): { context: Ctx; steps: Step<Ctx>[]; rollback: () => Promise<void> };
  /** The clusters of a lab this runtime brought up, read back from its state (after `upSteps`, or any time later). */
  clusters(config: LabConfig): Promise<LabCluster[]>;
  down(labName: string, options: DownOptions): Promise<DownResult>;
  status(config: LabConfig): Promise<LabStatus>;
  /**
   * Opens a TCP connection from inside cluster `from`'s network (where its node
   * and pods live) to `host:port` and closes it: true when it connected within
   * `timeoutMs`. How documents check the VPC rule the same way on every runtime.
   */
  probe(config: LabConfig, from: string, target: { host: string; port: number }, timeoutMs: number): Promise<boolean>;
  /** `--dry-run`: what `up` or `down` would do to `config`'s lab; reads the machine and the lab's state, changes nothing. */
  plan(config: LabConfig, options: PlanOptions): Promise<RuntimePlan>;
}
