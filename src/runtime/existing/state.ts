import { readLabState, type LabState } from '../../config/lab-state.js';
import { refuseOtherRuntime } from '../base.js';
import type { ExistingClusterSpec } from './contexts.js';

/**
 * The existing runtime's part of a lab's state (`runtimeState` of
 * `<labDir>/state.json`): which kubeconfig and contexts it was given. The
 * credentials themselves are in the lab's kubeconfig files (0600), not here.
 */
export interface ExistingRuntimeState {
  kubeconfig: string;
  clusters: ExistingClusterSpec[];
  /** `--image-registry`: our image as the lab's pods pull it (`REG/ocm-lab:<version>`); absent: OCM_LAB_IMAGE. */
  ocmLabImage?: string;
  /** The hub's API server as the spokes reach it, when not the hub context's server (hub-server.ts). */
  hubServer?: string;
}

export type ExistingLabState = LabState<ExistingRuntimeState>;

/** The state of a lab on existing clusters, or null when there is none; a lab of another runtime is refused (exit 6). */
export async function readExistingState(labName: string): Promise<ExistingLabState | null> {
  const state = await readLabState<ExistingRuntimeState | { existing?: ExistingRuntimeState }>(labName);
  refuseOtherRuntime(state, 'existing', labName);
  if (!state) return null;
  // Written before the state envelope: `existing: {kubeconfig, clusters}` beside the common fields.
  const legacy = (state.runtimeState as { existing?: ExistingRuntimeState }).existing;
  const runtimeState = legacy ?? (state.runtimeState as ExistingRuntimeState);
  if (typeof runtimeState.kubeconfig !== 'string' || !Array.isArray(runtimeState.clusters)) return null;
  return { ...state, runtimeState };
}
