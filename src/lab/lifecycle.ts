import type { ListrTask } from 'listr2';
import type { LabConfig } from '../config/index.js';
import { InvalidInputError, NotFoundError } from '../errors.js';
import { notUpStatus } from '../runtime/not-up.js';
import { labStateExists, resolveRuntime, selectRuntime, type RuntimeChoice } from '../runtime/select.js';
import type { DownOptions, DownResult, LabStatus, Runtime, Step, UpOptions } from '../runtime/types.js';
import type { InstallContext } from '../install/context.js';
import type { ExistingClustersInput } from '../runtime/existing/contexts.js';

export type ProgressRenderer = 'default' | 'simple' | 'verbose' | 'silent';

export interface LifecycleOptions {
  runtime?: RuntimeChoice;
  renderer?: ProgressRenderer;
  /** false: only the runtime's clusters, without OCM and the addons (e.g. to try the existing runtime on them). */
  install?: boolean;
  /** `--runtime existing`: the user's kubeconfig and contexts. */
  existing?: ExistingClustersInput;
  /** What `down` is doing, line by line (taking OCM off existing clusters can take minutes). */
  onProgress?: (line: string) => void;
}

export interface StepResult {
  title: string;
  result: string;
  durationMs: number;
}

export interface UpResult {
  lab: string;
  runtime: string;
  durationMs: number;
  steps: StepResult[];
  status: LabStatus;
}

/** Steps of different contexts in one list: each keeps its own context. */
function bindSteps<Ctx>(steps: Step<Ctx>[], ctx: Ctx): Step<undefined>[] {
  return steps.map((step) => ({
    title: step.title,
    concurrent: step.concurrent,
    run: step.run ? async (_: undefined, progress: (line: string) => void) => step.run!(ctx, progress) : undefined,
    children: step.children ? () => bindSteps(step.children!(ctx), ctx) : undefined,
  }));
}

/**
 * Everything `up` does, in order: the runtime's steps create the clusters;
 * from then on only their API is used (OCM, then the addons).
 */
async function labSteps<Ctx>(
  runtime: Runtime<Ctx>,
  config: LabConfig,
  options: UpOptions & LifecycleOptions,
): Promise<{ steps: Step<undefined>[]; context: Ctx; rollback: () => Promise<void> }> {
  // Loaded here, not at the top: status, probe and down do without the install steps (a large module graph).
  const [{ deregisterSpokes }, { ocmSteps }, { addonSteps }] = await Promise.all([
    import('../install/deregister.js'),
    import('../install/ocm-steps.js'),
    import('../addons/lab-steps.js'),
  ]);
  const beforeRemove: UpOptions['beforeRemove'] = (removed, all, progress) => deregisterSpokes(config, options, removed, all, progress);
  const { context, steps, rollback } = runtime.upSteps(config, { ...options, beforeRemove });
  const install: InstallContext = { config, options, clusters: [] };
  const clustersStep: Step<InstallContext> = {
    title: 'Lab clusters',
    run: async (ctx) => {
      ctx.clusters = await runtime.clusters(config);
      return ctx.clusters.map((c) => `${c.name} at ${c.internalServer}`).join(', ');
    },
  };
  return {
    context,
    rollback,
    steps: [...bindSteps(steps, context), ...bindSteps([clustersStep, ...(options.install === false ? [] : [...ocmSteps(), ...addonSteps()])], install)],
  };
}

function toListrTasks<Ctx>(steps: Step<Ctx>[], ctx: Ctx, results: StepResult[]): ListrTask[] {
  return steps.map((step) => ({
    title: step.title,
    task: async (_: unknown, task) => {
      if (step.run) {
        const started = Date.now();
        const outcome = await step.run(ctx, (line) => {
          task.output = line;
        });
        results.push({ title: step.title, result: outcome ?? 'done', durationMs: Date.now() - started });
        if (outcome) task.title = `${step.title}: ${outcome}`;
      }
      if (step.children) {
        return task.newListr(toListrTasks(step.children(ctx), ctx, results), {
          concurrent: !!step.concurrent,
          exitOnError: true,
          rendererOptions: { collapseSubtasks: false },
        });
      }
      return undefined;
    },
    rendererOptions: { persistentOutput: false, outputBar: 1 },
  }));
}

function rendererFor(renderer: ProgressRenderer | undefined): ProgressRenderer {
  if (renderer) return renderer;
  return process.stdout.isTTY && !process.env.CI ? 'default' : 'simple';
}

/** Brings a lab up (or repairs it) through the chosen runtime, showing each step. */
export async function upLab(config: LabConfig, options: UpOptions & LifecycleOptions = {}): Promise<UpResult> {
  const started = Date.now();
  const runtime = await selectRuntime(options.runtime, { labName: config.name, existing: options.existing });
  const { context, steps, rollback } = await labSteps(runtime, config, options);
  const { Listr } = await import('listr2');
  const results: StepResult[] = [];
  const renderer = rendererFor(options.renderer);
  const list = new Listr(toListrTasks(steps, undefined, results), {
    renderer,
    fallbackRenderer: 'simple',
    exitOnError: true,
    rendererOptions: { collapseSubtasks: false },
  });
  try {
    await list.run();
  } catch (err) {
    await rollback().catch(() => undefined);
    throw err;
  } finally {
    const release = (context as { releaseLock?: () => Promise<void> }).releaseLock;
    if (release) await release().catch(() => undefined);
  }
  return { lab: config.name, runtime: runtime.name, durationMs: Date.now() - started, steps: results, status: await statusOf(runtime, config) };
}

export async function downLab(config: LabConfig, options: DownOptions & LifecycleOptions = {}): Promise<DownResult> {
  const runtime = await selectRuntime(options.runtime, { labName: config.name });
  // Clusters that outlive the lab: take off what up installed, then forget them.
  if (runtime.keepsClusters) await (await import('./uninstall.js')).uninstallFromClusters(runtime, config, options.onProgress);
  return runtime.down(config.name, options);
}

/** The runtime's view of the lab, with what the install layer adds ('ocm' once every spoke has joined). */
async function statusOf(runtime: Runtime<unknown>, config: LabConfig): Promise<LabStatus> {
  const status = await runtime.status(config);
  const ready = status.exists && status.clusters.length > 0 && status.clusters.every((c) => c.ready);
  if (!ready) return status;
  const { ocmCapabilities } = await import('../ocm/status.js');
  return { ...status, capabilities: [...status.capabilities, ...(await ocmCapabilities(config))] };
}

export async function labStatus(config: LabConfig, options: LifecycleOptions = {}): Promise<LabStatus> {
  // No state file: the runtime `auto` picks would say "not up"; say it without loading that runtime's modules.
  if ((options.runtime ?? 'auto') === 'auto' && !(await labStateExists(config.name))) return notUpStatus(config.name, (await resolveRuntime('auto')).name);
  return statusOf(await selectRuntime(options.runtime, { labName: config.name }), config);
}

export interface ProbeReport {
  from: string;
  vpc: string;
  /** The cluster named as target, when one was. */
  cluster: string | null;
  target: string;
  connected: boolean;
}

/**
 * A TCP connection from inside cluster `from`'s network to `target`: a cluster
 * name (its API server, at the address other clusters of the lab dial) or
 * `host:port`.
 */
export async function probeFromCluster(
  config: LabConfig,
  from: string,
  target: string,
  options: LifecycleOptions & { timeoutMs?: number } = {},
): Promise<ProbeReport> {
  const runtime = await selectRuntime(options.runtime, { labName: config.name });
  const source = config.clusters.find((c) => c.name === from);
  if (!source) throw new NotFoundError(`lab '${config.name}' has no cluster '${from}'`, { hint: `clusters: ${config.clusters.map((c) => c.name).join(', ')}` });
  let cluster: string | null = null;
  let endpoint: { host: string; port: number };
  if (config.clusters.some((c) => c.name === target)) {
    const found = (await runtime.clusters(config)).find((c) => c.name === target);
    if (!found) throw new NotFoundError(`cluster '${target}' of lab '${config.name}' is not up`, { hint: 'ocm-lab up' });
    const url = new URL(found.internalServer);
    cluster = target;
    endpoint = { host: url.hostname, port: Number(url.port || 443) };
  } else {
    endpoint = parseHostPort(target);
  }
  const connected = await runtime.probe(config, from, endpoint, options.timeoutMs ?? 3_000);
  const host = endpoint.host.includes(':') && !endpoint.host.startsWith('[') ? `[${endpoint.host}]` : endpoint.host;
  return { from, vpc: source.vpc, cluster, target: `${host}:${endpoint.port}`, connected };
}

function parseHostPort(text: string): { host: string; port: number } {
  const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(text);
  const port = m ? Number(m[2]) : NaN;
  if (!m || port < 1 || port > 65535) {
    throw new InvalidInputError(`'${text}' is neither a cluster of the lab nor host:port`, {
      hint: 'name a cluster (e.g. hub) or give host:port, e.g. 10.1.0.10:6443',
    });
  }
  return { host: (m[1] as string).replace(/^\[|\]$/g, ''), port };
}
