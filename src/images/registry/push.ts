import { docker, dockerInspect } from '../docker.js';
import { currentEngine } from '../engine/index.js';
import { parseReference } from '../../provision/oci/reference.js';

const MANIFEST_TYPES = ['application/vnd.docker.distribution.manifest.v2+json', 'application/vnd.oci.image.manifest.v1+json'];

/** The image's config digest the registry holds for `repository:tag`, or null when it has none. */
async function registryConfigDigest(port: number, repository: string, tag: string): Promise<string | null> {
  const url = `http://127.0.0.1:${port}/v2/${repository}/manifests/${encodeURIComponent(tag)}`;
  const r = await fetch(url, { headers: { Accept: MANIFEST_TYPES.join(', ') }, signal: AbortSignal.timeout(10_000) });
  if (r.status === 404) return null;
  if (!r.ok) throw new Error(`GET ${url}: HTTP ${r.status} ${(await r.text()).slice(0, 200)}`);
  const manifest = (await r.json()) as { config?: { digest?: string } };
  return manifest.config?.digest ?? null;
}

/**
 * `ref` as the lab's registry stores it: its upstream registry host, repository path and tag. The registry stores an image
 * under its upstream path, so a node that pulls the upstream name through the registry as a mirror finds it; a reference
 * by digest is refused (a push names a tag).
 */
export function registryName(ref: string): { host: string; repository: string; tag: string } {
  const { host, repository, tag, digest } = parseReference(ref);
  if (digest || !tag) throw new Error(`image ${ref}: references by digest are not pushed to the lab's registry; give it a tag`);
  return { host, repository, tag };
}

/** Where `ref` goes in the registry at 127.0.0.1:<port>: under its upstream path, so nodes find it through their mirrors. */
export function registryTarget(port: number, ref: string): string {
  const { repository, tag } = registryName(ref);
  return `127.0.0.1:${port}/${repository}:${tag}`;
}

/**
 * Pushes each image the registry lacks, or holds another build of (compared
 * by the image's config digest, which is the local image's ID): `docker tag`
 * to 127.0.0.1:<port>/<upstream path>, `docker push`, untag. Shared layers go
 * once. Returns the images pushed this time.
 */
export async function pushMissingImages(port: number, images: readonly string[], progress: (line: string) => void = () => {}): Promise<string[]> {
  const pushed: string[] = [];
  for (const ref of images) {
    const [local] = await dockerInspect<{ Id: string }>('image', [ref]);
    if (!local) throw new Error(`image ${ref} is not in the Docker engine, so it cannot be pushed to the lab's registry (run ocm-lab setup --runtime kind)`);
    const { repository, tag } = registryName(ref);
    const engine = await currentEngine();
    if ((await registryConfigDigest(port, repository, tag)) === engine.imageDigest(local.Id)) continue;
    const target = registryTarget(port, ref);
    progress(`docker push ${target}`);
    await docker(['tag', ref, target]);
    try {
      await docker(engine.pushToLabRegistryArgs(target));
    } finally {
      await docker(['rmi', target], { allowFailure: true });
    }
    pushed.push(ref);
  }
  return pushed;
}
