import fs from 'node:fs/promises';
import type { ListrTask } from 'listr2';
import type { LabConfig } from '../config/index.js';
import { InvalidInputError, LabError, NotFoundError } from '../errors.js';
import { OCM_LAB_IMAGE } from '../images/catalogue.js';
import { labDir } from '../paths.js';
import { labStateExists, resolveRuntime, selectRuntime, type RuntimeChoice } from '../runtime/registry.js';
import { notUpStatus } from '../runtime/not-up.js';
import { bindSteps, runtimeUp } from '../runtime/base.js';
import { lockLab } from '../runtime/lab-lock.js';
import type { DownOptions, DownResult, LabStatus, Runtime, Step, UpOptions } from '../runtime/types.js';
import type { InstallContext } from '../ocm/install-context.js';

type ProgressRenderer = 'default' | 'simple' | 'verbose' | 'silent';

export interface LifecycleOptions {
  runtime?: RuntimeChoice;
  renderer?: ProgressRenderer;
  /** false: only the runtime's clusters, without OCM and the addons (e.g. to try the existing runtime on them). */
  install?: boolean;
  /** The runtime's own options (e.g. existing: `kubeconfig`, `hubContext`, `spokeContexts`), checked by the runtime. */
  runtimeOptions?: Record<string, unknown>;
  /** What `down` is doing, line by line (taking OCM off existing clusters can take minutes). */
  onProgress?: (line: string) => void;
}

interface StepResult {
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

/**
 * Everything `up` does, in order: the runtime's steps create the clusters;
 * from then on only their API is used (OCM, then the addons).
 */
async function labSteps<Ctx>(
  runtime: Runtime<Ctx>,
  config: LabConfig,
  options: UpOptions & LifecycleOptions,
): Promise<{ steps: Step<undefined>[]; install: InstallContext; rollback: () => Promise<void>; release: () => Promise<void> }> {
  // Loaded here, not at the top: status, probe and down do without the install steps (a large module graph).
  const [{ deregisterSpokes }, { ocmSteps }, { addonSteps }] = await Promise.all([
    import('../ocm/deregister.js'),
    import('../ocm/install.js'),
    import('../addons/lab-addons.js'),
  ]);
  const install: InstallContext = { config, options, clusters: [] };
  const beforeRemove: UpOptions['beforeRemove'] = (removed, all, progress) => deregisterSpokes(install.config, options, removed, all, progress);
  const up = runtimeUp(runtime, config, { ...options, beforeRemove });
  const clustersStep: Step<InstallContext> = {
    title: 'Lab clusters',
    run: async (ctx) => {
      // The runtime may have resolved the config (existing: clusters from contexts); the installs follow it.
      ctx.config = up.config();
      ctx.clusters = await runtime.clusters(ctx.config);
      return ctx.clusters.map((c) => `${c.name} at ${c.internalServer}`).join(', ');
    },
  };
  return {
    install,
    rollback: up.rollback,
    release: up.release,
    steps: [...up.steps, ...bindSteps([clustersStep, ...(options.install === false ? [] : [...ocmSteps(), ...addonSteps()])], install)],
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
  const runtime = await selectRuntime(options.runtime ?? config.runtime?.name, {
    labName: config.name,
    options: options.runtimeOptions,
    fileOptions: config.runtime?.options,
  });
  const { steps, install, rollback, release } = await labSteps(runtime, config, options);
  const { Listr, PRESET_TIMER } = await import('listr2');
  const results: StepResult[] = [];
  const renderer = rendererFor(options.renderer);
  // Each finished step shows its duration, in a terminal and in CI logs alike: where an `up` spent its time is read there.
  const list = new Listr(toListrTasks(steps, undefined, results), {
    renderer,
    fallbackRenderer: 'simple',
    exitOnError: true,
    rendererOptions: { collapseSubtasks: false, timer: PRESET_TIMER },
    fallbackRendererOptions: { timer: PRESET_TIMER },
  });
  try {
    await list.run();
  } catch (err) {
    await rollback().catch(() => undefined);
    throw err;
  } finally {
    await release();
  }
  return { lab: config.name, runtime: runtime.name, durationMs: Date.now() - started, steps: results, status: await statusOf(runtime, install.config) };
}

/** Takes a lab down under its lock (an `up` or `down` already working on it makes this one exit 6). */
export async function downLab(config: LabConfig, options: DownOptions & LifecycleOptions = {}): Promise<DownResult> {
  const runtime = await selectRuntime(options.runtime, { labName: config.name });
  const release = await lockLab(config.name, { ifExists: true });
  let result: DownResult;
  try {
    // Clusters that outlive the lab: take off what up installed, then forget them.
    const notRemoved = runtime.keepsClusters
      ? await import('./uninstall.js').then((m) => m.uninstallFromClusters(runtime, config, options.onProgress, options.force))
      : [];
    result = await runtime.down(config.name, options);
    if (notRemoved.length) result = { ...result, notRemoved };
  } finally {
    await release();
  }
  // --force promises that nothing of the lab is left on this machine, whatever stayed on the clusters.
  if (options.force && !options.keepData) {
    const dir = labDir(config.name);
    if (
      await fs.stat(dir).then(
        () => true,
        () => false,
      )
    )
      throw new LabError('failure', `down --force: lab '${config.name}' still has its directory ${dir} after down`);
  }
  return result;
}

/** The runtime's view of the lab, with what the install layer adds ('ocm' once every spoke has joined). */
async function statusOf(runtime: Runtime<unknown>, config: LabConfig): Promise<LabStatus> {
  const status = await runtime.status(config);
  const ready = status.exists && status.clusters.length > 0 && status.clusters.every((c) => c.ready);
  if (!ready) return status;
  const { ocmCapabilities } = await import('../ocm/status.js');
  // The clusters the runtime has: on existing clusters they come from the contexts, not from the lab file.
  const clusters = status.clusters.map((c) => ({ name: c.name, vpc: c.vpc, hub: c.hub }));
  return { ...status, capabilities: [...status.capabilities, ...(await ocmCapabilities({ ...config, clusters }))] };
}

export async function labStatus(config: LabConfig, options: LifecycleOptions = {}): Promise<LabStatus> {
  // No state file: the runtime `auto` picks would say "not up"; say it without loading that runtime's modules.
  if ((options.runtime ?? 'auto') === 'auto' && !(await labStateExists(config.name))) return notUpStatus(config.name, (await resolveRuntime('auto')).name);
  return statusOf(await selectRuntime(options.runtime, { labName: config.name }), config);
}

/** Our image as the lab's pods pull it: the runtime's record of the hub (existing clusters: `--image-registry`'s copy), else OCM_LAB_IMAGE. */
export async function labPodImage(config: LabConfig, options: LifecycleOptions = {}): Promise<string> {
  const clusters = await (await selectRuntime(options.runtime, { labName: config.name })).clusters(config);
  return clusters.find((c) => c.hub)?.ocmLabImage ?? OCM_LAB_IMAGE;
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
