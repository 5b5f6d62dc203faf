import type { LabConfig, LabState } from '../config/index.js';
import type { HostFacts } from '../host/facts.js';
import type { ImageRegistryControl } from '../images/registry/control.js';
import type { ArtifactsMode, BinaryName, Mirrors } from '../provision/index.js';
import type { OfficialSource } from '../provision/artifacts.js';
import type { ArtifactSource } from '../provision/sources.js';
import type { KubernetesSource } from '../provision/versions.js';
import type { PreflightCheck } from './preflight.js';
import type { RuntimeVerdict } from './verdict.js';

/** A registered runtime's name (src/runtime/registry.ts lists them). */
export type RuntimeName = string;

interface ComponentStatus {
  name: string;
  running: boolean;
  /** How the runtime runs it, in its own words (local: `pid 4242`; kind: the container); null when there is nothing to say. */
  detail: string | null;
  /** How often something (local: the lab's supervisor) restarted it after it died, and when last (ISO time). */
  restarts?: { count: number; last: string | null };
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
  subnet: string | null;
  /** What carries the VPC, in the runtime's words (local: its network namespace; kind: its Docker network); null when nothing does. */
  carrier: string | null;
  /** The runtime's own extras (local: `netns`; kind: `network` and `containers`), plain data. */
  details: Record<string, unknown>;
}

export interface LabStatus {
  lab: string;
  runtime: RuntimeName;
  /** False when no lab of this name exists (never brought up, or taken down). */
  exists: boolean;
  kubeconfig: string | null;
  clusters: ClusterStatus[];
  /** local: the process that restarts dead components (absent on runtimes without one). */
  supervisor?: { running: boolean; pid: number | null };
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
  /** Where binaries come from (decided once by `up`: provision/artifacts.ts) and the mirrors to fetch them through. */
  artifacts?: ArtifactsMode;
  mirrors?: Mirrors;
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
   * Called before the base deletes clusters the new config no longer has, while
   * they still run (so OCM can let them go cleanly); `all` are the lab's clusters before.
   */
  beforeRemove?: (removed: LabCluster[], all: LabCluster[], progress: (line: string) => void) => Promise<void>;
}

export interface DownOptions {
  keepData?: boolean;
  /** Clusters that cannot be reached do not stop `down`: what can be removed is, the rest is listed (`notRemoved`). */
  force?: boolean;
}

export interface DownResult {
  lab: string;
  existed: boolean;
  /** What `down` stopped or removed, one phrase each (`kube-apiserver of hub`, `kind cluster ocmlab-x-hub`, `network ocmlab-x-vpc-1`). */
  removed: string[];
  keptData: boolean;
  /** With `force`: what is left on clusters `down` could not reach or clean, one phrase each. */
  notRemoved?: string[];
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
  /** Our image as this cluster's pods pull it, when not OCM_LAB_IMAGE (existing: `--image-registry`). */
  ocmLabImage?: string;
}

/** What `--dry-run` asks a runtime for: the plan of `up` or of `down`. */
export interface PlanOptions {
  action: 'up' | 'down';
  /** kind: the node image `up --node-image` would use. Other runtimes ignore it. */
  nodeImage?: string;
  /** kind: where `up` would take artifacts from (`--artifacts`, $OCM_LAB_ARTIFACTS, the lab file): `official` plans kind's published node image. */
  artifacts?: ArtifactsMode;
  /** `down --keep-data`. */
  keepData?: boolean;
  /**
   * Facts about the machine that `plan` would otherwise read, each runtime under its own key
   * (local: `freeCidr`, the first range no route uses; existing: `contexts`, what the user's kubeconfig
   * says of each context; kind and local: `inotifyInUse`, host/facts.ts's InotifyUse for the preflight).
   * Tests give them, so the golden files check the path `up --dry-run` takes.
   */
  facts?: Record<string, unknown>;
  /** The host facts (host/facts.ts) `up --dry-run`'s artifacts are decided with; default: read them. Tests give them. */
  host?: HostFacts;
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
  /** The config `up` would bring up, where the runtime resolves its own (existing: the clusters of the contexts). */
  config?: LabConfig;
}

/** What the runtime base decided before a runtime provisions: the lab as this `up` found it and as it will be. */
export interface LabRun<R = unknown> {
  /** The config this `up` brings up (after the runtime's `resolveConfig`). */
  config: LabConfig;
  options: UpOptions;
  /** `<labDir>`: the lab's files. */
  dir: string;
  /** The state as this `up` found it; null for a new lab. */
  previous: LabState<R> | null;
  /** The state being written: the base records the config, the runtime its own part (then `save()`). */
  state: LabState<R>;
  /** True when this `up` created the lab (a failure then removes it, unless --retain). */
  createdNow: boolean;
  /** Clusters the lab had and the config no longer has: let go and deleted before the runtime's steps. */
  removed: string[];
  save(): Promise<void>;
}

/** A runtime's part of one `up`: its steps over its own context, and the hooks the base calls in its first step. */
export interface Provisioning<Ctx> {
  context: Ctx;
  /**
   * Before the lock and before anything is created: can this machine run the lab (`fresh` are the clusters
   * this `up` adds)? Throws (exit 3) when not; the result is shown in the base step's line.
   */
  preflight?(fresh: string[], progress: (line: string) => void): Promise<string | void>;
  /** Deletes the clusters a running lab no longer has (OCM has already let them go). */
  deleteClusters(removed: string[], progress: (line: string) => void): Promise<void>;
  /** The steps after the base's, in order; running them on a healthy lab changes nothing. */
  steps: Step<Ctx>[];
  /** A failed `up` of a new lab: undo what this runtime made (default: `down`). `retain` is honoured by the base. */
  rollback?(): Promise<void>;
  /**
   * Work a step left running while later steps go on (kind: nodes pulling the lab's images) has ended: waited for
   * when `up` ends, cancelled (`cancel`) before a rollback. `up` returns and rolls back only after this.
   */
  settle?(cancel: boolean): Promise<void>;
}

/**
 * A way to run labs: it creates the clusters of a lab in their VPCs (with
 * nodes that can run the lab's images), says how to reach them
 * (`clusters`), reports their status and deletes them. It knows nothing of
 * OCM or addons, and nothing of the lab lock, the state envelope, reshape
 * refusals or rollback: the runtime base (`base.ts`) does those for every
 * runtime. A runtime registers itself in `registry.ts`.
 */
export interface Runtime<Ctx = unknown, R = unknown> {
  readonly name: RuntimeName;
  /** True when the clusters outlive the lab (existing clusters): `down` then first takes off what `up` installed. */
  readonly keepsClusters: boolean;
  available(): Promise<{ available: boolean; reason: string | null }>;
  /** The config this runtime brings up for `config` (e.g. the existing runtime takes its clusters from contexts); default: `config`. */
  resolveConfig?(config: LabConfig, previous: LabState<R> | null): LabConfig;
  /** Why a running lab (`current`) cannot take `next`; null when it can. */
  reshapeRefusal(current: LabConfig, next: LabConfig): string | null;
  /** The runtime's part of a new lab's state. */
  initialState(config: LabConfig): R;
  /** This runtime's part of `up` for `run` (filled in by the base's first step before any of it runs). */
  provisioning(run: LabRun<R>): Provisioning<Ctx>;
  /** The clusters of a lab this runtime brought up, read back from its state (after `up`, or any time later). */
  clusters(config: LabConfig): Promise<LabCluster[]>;
  /** Removes the lab: its clusters (unless `keepsClusters`), its networks, its directory (unless `keepData`); idempotent. */
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
  /**
   * `up --dry-run`: the checks `up` makes of the machine before it creates anything, each ok, warning or stop
   * (runtime/preflight.ts), for `newClusters` clusters still to create; reads only. Absent: nothing to check.
   */
  preflight?(config: LabConfig, options: PlanOptions & { newClusters: number }): Promise<PreflightCheck[]>;
}

/** How a command gets its runtime: the lab it is about, and the runtime's options (`runtime.<name>` of the lab file, then flags). */
export interface RuntimeSelection {
  /** The lab the command is about: `auto` takes the runtime it was brought up with. */
  labName?: string;
  /** The runtime's own options from flags, which it validates (e.g. existing: `kubeconfig`, `hubContext`, `spokeContexts`). */
  options?: Record<string, unknown>;
  /** The lab file's `runtime.<name>` sections: the chosen runtime's is the base its flag options override. */
  fileOptions?: Record<string, Record<string, unknown>>;
  /** Options from `up`'s flags, by runtime (runtime/flags.ts): the runtime that runs the lab takes its own, over the others. */
  flagOptions?: Record<string, Record<string, unknown>>;
}

/** What a runtime's folder registers: its name, whether `auto` may pick it, and how to make one. */
export interface RuntimeDefinition {
  name: RuntimeName;
  /** `auto` (for a new lab) tries the runtimes that have a rank, lowest first, and takes the first that is available. */
  autoRank?: number;
  /** Whether this machine can run it, answered without loading the runtime (`auto` asks every ranked runtime); default: yes. */
  available?(): Promise<{ available: boolean; reason: string | null }>;
  /** Throws InvalidInputError naming the option when `options` are not this runtime's; loads the runtime's modules. */
  create(options: Record<string, unknown>): Promise<Runtime<any, any>>;
  /** `setup --runtime <name>`: what this runtime needs made before its first `up` (besides Kubernetes' and OCM's binaries). */
  prepare?: () => Promise<RuntimePreparation>;
  /** `ocm-lab registry`: the image registry this runtime's labs pull from, where it has one (kind). */
  imageRegistry?: () => Promise<ImageRegistryControl>;
  /** The publishers a lab on this runtime fetches from: `up` and `setup` ask them all at once before deciding official or built. */
  officialSources: readonly OfficialSource[];
  /** What this machine can run of this runtime for Kubernetes `kubernetes`, one verdict per way (`ocm-lab versions`), from facts read once. */
  verdicts(kubernetes: string, facts: HostFacts): RuntimeVerdict[];
  /**
   * With official artifacts, where the lab's Kubernetes comes from on this machine (kind: its published node
   * image where the engine can run it); default: built here (and dl.k8s.io's same patch).
   */
  kubernetesSource?(kubernetes: string, facts: HostFacts): KubernetesSource;
  /** Its decisions read the container engine's facts (`docker info`: cgroup version, architecture), not only the host's. */
  usesEngine?: boolean;
  /**
   * `up --dry-run`: where each artifact a lab on this runtime fetches or builds comes from on the path decided
   * (`official`: the publishers; `build`: built here), from facts read once.
   */
  artifacts(config: LabConfig, source: 'official' | 'build', facts: HostFacts): Promise<ArtifactSource[]>;
}

/** One image `setup` made or found: present, loaded (from the cache) or built; MISSING with --check. */
export interface PreparedImage {
  image: string;
  key: string;
  source: string;
}

/** What a runtime makes in `setup` before its first `up` (kind: its binaries and offline images). */
export interface RuntimePreparation {
  /**
   * The binaries `setup` provisions for this runtime when artifacts come from `artifacts` (`build` for
   * `--check`, which decides nothing); `withOcm` false leaves OCM's out.
   */
  binaries(artifacts: ArtifactsMode, withOcm: boolean): readonly BinaryName[];
  /** Throws (exit 3) when the machine cannot make them (e.g. no Docker engine answers). */
  require(): Promise<void>;
  /** One job per artifact, in order, from the sources `setup` decided on. */
  jobs(
    config: LabConfig,
    binDir: string | undefined,
    sources: { artifacts: ArtifactsMode; mirrors: Mirrors },
  ): { title: string; run(progress: (line: string) => void): Promise<PreparedImage[]> }[];
  /** `setup --check`: what is there already, making nothing. */
  check(config: LabConfig): Promise<PreparedImage[]>;
}
