import type { RuntimeDefinition } from '../types.js';
import { KindRuntime } from './runtime.js';

/** kind clusters on one Docker network per VPC: `auto`'s first choice where a Docker engine and kind answer. */
export const kindRuntime: RuntimeDefinition = {
  name: 'kind',
  autoRank: 1,
  create: () => new KindRuntime(),
  prepare: async () => (await import('./setup.js')).kindPreparation,
};
