import type { LabConfig } from '../config/types.js';
import { readLabState, writeLabState, type LabState } from '../config/lab-state.js';
import { ConflictError } from '../errors.js';
import { labDir } from '../paths.js';
import { lockLab, type ReleaseLabLock } from './lab-lock.js';
import { runtimeHostReachesNodes } from './registry.js';
import type { LabRun, Runtime, Step, UpOptions } from './types.js';

/** Steps of different contexts in one list: each keeps its own context. */
export function bindSteps<Ctx>(steps: Step<Ctx>[], ctx: Ctx): Step<undefined>[] {
  return steps.map((step) => ({
    title: step.title,
    concurrent: step.concurrent,
    run: step.run ? async (_: undefined, progress: (line: string) => void) => step.run!(ctx, progress) : undefined,
    children: step.children ? () => bindSteps(step.children!(ctx), ctx) : undefined,
  }));
}

/** Refuses (exit 6) a lab recorded by another runtime than `runtime`: its clusters are not this runtime's to touch. */
export function refuseOtherRuntime(state: LabState | null, runtime: string, lab: string): void {
  if (state && state.runtime !== runtime) {
    throw new ConflictError(`lab '${lab}' was brought up with the ${state.runtime} runtime, not ${runtime}`, {
      hint: `run 'ocm-lab down' to remove it (down uses the ${state.runtime} runtime), or give the lab another name`,
    });
  }
}

/** The first step of every `up` and how it ends: the base's chores, the same on every runtime. */
export interface RuntimeUp {
  steps: Step<undefined>[];
  /** The config this `up` brings up, once the first step has resolved it (before: the one given). */
  config(): LabConfig;
  /** After a failed `up`: removes a lab this `up` created (unless --retain). */
  rollback(): Promise<void>;
  /** Releases the lab lock (after success or failure). */
  release(): Promise<void>;
}

function newState<Ctx, R>(runtime: Runtime<Ctx, R>, config: LabConfig): LabState<R> {
  return {
    version: 1,
    lab: config.name,
    runtime: runtime.name,
    hostReachesNodes: runtimeHostReachesNodes(runtime.name),
    createdAt: new Date().toISOString(),
    config,
    runtimeState: runtime.initialState(config),
  };
}

/**
 * `up` on any runtime, as kind's create.go and kwokctl's base cluster do it:
 * the base checks the machine (the runtime's preflight), takes the lab lock,
 * refuses a lab of another runtime or of another shape, lets removed spokes go
 * (`beforeRemove`) and has the runtime delete them, records the state; then the
 * runtime's own steps run. A failure removes a lab this `up` created.
 */
export function runtimeUp<Ctx, R>(runtime: Runtime<Ctx, R>, config: LabConfig, options: UpOptions): RuntimeUp {
  const dir = labDir(config.name);
  const run: LabRun<R> = {
    config,
    options,
    dir,
    previous: null,
    state: newState(runtime, config),
    createdNow: false,
    removed: [],
    save: async () => writeLabState(run.state),
  };
  const provisioning = runtime.provisioning(run);
  let release: ReleaseLabLock | undefined;
  const baseStep: Step<undefined> = {
    title: 'Lab directory and lock',
    run: async (_, progress) => {
      const before = await readLabState<R>(config.name);
      refuseOtherRuntime(before, runtime.name, config.name);
      run.config = runtime.resolveConfig ? runtime.resolveConfig(config, before) : config;
      const running = new Set(before?.config.clusters.map((c) => c.name) ?? []);
      const checked = await provisioning.preflight?.(
        run.config.clusters.filter((c) => !running.has(c.name)).map((c) => c.name),
        progress,
      );
      release = await lockLab(config.name);
      // Read again under the lock: another command may have changed the lab since the preflight.
      const previous = await readLabState<R>(config.name);
      refuseOtherRuntime(previous, runtime.name, config.name);
      run.config = runtime.resolveConfig ? runtime.resolveConfig(config, previous) : config;
      const refusal = previous ? runtime.reshapeRefusal(previous.config, run.config) : null;
      if (refusal) {
        throw new ConflictError(`lab '${config.name}' already exists and ${refusal}; up only adds and removes spokes of a running lab`, {
          hint: `run 'ocm-lab down${config.source ? ` --config ${config.source}` : ''}' first, or give the new lab another name`,
        });
      }
      run.previous = previous;
      run.createdNow = !previous;
      run.removed = previous ? previous.config.clusters.filter((c) => !run.config.clusters.some((x) => x.name === c.name)).map((c) => c.name) : [];
      if (previous && run.removed.length) {
        // Let them go while they still run, then delete them; the runtime's steps see the new shape.
        const all = await runtime.clusters(previous.config);
        await options.beforeRemove?.(
          all.filter((c) => run.removed.includes(c.name)),
          all,
          progress,
        );
        await provisioning.deleteClusters(run.removed, progress);
      }
      run.state = previous ?? newState(runtime, run.config);
      run.state.config = run.config;
      // A lab brought up before the reach was recorded gains it here (`proxy kubectl` reads it).
      run.state.hostReachesNodes = runtimeHostReachesNodes(runtime.name);
      await run.save();
      const what = !previous ? 'new lab' : run.removed.length ? `existing lab; removed ${run.removed.join(', ')}` : 'existing lab';
      return checked ? `${what}; ${checked}` : what;
    },
  };
  return {
    steps: [baseStep, ...bindSteps(provisioning.steps, provisioning.context)],
    config: () => run.config,
    rollback: async () => {
      await provisioning.settle?.(true);
      if (!run.createdNow || options.retain) return;
      if (provisioning.rollback) await provisioning.rollback();
      else await runtime.down(config.name, {});
    },
    release: async () => {
      await provisioning.settle?.(false);
      await release?.();
      release = undefined;
    },
  };
}
