import { RegistryUnavailableError } from '../../errors.js';
import { docker } from '../docker.js';
import type { ArtifactsMode } from '../../provision/artifacts.js';
import type { Mirrors } from '../../provision/mirrors.js';
import { KubeClient } from '../../kube/client.js';
import { applyObject } from '../../kube/objects.js';
import { ensureRegistry, type RegistryFacts } from './container.js';
import { localRegistryHosting } from './hosting.js';
import { builtRegistryImage, officialRegistryImage } from './image.js';
import { registryHostsFiles, writeNodeRegistryHosts } from './mirrors.js';
import { pushMissingImages } from './push.js';
import { copyUpstreamImages } from './upstream.js';

/** What `up` does with the image registry, step by step; each returns the line the step prints. */

/** Where the registry's image and the lab's upstream images come from (decided once by `up`). */
export interface RegistrySources {
  artifacts: ArtifactsMode;
  mirrors: Mirrors;
}

/** The lab's images for the registry: `local` ones are in the Docker engine (pushed), `upstream` ones are copied from their publishers. */
export interface RegistryImages {
  local: readonly string[];
  upstream: readonly string[];
  /** Under `auto`, when a publisher does not answer: makes the upstream images in the engine instead (built here), to be pushed. */
  buildUpstream: (progress: (line: string) => void) => Promise<void>;
}

/** The registry's image: distribution's by digest unless artifacts are built here (or, under `auto`, its registry does not answer). */
export async function registryImage(sources: RegistrySources, progress: (line: string) => void): Promise<string> {
  if (sources.artifacts !== 'build') {
    try {
      return await officialRegistryImage(sources.mirrors, progress);
    } catch (err) {
      if (sources.artifacts === 'official' || !(err instanceof RegistryUnavailableError)) throw err;
      progress(`registry image: ${err.message}; building it here instead`);
    }
  }
  return (await builtRegistryImage({ onProgress: progress })).ref;
}

/** The upstream images copied into the registry; under `auto`, built here and pushed when their publisher does not answer. */
async function upstreamIntoRegistry(port: number, images: RegistryImages, sources: RegistrySources, progress: (line: string) => void) {
  if (!images.upstream.length) return { copied: [] as string[], pushed: [] as string[] };
  if (sources.artifacts !== 'build') {
    try {
      return { copied: await copyUpstreamImages(port, images.upstream, sources.mirrors, progress), pushed: [] };
    } catch (err) {
      if (sources.artifacts === 'official' || !(err instanceof RegistryUnavailableError)) throw err;
      progress(`lab images: ${err.message}; building them here instead`);
    }
  }
  await images.buildUpstream(progress);
  return { copied: [], pushed: await pushMissingImages(port, images.upstream, progress) };
}

/** The registry running on the lab's networks, and the lab's images in it (pushed or copied only when it lacks them). */
export async function registryWithImages(
  networks: readonly string[],
  images: RegistryImages,
  sources: RegistrySources,
  progress: (line: string) => void,
): Promise<{ facts: RegistryFacts; pushed: string[]; summary: string }> {
  const { facts, did } = await ensureRegistry(await registryImage(sources, progress), networks, progress);
  const pushed = await pushMissingImages(facts.port, images.local, progress);
  const upstream = await upstreamIntoRegistry(facts.port, images, sources, progress);
  const total = images.local.length + images.upstream.length;
  const what = [
    pushed.length + upstream.pushed.length ? `pushed ${pushed.length + upstream.pushed.length}` : '',
    upstream.copied.length ? `copied ${upstream.copied.length} from their registries` : '',
  ].filter(Boolean);
  const inRegistry = what.length ? `${what.join(', ')} of ${total} images` : `all ${total} images there`;
  return {
    facts,
    pushed: [...pushed, ...upstream.pushed, ...upstream.copied],
    summary: `${facts.container} at ${facts.host} (${did.join(', ') || 'running'}); ${inRegistry}`,
  };
}

/**
 * hosts.toml in a node's containerd; a node that already existed pulls again
 * what this `up` pushed (pods pull IfNotPresent, so it would keep the old build).
 */
export async function mirrorInNode(
  node: string,
  registry: RegistryFacts,
  images: readonly string[],
  repull: readonly string[],
  progress: (line: string) => void,
): Promise<string[]> {
  const files = registryHostsFiles(registry.port, images);
  await writeNodeRegistryHosts(node, files);
  for (const ref of repull) {
    progress(`${node}: crictl pull ${ref}`);
    await docker(['exec', node, 'crictl', 'pull', ref]);
  }
  return Object.keys(files);
}

/** KEP-1755's ConfigMap in a cluster (its admin kubeconfig). */
export async function publishRegistryHosting(kubeconfig: string, registry: RegistryFacts): Promise<void> {
  await applyObject(await KubeClient.fromKubeconfig(kubeconfig), localRegistryHosting(registry.port));
}
