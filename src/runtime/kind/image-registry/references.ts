/**
 * Docker image references split the way a registry sees them: `ocm-lab:0.1.0`
 * is docker.io's `library/ocm-lab` at tag `0.1.0`; `quay.io/a/b:v1` is quay.io's
 * `a/b`. The lab's registry stores an image under its upstream path, so a node
 * that pulls the upstream name through the registry as a mirror finds it.
 */
export interface ImageReference {
  /** The registry host of the name (`docker.io` when the name has none). */
  domain: string;
  /** The repository path at that registry (`library/<name>` for docker.io's one-part names). */
  repository: string;
  tag: string;
}

const DOCKER_HUB = 'docker.io';

export function parseImageReference(ref: string): ImageReference {
  if (ref.includes('@')) throw new Error(`image ${ref}: references by digest are not pushed to the lab's registry; give it a tag`);
  const slash = ref.indexOf('/');
  const first = slash < 0 ? '' : ref.slice(0, slash);
  const hasDomain = first.includes('.') || first.includes(':') || first === 'localhost';
  const domain = hasDomain ? first : DOCKER_HUB;
  let rest = hasDomain ? ref.slice(slash + 1) : ref;
  const colon = rest.lastIndexOf(':');
  const tag = colon > rest.lastIndexOf('/') ? rest.slice(colon + 1) : 'latest';
  if (colon > rest.lastIndexOf('/')) rest = rest.slice(0, colon);
  const repository = domain === DOCKER_HUB && !rest.includes('/') ? `library/${rest}` : rest;
  if (!repository || !tag) throw new Error(`image ${ref}: not an image reference (want [host/]path[:tag])`);
  return { domain, repository, tag };
}

/** The upstream server containerd falls back to for a domain (docker.io's API lives at registry-1). */
export function upstreamServer(domain: string): string {
  return domain === DOCKER_HUB ? 'https://registry-1.docker.io' : `https://${domain}`;
}
