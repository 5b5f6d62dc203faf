import type { LabConfig } from '../../config/types.js';
import { readLabState, type LabState } from '../../config/lab-state.js';
import { refuseOtherRuntime } from '../base.js';
import { reshapeRefusal } from '../reshape.js';

/**
 * The kind runtime's part of a lab's state (`runtimeState` of
 * `<labDir>/state.json`): the node image and the lab images it pushed to the image registry. The
 * Docker objects themselves are found by name and label, so a lost state file
 * does not orphan them.
 */
export interface KindRuntimeState {
  nodeImage: string;
  images: string[];
}

export type KindLabState = LabState<KindRuntimeState>;

/** The state of a kind lab, or null when there is none; a lab of another runtime is refused (exit 6). */
export async function readKindState(lab: string): Promise<KindLabState | null> {
  const state = await readLabState<KindRuntimeState>(lab);
  refuseOtherRuntime(state, 'kind', lab);
  return state;
}

/** The reshape rules of every runtime that creates its clusters; Docker picks the subnets when the lab file names no range. */
export function kindReshapeRefusal(current: LabConfig, next: LabConfig): string | null {
  return reshapeRefusal(current, next, 'chosen by Docker');
}
