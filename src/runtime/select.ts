import fs from 'node:fs/promises';
import path from 'node:path';
import { InvalidInputError } from '../errors.js';
import { labDir } from '../paths.js';
import type { ExistingClustersInput } from './existing/contexts.js';
import type { LabConfig } from '../config/index.js';
import type { PlanOptions, Runtime, RuntimeName, RuntimePlan } from './types.js';

export type RuntimeChoice = RuntimeName | 'auto';
export const RUNTIME_CHOICES: RuntimeChoice[] = ['auto', 'local', 'kind', 'existing'];

export interface RuntimeSelection {
  /** The lab the command is about: `auto` takes the runtime it was brought up with. */
  labName?: string;
  /** `--runtime existing`: the user's kubeconfig and contexts (only `up` gives them). */
  existing?: ExistingClustersInput;
}

/** The runtime a lab was brought up with (`runtime` of `<labDir>/state.json`), or null when there is no such lab. */
export async function labRuntimeName(labName: string): Promise<RuntimeName | null> {
  const text = await fs.readFile(path.join(labDir(labName), 'state.json'), 'utf8').catch(() => null);
  if (text === null) return null;
  try {
    const runtime = (JSON.parse(text) as { runtime?: unknown }).runtime;
    return runtime === 'local' || runtime === 'kind' || runtime === 'existing' ? runtime : null;
  } catch {
    return null;
  }
}

/** Whether `<labDir>/state.json` exists: every runtime records its lab there, so without it no runtime has the lab. */
export async function labStateExists(labName: string): Promise<boolean> {
  return fs.access(path.join(labDir(labName), 'state.json')).then(
    () => true,
    () => false,
  );
}

/** A runtime and why it was chosen (for `auto`: "runtime: kind (a Docker engine answers at …)"). */
export interface ResolvedRuntime {
  name: RuntimeName;
  reason: string;
}

/**
 * What `auto` means here: the runtime of the lab when it exists; else kind when
 * a Docker engine answers and the kind CLI is there, else local. `existing` is
 * never picked for a new lab: it needs the user's clusters.
 */
export async function resolveRuntime(choice: RuntimeChoice = 'auto', labName?: string): Promise<ResolvedRuntime> {
  if (choice !== 'auto') return { name: choice, reason: 'chosen with --runtime' };
  const recorded = labName ? await labRuntimeName(labName) : null;
  if (recorded) return { name: recorded, reason: `lab '${labName}' was brought up with it` };
  const fromEnv = process.env.OCM_LAB_RUNTIME;
  if (fromEnv && fromEnv !== 'auto') {
    if (fromEnv !== 'local' && fromEnv !== 'kind') throw new InvalidInputError(`$OCM_LAB_RUNTIME is '${fromEnv}'; choose auto, local or kind`);
    return { name: fromEnv, reason: 'chosen with $OCM_LAB_RUNTIME' };
  }
  const kind = await (await import('./kind/availability.js')).kindAvailability();
  if (kind.available) return { name: 'kind', reason: kind.reason ?? 'Docker and kind are usable' };
  return { name: 'local', reason: `the kind runtime is not usable: ${kind.reason ?? 'unknown'}` };
}

/** The runtime `name`; only its modules are loaded (each runtime's module graph costs start-up time). */
export async function runtimeNamed(name: RuntimeName, selection: RuntimeSelection = {}): Promise<Runtime<any>> {
  switch (name) {
    case 'local':
      return new (await import('./local/runtime.js')).LocalRuntime();
    case 'kind':
      return new (await import('./kind/runtime.js')).KindRuntime();
    case 'existing':
      return new (await import('./existing/runtime.js')).ExistingRuntime(selection.existing);
    default:
      throw new InvalidInputError(`--runtime ${String(name)} is not a runtime; choose one of: ${RUNTIME_CHOICES.join(', ')}`);
  }
}

export async function selectRuntime(choice: RuntimeChoice = 'auto', selection: RuntimeSelection = {}): Promise<Runtime<any>> {
  return await runtimeNamed((await resolveRuntime(choice, selection.labName)).name, selection);
}

/**
 * `--dry-run`: what `up` or `down` would do to `config`'s lab on the runtime
 * `choice` resolves to (for `auto`, as up and down resolve it); changes nothing.
 */
export async function runtimePlan(
  choice: RuntimeChoice,
  config: LabConfig,
  options: PlanOptions,
  selection: RuntimeSelection = {},
): Promise<{ resolved: ResolvedRuntime; plan: RuntimePlan }> {
  const resolved = await resolveRuntime(choice, config.name);
  return { resolved, plan: await (await runtimeNamed(resolved.name, selection)).plan(config, options) };
}
