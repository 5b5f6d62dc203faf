import { architectureOf, readHostFacts } from '../../host/facts.js';
import { registryBase, requiredDigest, type Mirrors } from '../../provision/mirrors.js';
import { copyImage } from '../../provision/oci/copy.js';
import { hostPlatform } from '../../provision/oci/platform.js';
import { cacheDir } from '../../paths.js';
import { registryName } from './push.js';

/**
 * Copies images from their publishers (quay.io for OCM's and upstream's addons') into the lab's registry
 * under the same repository names, registry to registry: the manifest of the engine's platform only (linux and
 * `docker info`'s architecture, which the nodes run on; this machine's when the engine does not say), every blob checked
 * against its digest (and the top manifest against a `digests:` entry when the mirrors file has one).
 * Nodes then pull them through the mirror hosts.toml as they pull images pushed from here. Returns the
 * images that were not there yet.
 */
export async function copyUpstreamImages(port: number, images: readonly string[], mirrors: Mirrors, progress: (line: string) => void): Promise<string[]> {
  const copied: string[] = [];
  const nodes = images.length ? hostPlatform(architectureOf(await readHostFacts({ engine: true })).value) : undefined;
  for (const reference of images) {
    const { host, repository, tag } = registryName(reference);
    const r = await copyImage({
      reference,
      registryBase: registryBase(mirrors, host),
      expectedDigest: requiredDigest(mirrors, reference),
      target: { base: `http://127.0.0.1:${port}`, repository, tag },
      scratchDir: cacheDir(),
      onProgress: progress,
      ...(nodes ? { platform: nodes } : {}),
    });
    if (r.stored) copied.push(reference);
  }
  return copied;
}
