import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Progress } from '../gobuild.js';
import { NO_MIRRORS, registryBase } from '../mirrors.js';
import type { Descriptor } from './manifest.js';
import { formatPlatform, hostPlatform, type Platform } from './platform.js';
import { fetchBlob } from './pull.js';
import { formatReference, parseReference } from './reference.js';
import { RegistryClient } from './registry.js';
import { resolvePlatformManifest } from './resolve.js';

export interface CopyImageOptions {
  /** `quay.io/open-cluster-management/registration:v1.2.1`. */
  reference: string;
  /** Where the reference's registry answers (a mirror); default `https://<host>`. */
  registryBase?: string;
  /** The digest the source's top manifest must have (a pin or a mirrors file's entry). */
  expectedDigest?: string;
  platform?: Platform;
  /** The registry copied to, unauthenticated (`http://127.0.0.1:5001`), and the name the image gets there. */
  target: { base: string; repository: string; tag: string };
  /** Where blobs wait between their check and their upload (default: the system's temporary directory). */
  scratchDir?: string;
  signal?: AbortSignal;
  onProgress?: Progress;
}

export interface CopiedImage {
  /** The source's top manifest digest (the index's, for a multi-platform image). */
  sourceDigest: string;
  /** This platform's manifest: what the target now serves under the tag. */
  manifestDigest: string;
  /** Blobs uploaded this time (0 when the target held them already). */
  uploaded: number;
  /** Whether the tag was written: false when the target served this manifest under it already. */
  stored: boolean;
}

/** The target registry's answer, or an Error saying which request it refused and what it said. */
async function targetRequest(url: string, init: RequestInit & { duplex?: 'half' }, what: string): Promise<Response> {
  const res = await fetch(url, init);
  if (res.ok || res.status === 404) return res;
  const body = (await res.text().catch(() => '')).slice(0, 300);
  throw new Error(`${what}: ${init.method ?? 'GET'} ${url} answered HTTP ${res.status} ${body}`.trim());
}

async function targetHas(base: string, repository: string, kind: 'blobs' | 'manifests', reference: string, accept?: string): Promise<string | null> {
  const res = await targetRequest(
    `${base}/v2/${repository}/${kind}/${reference}`,
    { method: 'HEAD', headers: accept ? { accept } : {}, signal: AbortSignal.timeout(10_000) },
    `checking ${repository} ${kind}/${reference}`,
  );
  return res.status === 404 ? null : (res.headers.get('docker-content-digest') ?? reference);
}

/** A monolithic upload: POST for a session, PUT the whole file with its digest (the registry checks it once more). */
async function uploadBlob(base: string, repository: string, blob: Descriptor, file: string): Promise<void> {
  const started = await targetRequest(`${base}/v2/${repository}/blobs/uploads/`, { method: 'POST' }, `starting the upload of ${blob.digest}`);
  const location = started.headers.get('location');
  if (!location) throw new Error(`starting the upload of ${blob.digest} to ${base}: the registry named no upload location`);
  const url = new URL(location, base);
  url.searchParams.set('digest', blob.digest);
  await targetRequest(
    url.toString(),
    {
      method: 'PUT',
      headers: { 'content-type': 'application/octet-stream', 'content-length': String(blob.size) },
      body: createReadStream(file) as unknown as RequestInit['body'],
      duplex: 'half',
    },
    `uploading ${blob.digest}`,
  );
}

/**
 * Copies one platform's image from its registry into another (the kind labs' registry), without a container
 * engine: every blob the target lacks is downloaded, checked against its digest, then uploaded; the
 * platform's manifest goes last, under the tag, so the target never names a blob it lacks. An image the
 * target already serves under that tag, with that manifest, costs two requests.
 */
export async function copyImage(opts: CopyImageOptions): Promise<CopiedImage> {
  const ref = parseReference(opts.reference);
  const name = formatReference(ref);
  const progress = opts.onProgress ?? (() => undefined);
  const platform = opts.platform ?? hostPlatform();
  const client = new RegistryClient(ref.host, opts.registryBase ?? registryBase(NO_MIRRORS, ref.host), ref.repository, opts);
  const manifest = await resolvePlatformManifest(client, ref, name, platform, opts.expectedDigest);
  const base = opts.target.base.replace(/\/+$/, '');
  const { repository, tag } = opts.target;
  const result = { sourceDigest: manifest.topDigest, manifestDigest: manifest.digest, uploaded: 0, stored: false };
  if ((await targetHas(base, repository, 'manifests', tag, manifest.mediaType)) === manifest.digest) return result;

  progress(`copying ${name} (${formatPlatform(platform)}) to ${base}/${repository}:${tag}`);
  await fs.mkdir(opts.scratchDir ?? os.tmpdir(), { recursive: true });
  const scratch = await fs.mkdtemp(path.join(opts.scratchDir ?? os.tmpdir(), '.copy-'));
  try {
    for (const blob of [...(manifest.config ? [manifest.config] : []), ...manifest.layers]) {
      if (await targetHas(base, repository, 'blobs', blob.digest)) continue;
      const file = path.join(scratch, blob.digest.slice(7));
      await fetchBlob(client, name, blob, file, progress, opts.signal);
      await uploadBlob(base, repository, blob, file);
      await fs.rm(file, { force: true });
      result.uploaded++;
    }
  } finally {
    await fs.rm(scratch, { recursive: true, force: true });
  }
  await targetRequest(
    `${base}/v2/${repository}/manifests/${tag}`,
    { method: 'PUT', headers: { 'content-type': manifest.mediaType }, body: new Uint8Array(manifest.bytes) },
    `storing the manifest of ${name}`,
  );
  return { ...result, stored: true };
}
