import fs from 'node:fs/promises';
import path from 'node:path';
import { DigestMismatchError, LabError } from '../errors.js';
import { outboundFetch } from '../util/outbound-proxy.js';
import type { Progress } from './gobuild.js';
import { BodyInterrupted, describeFetchError, saveResponse } from './http-file.js';
import { downloadUrl, NO_MIRRORS, registryBase, requiredDigest, type Mirrors } from './mirrors.js';
import { pullFiles } from './oci/pull.js';
import { parseReference } from './oci/reference.js';
import type { BinaryName, Recipe, ReleaseFile, ReleaseSource } from './recipes.js';

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

/**
 * GET with a short limit on getting the response headers; the body then streams as long as it keeps moving. Through the
 * environment's proxy when one applies (util/outbound-proxy.ts). Throws DownloadUnavailable, or ProxyError when the proxy refuses.
 */
export async function openDownload(url: string, signal?: AbortSignal): Promise<Response> {
  const connect = new AbortController();
  const timer = setTimeout(() => connect.abort(), CONNECT_TIMEOUT_MS);
  const res = await outboundFetch(url, { redirect: 'follow', signal: signal ? AbortSignal.any([signal, connect.signal]) : connect.signal })
    .catch((err: unknown) => {
      signal?.throwIfAborted();
      // A proxy that refuses (exit 9) or a proxy variable that does not parse (exit 2) is no reason to build instead.
      if (err instanceof LabError) throw err;
      const why = connect.signal.aborted ? `no answer within ${CONNECT_TIMEOUT_MS / 1000} s` : describeFetchError(err, CONNECT_TIMEOUT_MS);
      throw new DownloadUnavailable(`${url}: ${why}`, true);
    })
    .finally(() => clearTimeout(timer));
  if (!res.ok) {
    await res.body?.cancel().catch(() => undefined);
    throw new DownloadUnavailable(`${url}: HTTP ${res.status}`, false);
  }
  return res;
}

async function fetchText(url: string, signal?: AbortSignal): Promise<string> {
  const res = await openDownload(url, signal);
  return res.text();
}

/** Streams a download into `file`; returns its sha256 (hex). */
async function fetchToFile(url: string, file: string, label: string, progress: Progress, signal?: AbortSignal): Promise<string> {
  const res = await openDownload(url, signal);
  try {
    return (await saveResponse(res, file, label, progress, signal)).sha256;
  } catch (err) {
    if (err instanceof BodyInterrupted) throw new DownloadUnavailable(`${url}: ${err.reason}`, false);
    throw err;
  }
}

function expectedSum(sums: string, fileName: string): string | null {
  for (const line of sums.split('\n')) {
    const [hex, name] = line.trim().split(/\s+/);
    if (hex && /^[0-9a-f]{64}$/.test(hex) && (name === undefined || path.basename(name.replace(/^\*/, '')) === fileName)) return hex;
  }
  return null;
}

/**
 * A release file whose checksum is not the one it must have: its bytes against the published sum, or the
 * published sum against our pin (exit 7; under auto the binary is then built). No published sum at all
 * falls through to the next source.
 */
function checksumMismatch(artifact: string, expected: string | null, actual: string | null): Error {
  if (!expected) return new DownloadUnavailable(`${artifact}: no published sha256 for it`, false);
  return new DigestMismatchError(artifact, `sha256:${expected}`, actual ? `sha256:${actual}` : '(none published)');
}

/** The checksum a release file must have: the published one, which must equal the pin when there is one (ours, or the mirrors file's). */
async function publishedSum(file: ReleaseFile, mirrors: Mirrors, signal?: AbortSignal): Promise<string | null> {
  const sumsUrl = downloadUrl(mirrors, file.sumsUrl);
  const published = expectedSum(await fetchText(sumsUrl, signal), file.fileName);
  const pinned = requiredDigest(mirrors, file.url, file.sha256 && `sha256:${file.sha256}`)?.replace(/^sha256:/, '');
  if (pinned && published !== pinned) throw checksumMismatch(`${file.fileName} as ${sumsUrl} publishes it`, pinned, published);
  return published;
}

/** Fetches one release file into `dest`, verified against its published checksum. */
async function fetchVerified(
  file: ReleaseFile,
  dest: string,
  label: string,
  opts: { mirrors: Mirrors; progress: Progress; signal?: AbortSignal },
): Promise<void> {
  const url = downloadUrl(opts.mirrors, file.url);
  opts.progress(`downloading ${url}`);
  const expected = await publishedSum(file, opts.mirrors, opts.signal);
  const actual = await fetchToFile(url, dest, label, opts.progress, opts.signal);
  if (!expected || actual !== expected) throw checksumMismatch(url, expected, actual);
}

/**
 * Fetches one binary of an official release into `outDir/<name>`, through the mirrors' downloads,
 * verified against the release's published sha256, or takes it out of an official image through the
 * mirrors' registries, verified by digest. Throws DownloadUnavailable or RegistryUnavailableError when
 * it cannot, DigestMismatchError when bytes do not match; nothing is left behind then.
 */
export async function downloadRelease(
  recipe: Recipe,
  name: BinaryName,
  outDir: string,
  opts: { mirrors?: Mirrors; progress: Progress; signal?: AbortSignal },
): Promise<void> {
  const source = recipe.release as ReleaseSource | undefined;
  if (!source) throw new DownloadUnavailable(`${recipe.title} publishes no release binaries`, false);
  const fetchOpts = { mirrors: opts.mirrors ?? NO_MIRRORS, progress: opts.progress, signal: opts.signal };
  await fs.mkdir(outDir, { recursive: true });
  const scratch = await fs.mkdtemp(path.join(outDir, `.${name}.download-`));
  try {
    let binary: string;
    if (source.kind === 'image') {
      binary = path.join(scratch, name);
      await pullBinary(source, name, binary, fetchOpts);
    } else if (source.kind === 'file') {
      binary = path.join(scratch, name);
      await fetchVerified(source.file(name), binary, name, fetchOpts);
    } else {
      const archive = path.join(scratch, source.file.fileName);
      await fetchVerified(source.file, archive, source.file.fileName, fetchOpts);
      const { execa } = await import('execa');
      const r = await execa('tar', ['-xzf', archive, '-C', scratch, source.member], { reject: false, all: true });
      if (r.exitCode !== 0) {
        throw new DownloadUnavailable(`${source.file.url}: tar could not extract ${source.member}: ${String(r.all ?? r.shortMessage).trim()}`, false);
      }
      binary = path.join(scratch, source.member);
    }
    await fs.chmod(binary, 0o755);
    await fs.rename(binary, path.join(outDir, name));
  } finally {
    await fs.rm(scratch, { recursive: true, force: true });
  }
}

async function pullBinary(
  source: Extract<ReleaseSource, { kind: 'image' }>,
  name: BinaryName,
  binary: string,
  opts: { mirrors: Mirrors; progress: Progress; signal?: AbortSignal },
): Promise<void> {
  const reference = source.image(name);
  await pullFiles({
    reference,
    registryBase: registryBase(opts.mirrors, parseReference(reference).host),
    expectedDigest: requiredDigest(opts.mirrors, reference),
    files: [{ pathInImage: source.pathInImage(name), dest: binary }],
    signal: opts.signal,
    onProgress: opts.progress,
  });
}
