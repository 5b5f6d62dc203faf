import { Listr, type ListrTask } from 'listr2';
import type { LabConfig } from '../config/index.js';
import { selectRuntime, type RuntimeChoice } from '../runtime/select.js';
import type { DownOptions, DownResult, LabStatus, Step, UpOptions } from '../runtime/types.js';

export type ProgressRenderer = 'default' | 'simple' | 'verbose' | 'silent';

export interface LifecycleOptions {
  runtime?: RuntimeChoice;
  renderer?: ProgressRenderer;
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
  const runtime = await selectRuntime(options.runtime);
  const { context, steps, rollback } = runtime.upSteps(config, options);
  const results: StepResult[] = [];
  const renderer = rendererFor(options.renderer);
  const list = new Listr(toListrTasks(steps, context, results), {
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
  return { lab: config.name, runtime: runtime.name, durationMs: Date.now() - started, steps: results, status: await runtime.status(config) };
}

export async function downLab(config: LabConfig, options: DownOptions & LifecycleOptions = {}): Promise<DownResult> {
  const runtime = await selectRuntime(options.runtime);
  return runtime.down(config.name, options);
}

export async function labStatus(config: LabConfig, options: LifecycleOptions = {}): Promise<LabStatus> {
  const runtime = await selectRuntime(options.runtime);
  return runtime.status(config);
}
