import fs from 'node:fs/promises';
import path from 'node:path';
import type { LabConfig } from '../../config/index.js';
import { labDir } from '../../paths.js';
import { writeFileAtomic } from '../../util/atomic-file.js';
import type { ExistingClusterSpec } from './contexts.js';

/**
 * What a lab on existing clusters remembers (`<labDir>/state.json`, the same
 * file and `runtime`/`config` fields as every runtime): which kubeconfig and
 * contexts it was given. The credentials themselves are in the lab's
 * kubeconfig files (0600), not here.
 */
export interface ExistingLabState {
  version: 1;
  lab: string;
  runtime: 'existing';
  createdAt: string;
  config: LabConfig;
  existing: { kubeconfig: string; clusters: ExistingClusterSpec[] };
}

export function stateFile(labName: string): string {
  return path.join(labDir(labName), 'state.json');
}

/** The state of an existing-clusters lab, or null when there is none (or the lab belongs to another runtime). */
export async function readExistingState(labName: string): Promise<ExistingLabState | null> {
  const text = await fs.readFile(stateFile(labName), 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    throw err;
  });
  if (text === null) return null;
  const state = JSON.parse(text) as ExistingLabState;
  return state.runtime === 'existing' && state.existing ? state : null;
}

export async function writeExistingState(state: ExistingLabState): Promise<void> {
  await writeFileAtomic(stateFile(state.lab), `${JSON.stringify(state, null, 2)}\n`, 0o600);
}
