import { NotFoundError } from '../../errors.js';
import { dockerInspect, requireDockerEngine } from '../docker.js';
import { registryFacts, removeRegistry } from './container.js';
import { pushMissingImages } from './push.js';

/** Where to push images for a lab's clusters, and where they pull them from. */
export interface ImageRegistryInfo {
  container: string;
  running: boolean;
  /** `localhost:<port>`: what to tag and push to on this machine. */
  host: string;
  port: number;
  /** `<name>:<port>`: the registry as nodes and pods reach it. */
  hostFromClusters: string;
  /** The Docker volume that holds its data (the cache every lab shares). */
  volume: string;
  image: string;
  networks: string[];
}

export interface ImageRegistryControl {
  /** The registry, or null when there is none yet (the first `up` makes it). */
  show(): Promise<ImageRegistryInfo | null>;
  /** Removes the registry and its data; what was removed. */
  remove(): Promise<string[]>;
  /** Pushes images of this machine's Docker engine into the running registry; each with where clusters pull it. */
  push(images: readonly string[]): Promise<PushedImage[]>;
}

interface PushedImage {
  image: string;
  /** False when the registry already held this very build. */
  pushed: boolean;
  /** The name a pod's `image:` uses on every kind lab of this machine. */
  pullAs: string;
}

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
