import { refuseUnknownOptions, stringOption } from '../options.js';
import type { RuntimeDefinition } from '../types.js';

/** kind clusters on one Docker network per VPC: `auto`'s first choice where a Docker engine and kind answer. Option: `nodeImage`. */
export const kindRuntime: RuntimeDefinition = {
  name: 'kind',
  autoRank: 1,
  available: async () => {
    const { kindAvailability } = await import('./availability.js');
    return kindAvailability();
  },
  create: async (options) => {
    refuseUnknownOptions('kind', options, ['nodeImage']);
    const nodeImage = stringOption('kind', options, 'nodeImage');
    const { KindRuntime } = await import('./runtime.js');
    return new KindRuntime(nodeImage);
  },
  prepare: () => import('./setup.js').then((m) => m.kindPreparation),
  imageRegistry: () => import('./image-registry/control.js').then((m) => m.imageRegistryControl),
};
