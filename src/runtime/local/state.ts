import { readLabState, type LabState } from '../../config/lab-state.js';
import { refuseOtherRuntime } from '../base.js';
import type { NetworkPlan, NetworkResource } from './network/index.js';

/**
 * The local runtime's part of a lab's state (`runtimeState` of
 * `<labDir>/state.json`). Everything `down` must remove is in here (network
 * resources are recorded before they are created), so a crash half-way through
 * `up` still leaves a lab that `down` can remove.
 */
export interface LocalRuntimeState {
  network: NetworkPlan | null;
  networkResources: NetworkResource[];
}

export type LocalLabState = LabState<LocalRuntimeState>;

export function emptyLocalState(): LocalRuntimeState {
  return { network: null, networkResources: [] };
}

/** The state of lab `lab`, or null when it has none; a lab of another runtime is refused (exit 6). */
export async function readLocalState(lab: string): Promise<LocalLabState | null> {
  const state = await readLabState<LocalRuntimeState>(lab);
  refuseOtherRuntime(state, 'local', lab);
  return state;
}
