import type { LabConfig } from '../config/index.js';

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
  netns: string | null;
  subnet: string | null;
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
  allowDownload?: boolean;
  /** Keep a half-created lab when `up` fails, for inspection (default: a lab created by this run is removed again). */
  retain?: boolean;
  readyTimeoutMs?: number;
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
 * A way to run labs. `local` runs control-plane processes in network
 * namespaces; `kind` (Docker networks + kind clusters) and `existing`
 * (clusters given by kubeconfig contexts) implement the same interface later.
 */
export interface Runtime<Ctx = unknown> {
  readonly name: RuntimeName;
  available(): Promise<{ available: boolean; reason: string | null }>;
  /** The ordered actions that bring `config` up; running them on a healthy lab changes nothing. */
  upSteps(config: LabConfig, options: UpOptions): { context: Ctx; steps: Step<Ctx>[]; rollback: () => Promise<void> };
  down(labName: string, options: DownOptions): Promise<DownResult>;
  status(config: LabConfig): Promise<LabStatus>;
}
