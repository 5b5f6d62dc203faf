import type { RuntimeDefinition } from '../types.js';
import { refuseUnknownOptions } from '../options.js';
import { LocalRuntime } from './runtime.js';

/** Real control planes as processes in network namespaces, a nodelet as each cluster's node: `auto`'s choice where kind is not usable. */
export const localRuntime: RuntimeDefinition = {
  name: 'local',
  autoRank: 2,
  create: (options) => {
    refuseUnknownOptions('local', options, []);
    return new LocalRuntime();
  },
};
