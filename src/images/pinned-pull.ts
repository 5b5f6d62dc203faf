import { RegistryUnavailableError } from '../errors.js';
import { requiredDigest, type Mirrors } from '../provision/mirrors.js';
import { canonicalReference, parseReference } from '../provision/oci/reference.js';
import { docker, dockerInspect } from './docker.js';

/**
 * An official image this lab takes from its publisher through Docker, pinned by digest: `name:tag` as
 * published and the digest of its (multi-platform) index, which a mirrors file's `digests:` may replace.
 */
export interface PinnedImage {
  /** `kindest/node:v1.36.4`, `registry:2`, `node:24-bookworm-slim`. */
  name: string;
  digest: string;
}

/** The digest to require: the mirrors file's for the name as written or in full (`docker.io/library/…`), else the pin. */
export function pinnedDigest(image: PinnedImage, mirrors: Mirrors): string {
  return requiredDigest(mirrors, image.name) ?? requiredDigest(mirrors, canonicalReference(image.name), image.digest) ?? image.digest;
}

/** `name:tag@sha256:…`: what Docker pulls and runs (the tag for people, the digest for Docker, which checks it). */
export function pinnedReference(image: PinnedImage, mirrors: Mirrors): string {
  return `${image.name}@${pinnedDigest(image, mirrors)}`;
}

/**
 * `docker pull name:tag@digest` unless the engine has it already; never by tag alone. A pull that fails is a
 * RegistryUnavailableError naming the registry and what Docker said. Returns the pinned reference.
 */
export async function pullPinned(image: PinnedImage, mirrors: Mirrors, progress: (line: string) => void = () => {}, signal?: AbortSignal): Promise<string> {
  const ref = pinnedReference(image, mirrors);
  if ((await dockerInspect('image', [ref])).length) return ref;
  progress(`docker pull ${ref}`);
  const r = await docker(['pull', '--quiet', ref], { allowFailure: true, signal });
  if (r.exitCode !== 0) {
    const said = `${r.stderr}${r.stdout}`.trim().split('\n').slice(-2).join(' ');
    throw new RegistryUnavailableError(parseReference(ref).host, `docker pull ${ref} failed: ${said}`, false);
  }
  return ref;
}
