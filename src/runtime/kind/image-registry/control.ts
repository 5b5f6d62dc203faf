import { NotFoundError } from '../../../errors.js';
import { dockerInspect, requireDockerEngine } from '../../../images/docker.js';
import type { ImageRegistryControl, PushedImage } from '../../types.js';
import { registryFacts, removeRegistry } from './container.js';
import { pushMissingImages } from './push.js';

/**
 * `ocm-lab registry push`: every image is looked for before any is pushed, so a list with a typo
 * pushes nothing and names each missing image.
 */
async function pushImages(images: readonly string[]): Promise<PushedImage[]> {
  await requireDockerEngine();
  const registry = await registryFacts();
  if (!registry?.running) {
    throw new NotFoundError(registry ? `the image registry ${registry.container} is stopped` : 'there is no image registry on this machine yet', {
      hint: "'ocm-lab up --runtime kind' creates or starts it",
    });
  }
  const missing: string[] = [];
  for (const image of images) if ((await dockerInspect('image', [image])).length === 0) missing.push(image);
  if (missing.length) {
    throw new NotFoundError(`not in this machine's Docker engine, so not pushed: ${missing.join(', ')}`, {
      hint: 'build or pull each image first (docker build -t NAME . / docker pull NAME); nothing was pushed',
    });
  }
  const pushed = new Set(await pushMissingImages(registry.port, images));
  return images.map((image) => ({ image, pushed: pushed.has(image), pullAs: image }));
}

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
  push: pushImages,
};
