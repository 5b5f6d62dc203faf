export * from './types.js';
export { defaultLabConfig, hubCluster, spokeClusters } from './defaults.js';
export { checkCidr, loadLabConfig, parseLabConfig, renderLabConfig } from './load.js';
