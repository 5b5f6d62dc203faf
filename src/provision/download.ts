import fs from 'node:fs/promises';
import path from 'node:path';
import { DigestMismatchError } from '../errors.js';
import type { Progress } from './gobuild.js';
import { BodyInterrupted, describeFetchError, saveResponse } from './http-file.js';
import { parseReference } from './oci/reference.js';
import { pullFiles } from './oci/pull.js';
import type { BinaryName, Recipe, ReleaseSource } from './recipes.js';

/** How long a release server may take to answer at all; closed networks must fall through to the Go build quickly. */
const CONNECT_TIMEOUT_MS = 5_000;

/** Why a download did not produce a binary (the caller falls through to the next source). */
export class DownloadUnavailable extends Error {
  constructor(
    message: string,
    /** The server could not be reached at all: do not try it again in this run. */
    readonly unreachable: boolean,
  ) {
    super(message);
  }
}

/** Where images come from when not from their own registry, and which digests they must have (a mirrors file). */
export interface ImageSources {
  /** Base URL answering the distribution API for a registry host; default `https://<host>`. */
  registryBase?: (host: string) => string | undefined;
  /** The digest an image reference's top manifest must have, if one is required. */
  requiredDigest?: (reference: string) => string | undefined;
}

/** GET with a short limit on getting the response headers; the body then streams as long as it keeps moving. */
async function open(url: string, signal?: AbortSignal): Promise<Response> {
  const connect = new AbortController();
  const timer = setTimeout(() => connect.abort(), CONNECT_TIMEOUT_MS);
  const res = await fetch(url, { redirect: 'follow', signal: signal ? AbortSignal.any([signal, connect.signal]) : connect.signal })
    .catch((err: unknown) => {
      signal?.throwIfAborted();
      throw new DownloadUnavailable(
        `${url}: ${connect.signal.aborted ? `no answer within ${CONNECT_TIMEOUT_MS / 1000} s` : describeFetchError(err, CONNECT_TIMEOUT_MS)}`,
        true,
      );
    })
    .finally(() => clearTimeout(timer));
  if (!res.ok) {
    await res.body?.cancel().catch(() => undefined);
    throw new DownloadUnavailable(`${url}: HTTP ${res.status}`, false);
  }
  return res;
}

async function fetchText(url: string, signal?: AbortSignal): Promise<string> {
  const res = await open(url, signal);
  return res.text();
}

/** Streams a download into `file`; returns its sha256 (hex). */
async function fetchToFile(url: string, file: string, label: string, progress: Progress, signal?: AbortSignal): Promise<string> {
  const res = await open(url, signal);
  try {
    return (await saveResponse(res, file, label, progress, signal)).sha256;
  } catch (err) {
    if (err instanceof BodyInterrupted) throw new DownloadUnavailable(`${url}: ${err.reason}`, false);
    throw err;
  }
}

/** A published checksum that is missing falls through to the next source; one that does not match is an integrity failure. */
function checkSum(url: string, expected: string | null, actual: string): void {
  if (!expected) throw new DownloadUnavailable(`${url}: no published sha256 for it`, false);
  if (actual !== expected) throw new DigestMismatchError(url, `sha256:${expected}`, `sha256:${actual}`);
}

function expectedSum(sums: string, fileName: string): string | null {
  for (const line of sums.split('\n')) {
    const [hex, name] = line.trim().split(/\s+/);
    if (hex && /^[0-9a-f]{64}$/.test(hex) && (name === undefined || name.replace(/^\*/, '') === fileName)) return hex;
  }
  return null;
}

/**
 * Fetches one binary of an official release into `outDir/<name>`: a release file or tarball verified
 * against its published sha256, or a file of an official image verified by digest. Throws
 * DownloadUnavailable or RegistryUnavailableError when it cannot, DigestMismatchError when bytes do
 * not match; nothing is left behind then.
 */
export async function downloadRelease(
  recipe: Recipe,
  name: BinaryName,
  outDir: string,
  opts: { base?: string; images?: ImageSources; progress: Progress; signal?: AbortSignal },
): Promise<void> {
  const source = recipe.release as ReleaseSource | undefined;
  if (!source) throw new DownloadUnavailable(`${recipe.title} publishes no release binaries`, false);
  await fs.mkdir(outDir, { recursive: true });
  const scratch = await fs.mkdtemp(path.join(outDir, `.${name}.download-`));
  try {
    const binary = path.join(scratch, name);
    if (source.kind === 'image') await pullBinary(source, name, binary, opts);
    else if (source.kind === 'file') {
      const url = source.url((opts.base ?? source.defaultBase).replace(/\/+$/, ''), name);
      opts.progress(`downloading ${url}`);
      const expected = expectedSum(await fetchText(`${url}.sha256`, opts.signal), name);
      checkSum(url, expected, await fetchToFile(url, binary, name, opts.progress, opts.signal));
    } else await fetchFromTarball(source, (opts.base ?? source.defaultBase).replace(/\/+$/, ''), scratch, binary, opts);
    await fs.chmod(binary, 0o755);
    await fs.rename(binary, path.join(outDir, name));
  } finally {
    await fs.rm(scratch, { recursive: true, force: true });
  }
}

async function fetchFromTarball(
  source: Extract<ReleaseSource, { kind: 'tarball' }>,
  base: string,
  scratch: string,
  binary: string,
  opts: { progress: Progress; signal?: AbortSignal },
): Promise<void> {
  const url = source.url(base);
  const archiveName = url.slice(url.lastIndexOf('/') + 1);
  opts.progress(`downloading ${url}`);
  const expected = expectedSum(await fetchText(source.sumsUrl(base), opts.signal), archiveName);
  const archive = path.join(scratch, archiveName);
  checkSum(url, expected, await fetchToFile(url, archive, archiveName, opts.progress, opts.signal));
  const { execa } = await import('execa');
  const r = await execa('tar', ['-xzf', archive, '-C', scratch, source.member], { reject: false, all: true });
  if (r.exitCode !== 0) throw new DownloadUnavailable(`${url}: tar could not extract ${source.member}: ${String(r.all ?? r.shortMessage).trim()}`, false);
  await fs.rename(path.join(scratch, source.member), binary);
}

async function pullBinary(
  source: Extract<ReleaseSource, { kind: 'image' }>,
  name: BinaryName,
  binary: string,
  opts: { images?: ImageSources; progress: Progress; signal?: AbortSignal },
): Promise<void> {
  const reference = source.image(name);
  await pullFiles({
    reference,
    registryBase: opts.images?.registryBase?.(parseReference(reference).host),
    expectedDigest: opts.images?.requiredDigest?.(reference),
    files: [{ pathInImage: source.pathInImage(name), dest: binary }],
    signal: opts.signal,
    onProgress: opts.progress,
  });
}
