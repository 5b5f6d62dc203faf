export * from './types.js';
export { defaultLabConfig, hubCluster, spokeClusters } from './defaults.js';
export { parseLabConfig } from './parse.js';
export { loadLabConfig, recordedLabConfig, validateLabFile } from './load.js';
export { resolveOcmVersion } from './ocm-version.js';
export { withVersionFlags } from './version-flags.js';
export { renderLabConfig } from './render.js';
export { readLabState, type LabState } from './lab-state.js';
