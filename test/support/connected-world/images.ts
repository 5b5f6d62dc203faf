import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';

const OCI_INDEX = 'application/vnd.oci.image.index.v1+json';
const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
const OCI_CONFIG = 'application/vnd.oci.image.config.v1+json';
const OCI_LAYER_GZIP = 'application/vnd.oci.image.layer.v1.tar+gzip';

/** An image to make `FROM scratch`: files of this machine at the paths the upstream image holds them. */
export interface ImageSpec {
  /** Registry host the image is published on, e.g. quay.io. */
  host: string;
  /** Repository below the host, e.g. open-cluster-management/registration. */
  repository: string;
  tag: string;
  files: { source: string; pathInImage: string }[];
}

export interface PushedImage {
  /** `<host>/<repository>:<tag>` */
  reference: string;
  repository: string;
  /** What the tag resolves to: the image index (a multi-platform image, as upstream publishes). */
  digest: string;
  /** This platform's single layer (the blob the corrupting mode spoils). */
  layerDigest: string;
}

interface Blob {
  digest: string;
  size: number;
  file?: string;
  bytes?: Buffer;
}

function sha256(bytes: Buffer | string): string {
  return `sha256:${crypto.createHash('sha256').update(bytes).digest('hex')}`;
}

/** GOARCH of this machine, as image platforms spell it. */
export function imageArch(arch: string = process.arch): string {
  return ({ x64: 'amd64', arm64: 'arm64' } as Record<string, string>)[arch] ?? arch;
}

/** tar (root-owned, mtime 0) of the staged files, gzipped; diff_id is the digest of the uncompressed tar. */
async function makeLayer(stage: string, entries: string[], out: string): Promise<{ layer: Blob; diffId: string }> {
  const tar = spawn('tar', ['--create', '--file=-', '--dereference', '--owner=0', '--group=0', '--numeric-owner', '--mtime=@0', '-C', stage, ...entries], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  tar.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => tar.once('close', resolve));
  const hashing = (hash: crypto.Hash) =>
    new Transform({
      transform(chunk: Buffer, _enc, done) {
        hash.update(chunk);
        done(null, chunk);
      },
    });
  const raw = crypto.createHash('sha256');
  const gz = crypto.createHash('sha256');
  await pipeline(tar.stdout, hashing(raw), zlib.createGzip({ level: 1 }), hashing(gz), createWriteStream(out));
  const code = await exited;
  if (code !== 0) throw new Error(`tar of ${entries.join(', ')} in ${stage} exited ${code}: ${stderr.trim()}`);
  return { layer: { digest: `sha256:${gz.digest('hex')}`, size: (await fs.stat(out)).size, file: out }, diffId: `sha256:${raw.digest('hex')}` };
}

function jsonBlob(value: unknown): Blob {
  const bytes = Buffer.from(JSON.stringify(value));
  return { digest: sha256(bytes), size: bytes.length, bytes };
}

/** One platform's image: a single layer holding `files` (under `stage/`), its config and manifest. */
async function platformImage(stage: string, files: ImageSpec['files'], arch: string, work: string) {
  const entries = files.map((f) => f.pathInImage.replace(/^\/+/, ''));
  const { layer, diffId } = await makeLayer(stage, entries, path.join(work, `layer-${arch}.tar.gz`));
  const config = jsonBlob({
    architecture: arch,
    os: 'linux',
    config: { Entrypoint: [files[0]?.pathInImage] },
    rootfs: { type: 'layers', diff_ids: [diffId] },
    history: [{ created_by: 'ocm-lab connected-world test fixture (FROM scratch)' }],
  });
  const manifest = jsonBlob({
    schemaVersion: 2,
    mediaType: OCI_MANIFEST,
    config: { mediaType: OCI_CONFIG, digest: config.digest, size: config.size },
    layers: [{ mediaType: OCI_LAYER_GZIP, digest: layer.digest, size: layer.size }],
  });
  return { layer, config, manifest, arch };
}

async function check(res: Response, what: string, want: number): Promise<Response> {
  if (res.status !== want) throw new Error(`${what}: HTTP ${res.status} (wanted ${want}): ${(await res.text()).slice(0, 500)}`);
  return res;
}

/** Monolithic upload (POST, then PUT with the digest), skipped when the registry already holds the blob. */
async function pushBlob(base: string, repository: string, blob: Blob): Promise<void> {
  const head = await fetch(`${base}/v2/${repository}/blobs/${blob.digest}`, { method: 'HEAD' });
  if (head.status === 200) return;
  const started = await check(await fetch(`${base}/v2/${repository}/blobs/uploads/`, { method: 'POST' }), `start upload to ${repository}`, 202);
  const location = new URL(started.headers.get('location') ?? '', base);
  location.searchParams.set('digest', blob.digest);
  const body = blob.bytes ?? (await fs.readFile(blob.file as string));
  await check(
    await fetch(location, { method: 'PUT', body, headers: { 'content-type': 'application/octet-stream', 'content-length': String(blob.size) } }),
    `upload ${blob.digest} to ${repository}`,
    201,
  );
}

async function pushManifest(base: string, repository: string, reference: string, blob: Blob, mediaType: string): Promise<void> {
  await check(
    await fetch(`${base}/v2/${repository}/manifests/${reference}`, { method: 'PUT', body: blob.bytes, headers: { 'content-type': mediaType } }),
    `put manifest ${repository}:${reference}`,
    201,
  );
}

/**
 * Makes the image for this machine's platform plus a decoy for another platform (listed first in the index, so a
 * client that ignores the platform extracts the decoy's text file instead of the binary), and pushes both with the
 * index under the tag through the registry API at `base`.
 */
export async function buildAndPush(spec: ImageSpec, base: string, work: string): Promise<PushedImage> {
  await fs.mkdir(work, { recursive: true });
  const stage = path.join(work, 'stage');
  const decoyStage = path.join(work, 'decoy');
  for (const f of spec.files) {
    const inImage = f.pathInImage.replace(/^\/+/, '');
    await fs.mkdir(path.dirname(path.join(stage, inImage)), { recursive: true });
    await fs.symlink(f.source, path.join(stage, inImage));
    await fs.mkdir(path.dirname(path.join(decoyStage, inImage)), { recursive: true });
    await fs.writeFile(path.join(decoyStage, inImage), `#!/bin/sh\necho 'decoy ${inImage} for another platform: not this machine's'\nexit 1\n`, {
      mode: 0o755,
    });
  }
  const arch = imageArch();
  const decoyArch = arch === 'arm64' ? 'amd64' : 'arm64';
  const images = [await platformImage(decoyStage, spec.files, decoyArch, work), await platformImage(stage, spec.files, arch, work)];
  for (const image of images) {
    for (const blob of [image.layer, image.config]) await pushBlob(base, spec.repository, blob);
    await pushManifest(base, spec.repository, image.manifest.digest, image.manifest, OCI_MANIFEST);
  }
  const index = jsonBlob({
    schemaVersion: 2,
    mediaType: OCI_INDEX,
    manifests: images.map((i) => ({
      mediaType: OCI_MANIFEST,
      digest: i.manifest.digest,
      size: i.manifest.size,
      platform: { architecture: i.arch, os: 'linux' },
    })),
  });
  await pushManifest(base, spec.repository, spec.tag, index, OCI_INDEX);
  await fs.rm(work, { recursive: true, force: true });
  const mine = images[1] as (typeof images)[number];
  return { reference: `${spec.host}/${spec.repository}:${spec.tag}`, repository: spec.repository, digest: index.digest, layerDigest: mine.layer.digest };
}

/** Where distribution's filesystem driver keeps a blob's bytes. */
export function blobDataFile(storage: string, digest: string): string {
  const hex = digest.replace(/^sha256:/, '');
  return path.join(storage, 'docker/registry/v2/blobs/sha256', hex.slice(0, 2), hex, 'data');
}
