import crypto from 'node:crypto';
import { DigestMismatchError, RegistryUnavailableError } from '../../errors.js';
import { NO_MIRRORS, registryBase } from '../mirrors.js';
import { hostPlatform, type Platform } from './platform.js';
import { formatReference, parseReference } from './reference.js';
import { RegistryClient } from './registry.js';
import { resolvePlatformManifest } from './resolve.js';

/** Image configs are small JSON documents; more is not one. */
const MAX_CONFIG_BYTES = 4 << 20;

/** What the lab reads of an image's configuration. */
export interface ImageConfig {
  /** The source's top manifest digest (the index's, for a multi-platform image). */
  digest: string;
  labels: Record<string, string>;
}

/**
 * This platform's image configuration (its labels), through the distribution API without pulling a layer:
 * what tells, before a large pull, whether an image suits this machine.
 */
export async function readImageConfig(opts: { reference: string; registryBase?: string; expectedDigest?: string; platform?: Platform }): Promise<ImageConfig> {
  const ref = parseReference(opts.reference);
  const name = formatReference(ref);
  const client = new RegistryClient(ref.host, opts.registryBase ?? registryBase(NO_MIRRORS, ref.host), ref.repository);
  const manifest = await resolvePlatformManifest(client, ref, name, opts.platform ?? hostPlatform(), opts.expectedDigest);
  if (!manifest.config) throw new RegistryUnavailableError(ref.host, `${name}: the manifest names no image configuration`, false);
  const res = await client.get(`blobs/${manifest.config.digest}`);
  const bytes = Buffer.from(await res.arrayBuffer());
  if (bytes.length > MAX_CONFIG_BYTES) throw new RegistryUnavailableError(ref.host, `${name}: an image configuration of ${bytes.length} bytes`, false);
  const actual = `sha256:${crypto.createHash('sha256').update(bytes).digest('hex')}`;
  if (actual !== manifest.config.digest) throw new DigestMismatchError(`${name} configuration`, manifest.config.digest, actual);
  let doc: { config?: { Labels?: unknown } };
  try {
    doc = JSON.parse(bytes.toString('utf8')) as typeof doc;
  } catch {
    throw new RegistryUnavailableError(ref.host, `${name}: the image configuration is not JSON`, false);
  }
  const labels = doc.config?.Labels;
  const strings = labels && typeof labels === 'object' ? Object.entries(labels).filter((e): e is [string, string] => typeof e[1] === 'string') : [];
  return { digest: manifest.topDigest, labels: Object.fromEntries(strings) };
}
