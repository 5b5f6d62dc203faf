import { InvalidInputError } from '../../errors.js';

/** An image reference split into where it lives and which version of it is meant. */
export interface ImageReference {
  /** Registry host as users write it (`quay.io`, `localhost:5000`); Docker Hub is `docker.io`. */
  host: string;
  /** Repository path on that registry (`open-cluster-management/registration`, `library/busybox`). */
  repository: string;
  tag?: string;
  /** `sha256:<64 hex>` when the reference pins one. */
  digest?: string;
}

const DOCKER_HUB = 'docker.io';
const COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const TAG = /^\w[\w.-]{0,127}$/;
export const DIGEST = /^sha256:[0-9a-f]{64}$/;

function invalid(reference: string, why: string): InvalidInputError {
  return new InvalidInputError(`image reference ${JSON.stringify(reference)}: ${why}`, {
    hint: 'write it as [registry/]repository[:tag][@sha256:<64 hex>], e.g. quay.io/open-cluster-management/registration:v1.2.1',
  });
}

/**
 * Parses `quay.io/ns/name:tag`, `name@sha256:…`, `host:5000/name`, and Docker Hub short names
 * (`busybox` → `docker.io/library/busybox:latest`). The first path component is a registry host
 * when it has a dot or a port, or is `localhost` — the rule docker and containerd use.
 */
export function parseReference(reference: string): ImageReference {
  let rest = reference.trim();
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest)) throw invalid(reference, `digest ${JSON.stringify(digest)} is not sha256:<64 lowercase hex>`);
  }
  const slash = rest.indexOf('/');
  const first = slash < 0 ? '' : rest.slice(0, slash);
  const hasHost = first !== '' && (first.includes('.') || first.includes(':') || first === 'localhost');
  const host = hasHost ? first : DOCKER_HUB;
  let path = hasHost ? rest.slice(slash + 1) : rest;
  let tag: string | undefined;
  const colon = path.lastIndexOf(':');
  if (colon > path.lastIndexOf('/')) {
    tag = path.slice(colon + 1);
    path = path.slice(0, colon);
    if (!TAG.test(tag)) throw invalid(reference, `tag ${JSON.stringify(tag)} is not a valid tag`);
  }
  if (!path) throw invalid(reference, 'no repository name');
  for (const component of path.split('/')) {
    if (!COMPONENT.test(component))
      throw invalid(reference, `repository component ${JSON.stringify(component)} is not lowercase letters, digits and separators`);
  }
  if (host === DOCKER_HUB && !path.includes('/')) path = `library/${path}`;
  return { host, repository: path, tag: tag ?? (digest ? undefined : 'latest'), digest };
}

/** The reference written out in full: `host/repository:tag`, `…@sha256:…`, or both. */
export function formatReference(ref: ImageReference): string {
  return `${ref.host}/${ref.repository}${ref.tag ? `:${ref.tag}` : ''}${ref.digest ? `@${ref.digest}` : ''}`;
}

/** Where a registry host answers the distribution API when no mirror is named: Docker Hub's API host is registry-1.docker.io. */
export function defaultRegistryBase(host: string): string {
  return host === DOCKER_HUB ? 'https://registry-1.docker.io' : `https://${host}`;
}
