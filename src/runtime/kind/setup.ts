import type { LabConfig } from '../../config/index.js';
import { KIND_NODE_BINARIES, KUBERNETES_BINARIES, OCM_BINARIES, requireKubernetesRelease, type ArtifactsMode, type BinaryName } from '../../provision/index.js';
import type { PreparedImage, RuntimePreparation } from '../types.js';
import { requireDockerEngine } from '../../images/docker.js';
import { BASE_IMAGE, baseImageKey, ensureBaseImage } from '../../images/base-image.js';
import { localImageKey, type BuiltImage } from '../../images/docker-build.js';
import type { ImageBuildOptions } from '../../images/options.js';
import { componentImageKey, componentImageSpecs, ensureComponentImage, ensureKindNodeImageDetail, nodeImageKey, nodeImageRef } from './images/index.js';
import { ensureLabImagesDetail, labImages } from '../../images/lab-images.js';
import { builtRegistryImage, REGISTRY_IMAGE, registryImageKey } from '../../images/registry/index.js';
import { registryImage } from '../../images/registry/lab-registry.js';
import { loadCollaborators, type ImageSources } from './collaborators.js';

/** One offline image `setup --runtime kind` makes: its name, the key its inputs give, and how to make it. */
interface KindImageJob {
  ref: string;
  key: () => string | Promise<string>;
  ensure: (opts: ImageBuildOptions) => Promise<BuiltImage>;
}

/**
 * Every image the kind runtime needs offline, in build order (the base first:
 * others are built FROM it; the node image after the components it preloads; then the lab's image registry).
 */
function kindImageJobs(kubernetesVersion: string): KindImageJob[] {
  const release = requireKubernetesRelease(kubernetesVersion);
  const withVersion = (o: ImageBuildOptions): ImageBuildOptions => ({ ...o, kubernetesVersion });
  return [
    { ref: BASE_IMAGE, key: baseImageKey, ensure: ensureBaseImage },
    ...componentImageSpecs(release).map((spec) => ({
      ref: spec.ref,
      key: () => componentImageKey(spec, release),
      ensure: (o: ImageBuildOptions) => ensureComponentImage(spec, withVersion(o)),
    })),
    { ref: nodeImageRef(kubernetesVersion), key: () => nodeImageKey(release), ensure: (o: ImageBuildOptions) => ensureKindNodeImageDetail(withVersion(o)) },
    { ref: REGISTRY_IMAGE, key: registryImageKey, ensure: builtRegistryImage },
  ];
}

const prepared = (built: BuiltImage): PreparedImage => ({ image: built.ref, key: built.key, source: built.source });

/** Built here: kind and the node image's binaries, then every image the kind runtime needs offline (present, loaded or built). */
function builtJobs(config: LabConfig, binDir: string | undefined) {
  return [
    ...kindImageJobs(config.kubernetesVersion).map((job) => ({
      title: `image ${job.ref}`,
      run: async (progress: (line: string) => void) => [prepared(await job.ensure({ binDir, onProgress: progress }))],
    })),
    {
      title: `images the lab runs (${labImages(config).join(', ')})`,
      run: async (progress: (line: string) => void) => (await ensureLabImagesDetail(config, { binDir, onProgress: progress })).map(prepared),
    },
  ];
}

/**
 * Official: what `up` would take, made ahead: the node image (kind's by digest, or built when this engine
 * cannot run it), the registry's image and ours on the official Node.js base. OCM's and upstream's images
 * are copied registry to registry by `up`, into the lab's registry, which `setup` does not start.
 */
function officialJobs(config: LabConfig, sources: ImageSources) {
  const fetched = (image: string, source: string): PreparedImage => ({ image, key: '-', source });
  return [
    {
      title: 'node image',
      run: async (progress: (line: string) => void) => {
        const node = await (await loadCollaborators()).ensureNodeImage(config, sources, progress);
        return [fetched(node.ref, node.built ? 'built' : 'pulled')];
      },
    },
    {
      title: "the image registry's image",
      run: async (progress: (line: string) => void) => {
        const ref = await registryImage(sources, progress);
        return [fetched(ref, ref === REGISTRY_IMAGE ? 'built' : 'pulled')];
      },
    },
    {
      title: 'images the lab runs',
      run: async (progress: (line: string) => void) => {
        const made = await (await loadCollaborators()).ensureLabImages(config, sources, progress);
        return [...made.local.map((image) => fetched(image, 'built')), ...made.upstream.map((image) => fetched(image, 'copied by up'))];
      },
    },
  ];
}

/** `setup --runtime kind`: what the kind runtime's `up` needs, from the sources `setup` decided on. */
export const kindPreparation: RuntimePreparation = {
  binaries: (artifacts: ArtifactsMode, withOcm: boolean): BinaryName[] =>
    artifacts === 'build' ? [...new Set([...KUBERNETES_BINARIES, ...(withOcm ? OCM_BINARIES : []), ...KIND_NODE_BINARIES])] : ['kubectl', 'kind'],
  require: async () => {
    await requireDockerEngine();
  },
  jobs: (config, binDir, sources) => (sources.artifacts === 'build' ? builtJobs(config, binDir) : officialJobs(config, sources)),
  check: async (config: LabConfig) => {
    const images: PreparedImage[] = [];
    for (const job of kindImageJobs(config.kubernetesVersion)) {
      const key = await job.key();
      images.push({ image: job.ref, key, source: (await localImageKey(job.ref)) === key ? 'present' : 'MISSING' });
    }
    for (const ref of labImages(config)) {
      const key = await localImageKey(ref);
      images.push({ image: ref, key: key ?? '-', source: key ? 'present' : 'MISSING' });
    }
    return images;
  },
};
