import fs from 'node:fs/promises';
import path from 'node:path';
import { InvalidInputError } from '../errors.js';
import { labDir } from '../paths.js';
import { ExistingRuntime } from './existing/runtime.js';
import type { ExistingClustersInput } from './existing/contexts.js';
import { LocalRuntime } from './local/runtime.js';
import type { Runtime, RuntimeName } from './types.js';

export type RuntimeChoice = RuntimeName | 'auto';
export const RUNTIME_CHOICES: RuntimeChoice[] = ['auto', 'local', 'existing'];

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

/**
 * `auto` takes the runtime of the lab when it exists, else the best one this
 * machine supports: only `local` today; `kind` (Docker networks + kind
 * clusters) will be preferred when Docker and kind are usable. `existing` is
 * never picked for a new lab: it needs the user's clusters.
 */
export async function selectRuntime(choice: RuntimeChoice = 'auto', selection: RuntimeSelection = {}): Promise<Runtime<any>> {
  const name = choice === 'auto' ? ((selection.labName ? await labRuntimeName(selection.labName) : null) ?? 'local') : choice;
  switch (name) {
    case 'local':
      return new LocalRuntime();
    case 'existing':
      return new ExistingRuntime(selection.existing);
    default:
      throw new InvalidInputError(`--runtime ${name} is not available yet; choose one of: ${RUNTIME_CHOICES.join(', ')}`);
  }
}
