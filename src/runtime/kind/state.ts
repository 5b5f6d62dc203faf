import path from 'node:path';
import type { LabConfig } from '../../config/types.js';
import { readLabState, type LabState } from '../../config/lab-state.js';
import type { RecordedEngine } from '../../host/engine.js';
import { parseRecordedEngine } from '../../host/recorded-engine.js';
import { labDir } from '../../paths.js';
import { refuseOtherRuntime } from '../base.js';
import { reshapeRefusal } from '../reshape.js';

/**
 * The kind runtime's part of a lab's state (`runtimeState` of
 * `<labDir>/state.json`): the node image, the lab images it pushed to the image registry and the engine it
 * runs on. The engine's objects themselves are found by name and label, so a lost state file
 * does not orphan them.
 */
export interface KindRuntimeState {
  nodeImage: string;
  images: string[];
  /** The engine `up` brought the lab up on: every later command uses it. Absent in a lab brought up before it was recorded. */
  engine?: RecordedEngine;
}

export type KindLabState = LabState<KindRuntimeState>;

/** The state of a kind lab, or null when there is none; a lab of another runtime is refused (exit 6), an unreadable engine record too. */
export async function readKindState(lab: string): Promise<KindLabState | null> {
  const state = await readLabState<KindRuntimeState>(lab);
  refuseOtherRuntime(state, 'kind', lab);
  if (!state) return null;
  const { engine: raw, ...rest } = state.runtimeState;
  const engine = parseRecordedEngine(raw, path.join(labDir(lab), 'state.json'));
  return { ...state, runtimeState: { ...rest, ...(engine ? { engine } : {}) } };
}

/** The reshape rules of every runtime that creates its clusters; Docker picks the subnets when the lab file names no range. */
export function kindReshapeRefusal(current: LabConfig, next: LabConfig): string | null {
  return reshapeRefusal(current, next, 'chosen by Docker');
}
