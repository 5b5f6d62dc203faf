import fs from 'node:fs/promises';
import path from 'node:path';
import type { LabConfig } from '../../config/index.js';
import { writeFileAtomic } from '../../util/atomic-file.js';
import type { NetworkPlan, NetworkResource } from './network/index.js';
import type { RuntimeName } from '../types.js';

/**
 * What a lab remembers about itself between commands. Everything `down` must
 * remove is in here (network resources are recorded before they are created),
 * so a crash half-way through `up` still leaves a lab that `down` can remove.
 */
export interface LabState {
  version: 1;
  lab: string;
  runtime: RuntimeName;
  createdAt: string;
  config: LabConfig;
  network: NetworkPlan | null;
  networkResources: NetworkResource[];
}

export function stateFile(labDirectory: string): string {
  return path.join(labDirectory, 'state.json');
}

export async function readState(labDirectory: string): Promise<LabState | null> {
  let text: string;
  try {
    text = await fs.readFile(stateFile(labDirectory), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const state = JSON.parse(text) as LabState;
  if (state.version !== 1) throw new Error(`${stateFile(labDirectory)}: unknown state version ${String(state.version)}`);
  return state;
}

export async function writeState(labDirectory: string, state: LabState): Promise<void> {
  await writeFileAtomic(stateFile(labDirectory), `${JSON.stringify(state, null, 2)}\n`, 0o600);
}

/** The parts of a lab's config that fix its shape; changing any of them needs `down` first. */
export { reshapeRefusal } from '../reshape.js';
