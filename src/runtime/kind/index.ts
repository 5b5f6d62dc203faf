import type { RuntimeDefinition } from '../types.js';
import { refuseUnknownOptions, stringOption } from '../options.js';
import { KindRuntime } from './runtime.js';

/** kind clusters on one Docker network per VPC: `auto`'s first choice where a Docker engine and kind answer. Option: `nodeImage`. */
export const kindRuntime: RuntimeDefinition = {
  name: 'kind',
  autoRank: 1,
  create: (options) => {
    refuseUnknownOptions('kind', options, ['nodeImage']);
    return new KindRuntime(stringOption('kind', options, 'nodeImage'));
  },
  prepare: async () => (await import('./setup.js')).kindPreparation,
};
