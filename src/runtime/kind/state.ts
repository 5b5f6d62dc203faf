import { reshapeRefusal } from '../reshape.js';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { LabConfig } from '../../config/index.js';
import { labDir } from '../../paths.js';
import { writeFileAtomic } from '../../util/atomic-file.js';

/**
 * What a kind lab remembers (`<labDir>/state.json`, the same `runtime` and
 * `config` fields as every runtime). The Docker objects themselves are found by
 * name and label, so a lost state file does not orphan them.
 */
export interface KindLabState {
  version: 1;
  lab: string;
  runtime: 'kind';
  createdAt: string;
  config: LabConfig;
  nodeImage: string;
  images: string[];
}

export function kindStateFile(lab: string): string {
  return path.join(labDir(lab), 'state.json');
}

/** The state of a kind lab, or null when there is none (or the lab belongs to another runtime). */
export async function readKindState(lab: string): Promise<KindLabState | null> {
  const text = await fs.readFile(kindStateFile(lab), 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    throw err;
  });
  if (text === null) return null;
  const state = JSON.parse(text) as KindLabState;
  return state.runtime === 'kind' ? state : null;
}

export async function writeKindState(state: KindLabState): Promise<void> {
  await writeFileAtomic(kindStateFile(state.lab), `${JSON.stringify(state, null, 2)}\n`, 0o600);
}

/** The reshape rules of every runtime that creates its clusters; Docker picks the subnets when the lab file names no range. */
export function kindReshapeRefusal(current: LabConfig, next: LabConfig): string | null {
  return reshapeRefusal(current, next, 'chosen by Docker');
}
