import crypto from 'node:crypto';
import { DigestMismatchError, RegistryUnavailableError } from '../../errors.js';
import { MANIFEST_ACCEPT, parseManifest, type Descriptor } from './manifest.js';
import { choosePlatform, formatPlatform, type Platform } from './platform.js';
import { DIGEST, type ImageReference } from './reference.js';
import type { RegistryClient } from './registry.js';

/** Manifests are small; a registry sending more is not one. */
const MAX_MANIFEST_BYTES = 4 << 20;

const sha256 = (bytes: Buffer) => `sha256:${crypto.createHash('sha256').update(bytes).digest('hex')}`;

/** One platform's image manifest as the registry sent it: the bytes (to copy verbatim), their media type, what it lists. */
export interface PlatformManifest {
  /** The digest the reference resolved to (the index's, for a multi-platform image). */
  topDigest: string;
  digest: string;
  bytes: Buffer;
  mediaType: string;
  config?: Descriptor;
  layers: Descriptor[];
}

async function getManifest(client: RegistryClient, reference: string, name: string) {
  const res = await client.get(`manifests/${reference}`, MANIFEST_ACCEPT);
  const bytes = Buffer.from(await res.arrayBuffer());
  if (bytes.length > MAX_MANIFEST_BYTES) throw new RegistryUnavailableError(client.host, `${name}: a manifest of ${bytes.length} bytes is no manifest`, false);
  try {
    const contentType = res.headers.get('content-type');
    const declared = (JSON.parse(bytes.toString('utf8')) as { mediaType?: unknown }).mediaType;
    const mediaType = typeof declared === 'string' ? declared : (contentType?.split(';')[0]?.trim() ?? '');
    return { digest: sha256(bytes), bytes, mediaType, parsed: parseManifest(bytes, contentType, name) };
  } catch (err) {
    throw new RegistryUnavailableError(client.host, (err as Error).message, false);
  }
}

/**
 * tag (or digest) → index → this platform's manifest, each checked against its digest: the reference's
 * own, `expectedDigest` (a pin or a mirrors file's `digests:` entry) and the index entry's.
 */
export async function resolvePlatformManifest(
  client: RegistryClient,
  ref: ImageReference,
  name: string,
  platform: Platform,
  expectedDigest?: string,
): Promise<PlatformManifest> {
  if (expectedDigest !== undefined && !DIGEST.test(expectedDigest))
    throw new DigestMismatchError(name, expectedDigest, '(not checked)', { hint: 'a required digest is written sha256:<64 lowercase hex>' });
  const top = await getManifest(client, ref.digest ?? (ref.tag as string), name);
  for (const required of [ref.digest, expectedDigest]) {
    if (required && top.digest !== required) throw new DigestMismatchError(name, required, top.digest);
  }
  let manifest = top;
  if (top.parsed.kind === 'index') {
    const entry = choosePlatform(top.parsed.manifests, platform);
    if (!entry) {
      const offered = top.parsed.manifests.map((m) => formatPlatform({ os: '?', architecture: '?', ...m.platform })).join(', ');
      throw new RegistryUnavailableError(ref.host, `${name} has no image for ${formatPlatform(platform)} (it has ${offered || 'none'})`, false);
    }
    manifest = await getManifest(client, entry.digest, `${name} (${formatPlatform(platform)})`);
    if (manifest.digest !== entry.digest) throw new DigestMismatchError(`${name} (${formatPlatform(platform)} manifest)`, entry.digest, manifest.digest);
  }
  if (manifest.parsed.kind !== 'image') throw new RegistryUnavailableError(ref.host, `${name}: the ${formatPlatform(platform)} entry is another index`, false);
  const { config, layers } = manifest.parsed;
  return { topDigest: top.digest, digest: manifest.digest, bytes: manifest.bytes, mediaType: manifest.mediaType, config, layers };
}
