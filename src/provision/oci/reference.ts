import { InvalidInputError } from '../../errors.js';

/**
 * The one parser of image references in src/ (test/unit/image-reference.test.ts keeps it so): every other module that
 * needs a reference's registry, repository, tag or digest, or Docker Hub's defaults, asks this one. It lives beside the
 * OCI client, which provisioning uses to take binaries out of images, so that provision/ and images/ (above it) both
 * reach it. The rules are those of Docker (distribution/reference's normalisation, docs/notes.md#image-references).
 */

/** An image reference split into where it lives and which version of it is meant. */
export interface ImageReference {
  /** Registry host as users write it (`quay.io`, `localhost:5000`); Docker Hub is `docker.io`. */
  host: string;
  /** Repository path on that registry (`open-cluster-management/registration`, `library/busybox`). */
  repository: string;
  /** The tag; `latest` when the reference names neither a tag nor a digest (what Docker pulls then). */
  tag?: string;
  /** `sha256:<64 hex>` when the reference pins one. */
  digest?: string;
}

/** Docker Hub's name in references (`busybox` is `docker.io/library/busybox`). */
export const DOCKER_HUB = 'docker.io';
/** Where Docker Hub's distribution API answers: the host a client connects to for `docker.io` references. */
export const DOCKER_HUB_ENDPOINT = 'registry-1.docker.io';
/** Docker Hub's old name (the "index"), which Docker reads as docker.io. */
const DOCKER_HUB_LEGACY = 'index.docker.io';
/** The namespace of Docker Hub's official images, implied for one-component names there. */
const OFFICIAL_NAMESPACE = 'library';
const DEFAULT_TAG = 'latest';
/** The longest `host/repository` distribution accepts. */
const NAME_MAX = 255;

const COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const HOST_LABEL = '[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?';
const HOST = new RegExp(`^(?:${HOST_LABEL}(?:\\.${HOST_LABEL})*|\\[[a-fA-F0-9:]+\\])(?::[0-9]+)?$`);
const TAG = /^\w[\w.-]{0,127}$/;
export const DIGEST = /^sha256:[0-9a-f]{64}$/;
/** An image ID (64 hex digits alone): Docker refuses it as a name. */
const IMAGE_ID = /^[a-f0-9]{64}$/;

function invalid(reference: string, why: string): InvalidInputError {
  return new InvalidInputError(`image reference ${JSON.stringify(reference)}: ${why}`, {
    hint: 'write it as [registry/]repository[:tag][@sha256:<64 hex>], e.g. quay.io/open-cluster-management/registration:v1.2.1',
  });
}

/**
 * Whether the first path component names a registry: it has a dot or a port, is `localhost`, or has upper case
 * (repository components never do) — the rule docker and containerd use. A name of one component is never one.
 */
function isRegistryHost(first: string): boolean {
  return first.includes('.') || first.includes(':') || first === 'localhost' || first !== first.toLowerCase();
}

/**
 * Parses `quay.io/ns/name:tag`, `name@sha256:…`, `host:5000/name`, `name:tag@sha256:…` and Docker Hub short names
 * (`busybox` → `docker.io/library/busybox:latest`; `index.docker.io/x` is docker.io's too). `registry-1.docker.io` is
 * not renamed: it is the API's host, and Docker takes a reference naming it as another registry's (registryEndpoint()
 * goes the other way). A tag and a digest are both kept; whoever pulls uses the digest. Throws InvalidInputError (exit 2).
 */
export function parseReference(reference: string): ImageReference {
  let rest = reference.trim();
  if (IMAGE_ID.test(rest)) throw invalid(reference, 'is an image ID (64 hex digits), not a name');
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest)) throw invalid(reference, `digest ${JSON.stringify(digest)} is not sha256:<64 lowercase hex>`);
  }
  const slash = rest.indexOf('/');
  const first = slash < 0 ? '' : rest.slice(0, slash);
  const hasHost = slash >= 0 && isRegistryHost(first);
  let host = hasHost ? first : DOCKER_HUB;
  if (host === DOCKER_HUB_LEGACY) host = DOCKER_HUB;
  if (!HOST.test(host)) throw invalid(reference, `registry ${JSON.stringify(host)} is not a host name or address with an optional port`);
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
  if (host === DOCKER_HUB && !path.includes('/')) path = `${OFFICIAL_NAMESPACE}/${path}`;
  if (host.length + 1 + path.length > NAME_MAX) throw invalid(reference, `the name is longer than ${NAME_MAX} characters`);
  return { host, repository: path, tag: tag ?? (digest ? undefined : DEFAULT_TAG), digest };
}

/** Whether `reference` names its registry itself (`quay.io/x`, `localhost/x`, `host:5000/x`) rather than taking Docker Hub by default. */
export function namesRegistry(reference: string): boolean {
  const rest = reference.trim();
  const slash = rest.indexOf('/');
  return slash >= 0 && isRegistryHost(rest.slice(0, slash));
}

/** Whether `reference` names a tag itself (`name:tag`, `name:tag@digest`) rather than taking the default `latest`. Throws as parseReference. */
export function namesTag(reference: string): boolean {
  const { tag } = parseReference(reference);
  const at = reference.indexOf('@');
  return tag !== undefined && (at < 0 ? reference : reference.slice(0, at)).trim().endsWith(`:${tag}`);
}

function suffix(ref: ImageReference): string {
  return `${ref.tag ? `:${ref.tag}` : ''}${ref.digest ? `@${ref.digest}` : ''}`;
}

/** The reference written out in full: `host/repository:tag`, `…@sha256:…`, or both (`docker.io/library/busybox:latest`). */
export function formatReference(ref: ImageReference): string {
  return `${ref.host}/${ref.repository}${suffix(ref)}`;
}

/** `reference` in full (formatReference of parseReference): two spellings of one image give the same string. */
export function canonicalReference(reference: string): string {
  return formatReference(parseReference(reference));
}

/** The short spelling Docker shows: without `docker.io/`, and without `library/` before a one-component name (`busybox:latest`). */
export function familiarReference(ref: ImageReference): string {
  if (ref.host !== DOCKER_HUB) return formatReference(ref);
  const official = ref.repository.startsWith(`${OFFICIAL_NAMESPACE}/`) ? ref.repository.slice(OFFICIAL_NAMESPACE.length + 1) : '';
  return `${official && !official.includes('/') ? official : ref.repository}${suffix(ref)}`;
}

/** The repository without its registry or version (`quay.io/ns/name:v1` → `quay.io/ns/name`): what two versions of an image share. */
export function repositoryOf(reference: string): string {
  const ref = parseReference(reference);
  return `${ref.host}/${ref.repository}`;
}

/** The host a client connects to for a registry named in references (docker.io's API is at registry-1.docker.io). */
export function registryEndpoint(host: string): string {
  return host === DOCKER_HUB ? DOCKER_HUB_ENDPOINT : host;
}

/**
 * A registry to push images under (`--image-registry`): `host[:port][/path]`, with no scheme, tag or digest; what
 * follows it must make an image reference (`<it>/ocm-lab:<version>`). Returns it without a trailing `/`; null when it is none.
 */
export function registryPrefix(value: string): string | null {
  const prefix = value.trim().replace(/\/+$/, '');
  if (!prefix) return null;
  try {
    parseReference(`${prefix}/probe`);
    return prefix;
  } catch {
    return null;
  }
}
