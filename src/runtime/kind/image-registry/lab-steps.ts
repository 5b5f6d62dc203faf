import { docker } from '../../../images/docker.js';
import { KubeClient } from '../../../kube/client.js';
import { applyObject } from '../../../kube/objects.js';
import { ensureRegistry, type RegistryFacts } from './container.js';
import { localRegistryHosting } from './hosting.js';
import { builtRegistryImage } from './image.js';
import { registryHostsFiles, writeNodeRegistryHosts } from './mirrors.js';
import { pushMissingImages } from './push.js';

/** What `up` does with the image registry, step by step; each returns the line the step prints. */

/** The registry running on the lab's networks, and the lab's images in it (pushed only when it lacks them). */
export async function registryWithImages(
  networks: readonly string[],
  images: readonly string[],
  progress: (line: string) => void,
): Promise<{ facts: RegistryFacts; pushed: string[]; summary: string }> {
  const image = await builtRegistryImage({ onProgress: progress });
  const { facts, did } = await ensureRegistry(image.ref, networks, progress);
  const pushed = await pushMissingImages(facts.port, images, progress);
  const what = pushed.length ? `pushed ${pushed.length} of ${images.length} images` : `all ${images.length} images there`;
  return { facts, pushed, summary: `${facts.container} at ${facts.host} (${did.join(', ') || 'running'}); ${what}` };
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
