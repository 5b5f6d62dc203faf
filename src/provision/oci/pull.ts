import fs from 'node:fs/promises';
import path from 'node:path';
import { DigestMismatchError, RegistryUnavailableError } from '../../errors.js';
import type { Progress } from '../gobuild.js';
import { BodyInterrupted, saveResponse } from '../http-file.js';
import { extractMember, listLayer, lookUp, memberPath } from './layer.js';
import type { Descriptor } from './manifest.js';
import { hostPlatform, type Platform } from './platform.js';
import { NO_MIRRORS, registryBase } from '../mirrors.js';
import { DIGEST, formatReference, parseReference } from './reference.js';
import { RegistryClient } from './registry.js';
import { resolvePlatformManifest } from './resolve.js';

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
  const client = new RegistryClient(ref.host, opts.registryBase ?? registryBase(NO_MIRRORS, ref.host), ref.repository, opts);
  const platform = opts.platform ?? hostPlatform();

  progress(`pulling ${name}`);
  const manifest = await resolvePlatformManifest(client, ref, name, platform, opts.expectedDigest);

  const first = opts.files[0];
  if (!first) return { digest: manifest.topDigest };
  // Extracted beside the (first) destination, so the final rename stays on one filesystem.
  await fs.mkdir(path.dirname(first.dest), { recursive: true });
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
  return { digest: manifest.topDigest };
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
export async function fetchBlob(
  client: RegistryClient,
  name: string,
  layer: Descriptor,
  file: string,
  progress: Progress,
  signal?: AbortSignal,
): Promise<void> {
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
