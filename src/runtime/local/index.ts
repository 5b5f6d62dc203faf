import { refuseUnknownOptions } from '../options.js';
import type { RuntimeDefinition } from '../types.js';

/** Real control planes as processes in network namespaces, a nodelet as each cluster's node: `auto`'s choice where kind is not usable. */
export const localRuntime: RuntimeDefinition = {
  name: 'local',
  autoRank: 2,
  create: async (options) => {
    refuseUnknownOptions('local', options, []);
    const { LocalRuntime } = await import('./runtime.js');
    return new LocalRuntime();
  },
};
