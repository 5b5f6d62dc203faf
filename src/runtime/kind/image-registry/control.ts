import { requireDockerEngine } from '../../../images/docker.js';
import type { ImageRegistryControl } from '../../types.js';
import { registryFacts, removeRegistry } from './container.js';

/** What `ocm-lab registry` and `ocm-lab registry rm` do on kind. */
export const imageRegistryControl: ImageRegistryControl = {
  show: async () => {
    await requireDockerEngine();
    return registryFacts();
  },
  remove: async () => {
    await requireDockerEngine();
    return removeRegistry();
  },
};
