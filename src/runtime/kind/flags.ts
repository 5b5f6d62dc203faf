import type { RuntimeUpFlag } from '../flags.js';

/** `up`'s flags for the kind runtime's options. */
export const KIND_UP_FLAGS: readonly RuntimeUpFlag[] = [
  {
    flag: 'node-image',
    option: 'nodeImage',
    withAuto: true,
    describe: 'the kind node image to use (e.g. kindest/node:v1.34.x) instead of the one ocm-lab builds',
  },
];
