import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { DigestMismatchError, RegistryUnavailableError } from '../../errors.js';
import type { Progress } from '../gobuild.js';
import { BodyInterrupted, saveResponse } from '../http-file.js';
import { extractMember, listLayer, lookUp, memberPath } from './layer.js';
import { MANIFEST_ACCEPT, parseManifest, type Descriptor } from './manifest.js';
import { choosePlatform, formatPlatform, hostPlatform, type Platform } from './platform.js';
import { DIGEST, defaultRegistryBase, formatReference, parseReference } from './reference.js';
import { RegistryClient } from './registry.js';

/** Manifests are small; a registry sending more is not one. */
const MAX_MANIFEST_BYTES = 4 << 20;

export interface PullFilesOptions {
  /** `quay.io/open-cluster-management/registration:v1.2.1`, `busybox@sha256:…`. */
  reference: string;
  /** Where the reference's registry answers (a mirror); default `https://<host>` (Docker Hub: registry-1.docker.io). */
  registryBase?: string;
  /** The digest the top manifest (index or manifest, as the tag resolves) must have. */
  expectedDigest?: string;
  /** Default: linux and this machine's architecture. */
  platform?: Platform;
  /** Each file is written to `dest` only when every blob it came through matched its digest. */
  files: readonly { pathInImage: string; dest: string }[];
  signal?: AbortSignal;
  onProgress?: Progress;
  /** Limit on each response's headers (default REGISTRY_TIMEOUT_MS). */
  timeoutMs?: number;
}

const sha256 = (bytes: Buffer) => `sha256:${crypto.createHash('sha256').update(bytes).digest('hex')}`;

/**
 * Takes files out of an image through the distribution API, without a container engine:
 * tag → index → this platform's manifest → layers from the top down until every file is
 * found. Every manifest and blob is checked against its digest before anything of it is
 * used; files are renamed into place only at the end, so a failure leaves none of them.
 * Returns the top manifest's digest.
 */
export async function pullFiles(opts: PullFilesOptions): Promise<{ digest: string }> {
  const ref = parseReference(opts.reference);
  const name = formatReference(ref);
  const progress = opts.onProgress ?? (() => undefined);
  if (opts.expectedDigest !== undefined && !DIGEST.test(opts.expectedDigest))
    throw new DigestMismatchError(name, opts.expectedDigest, '(not checked)', { hint: 'a required digest is written sha256:<64 lowercase hex>' });
  const client = new RegistryClient(ref.host, opts.registryBase ?? defaultRegistryBase(ref.host), ref.repository, opts);
  const platform = opts.platform ?? hostPlatform();

  progress(`pulling ${name}`);
  const top = await getManifest(client, ref.digest ?? (ref.tag as string), name);
  for (const required of [ref.digest, opts.expectedDigest]) {
    if (required && top.digest !== required) throw new DigestMismatchError(name, required, top.digest);
  }
  let manifest = top.parsed;
  if (manifest.kind === 'index') {
    const entry = choosePlatform(manifest.manifests, platform);
    if (!entry) {
      const offered = manifest.manifests.map((m) => formatPlatform({ os: '?', architecture: '?', ...m.platform })).join(', ');
      throw new RegistryUnavailableError(ref.host, `${name} has no image for ${formatPlatform(platform)} (it has ${offered || 'none'})`, false);
    }
    const child = await getManifest(client, entry.digest, `${name} (${formatPlatform(platform)})`);
    if (child.digest !== entry.digest) throw new DigestMismatchError(`${name} (${formatPlatform(platform)} manifest)`, entry.digest, child.digest);
    if (child.parsed.kind !== 'image') throw new RegistryUnavailableError(ref.host, `${name}: the ${formatPlatform(platform)} entry is another index`, false);
    manifest = child.parsed;
  }

  const first = opts.files[0];
  if (!first) return { digest: top.digest };
  const scratch = await fs.mkdtemp(path.join(path.dirname(first.dest), '.pull-'));
  try {
    const found = await extractFiles(client, name, manifest.layers, opts.files, scratch, progress, opts.signal);
    for (const [i, file] of opts.files.entries()) {
      await fs.mkdir(path.dirname(file.dest), { recursive: true });
      await fs.rename(found[i] as string, file.dest);
    }
  } finally {
    await fs.rm(scratch, { recursive: true, force: true });
  }
  return { digest: top.digest };
}

async function getManifest(client: RegistryClient, reference: string, name: string) {
  const res = await client.get(`manifests/${reference}`, MANIFEST_ACCEPT);
  const bytes = Buffer.from(await res.arrayBuffer());
  if (bytes.length > MAX_MANIFEST_BYTES) throw new RegistryUnavailableError(client.host, `${name}: a manifest of ${bytes.length} bytes is no manifest`, false);
  try {
    return { digest: sha256(bytes), parsed: parseManifest(bytes, res.headers.get('content-type'), name) };
  } catch (err) {
    throw new RegistryUnavailableError(client.host, (err as Error).message, false);
  }
}

/** Walks the layers top first; returns the extracted path of each wanted file, in order. */
async function extractFiles(
  client: RegistryClient,
  name: string,
  layers: Descriptor[],
  files: PullFilesOptions['files'],
  scratch: string,
  progress: Progress,
  signal?: AbortSignal,
): Promise<string[]> {
  const wanted = files.map((f) => memberPath(f.pathInImage));
  const found: (string | undefined)[] = wanted.map(() => undefined);
  const gone = new Set<number>();
  for (const [depth, layer] of [...layers].reverse().entries()) {
    const open = wanted.map((_, i) => i).filter((i) => found[i] === undefined && !gone.has(i));
    if (!open.length) break;
    const blob = path.join(scratch, `layer-${depth}`);
    await fetchBlob(client, name, layer, blob, progress, signal);
    const members = await listLayer(blob);
    for (const i of open) {
      const hit = lookUp(members, wanted[i] as string);
      if (hit.state === 'deleted') gone.add(i);
      else if (hit.state === 'present') found[i] = await extractMember(blob, hit.member, path.join(scratch, `files-${i}`));
    }
    await fs.rm(blob, { force: true });
  }
  const missing = wanted.filter((_, i) => found[i] === undefined);
  if (missing.length) throw new RegistryUnavailableError(client.host, `${name} holds no ${missing.map((m) => `/${m}`).join(', ')}`, false);
  return found as string[];
}

/** Downloads a blob to `file`, hashing it on the way; a digest or size that does not match is a DigestMismatchError. */
async function fetchBlob(client: RegistryClient, name: string, layer: Descriptor, file: string, progress: Progress, signal?: AbortSignal): Promise<void> {
  const artifact = `${name} layer ${layer.digest}`;
  if (!DIGEST.test(layer.digest)) throw new RegistryUnavailableError(client.host, `${artifact}: only sha256 digests are checked`, false);
  const res = await client.get(`blobs/${layer.digest}`);
  progress(`downloading ${name} layer ${layer.digest.slice(7, 19)} (${Math.round(layer.size / 2 ** 20)} MB)`);
  const saved = await saveResponse(res, file, `${name} layer`, progress, signal).catch((err: unknown) => {
    if (err instanceof BodyInterrupted) throw new RegistryUnavailableError(client.host, `${artifact}: ${err.reason}`, false);
    throw err;
  });
  const actual = `sha256:${saved.sha256}`;
  if (actual !== layer.digest) throw new DigestMismatchError(artifact, layer.digest, actual);
  if (saved.size !== layer.size) throw new DigestMismatchError(artifact, `${layer.size} bytes`, `${saved.size} bytes`);
}
