import crypto from 'node:crypto';
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Progress } from './gobuild.js';
import { downloadUrl, NO_MIRRORS, requiredDigest, type Mirrors } from './mirrors.js';
import type { BinaryName, Recipe, ReleaseFile, ReleaseSource } from './recipes.js';

/** How long a release server may take to answer at all; closed networks must fall through to the Go build quickly. */
const CONNECT_TIMEOUT_MS = 5_000;
/** A download that stops delivering bytes for this long is given up. */
const STALL_TIMEOUT_MS = 60_000;

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

function describe(err: unknown): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return `no answer within ${CONNECT_TIMEOUT_MS / 1000} s`;
  return e?.cause?.code ?? e?.cause?.message ?? e?.message ?? String(err);
}

/** GET with a short limit on getting the response headers; the body then streams as long as it keeps moving. */
async function open(url: string, signal?: AbortSignal): Promise<Response> {
  const connect = AbortSignal.timeout(CONNECT_TIMEOUT_MS);
  const res = await fetch(url, { redirect: 'follow', signal: signal ? AbortSignal.any([signal, connect]) : connect }).catch((err: unknown) => {
    signal?.throwIfAborted();
    throw new DownloadUnavailable(`${url}: ${describe(err)}`, true);
  });
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

/** Streams a response into `file`, hashing as it goes; reports progress every few MB. */
async function fetchToFile(url: string, file: string, label: string, progress: Progress, signal?: AbortSignal): Promise<string> {
  const res = await open(url, signal);
  if (!res.body) throw new DownloadUnavailable(`${url}: empty response`, false);
  const total = Number(res.headers.get('content-length') ?? 0);
  const hash = crypto.createHash('sha256');
  let received = 0;
  let reported = 0;
  const stall = new AbortController();
  let timer = setTimeout(() => stall.abort(), STALL_TIMEOUT_MS);
  const meter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      received += chunk.length;
      clearTimeout(timer);
      timer = setTimeout(() => stall.abort(), STALL_TIMEOUT_MS);
      if (received - reported >= 8 << 20) {
        reported = received;
        progress(`downloading ${label} (${Math.round(received / 2 ** 20)}${total ? ` of ${Math.round(total / 2 ** 20)}` : ''} MB)`);
      }
      done(null, chunk);
    },
  });
  try {
    const abort = signal ? AbortSignal.any([signal, stall.signal]) : stall.signal;
    await pipeline(Readable.fromWeb(res.body as import('node:stream/web').ReadableStream), meter, createWriteStream(file, { mode: 0o755 }), { signal: abort });
  } catch (err) {
    signal?.throwIfAborted();
    throw new DownloadUnavailable(`${url}: ${stall.signal.aborted ? `stalled for ${STALL_TIMEOUT_MS / 1000} s` : describe(err)}`, false);
  } finally {
    clearTimeout(timer);
  }
  return hash.digest('hex');
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
 * published sum against our pin. The one place that says what such a failure is: today the download error
 * path (under auto the binary is then built); an integrity error of its own can replace it here.
 */
function checksumMismatch(artifact: string, expected: string, actual: string | null): Error {
  return new DownloadUnavailable(`${artifact}: sha256 ${actual ?? '(none)'} does not match the ${expected}`, false);
}

/** The checksum a release file must have: the published one, which must equal the pin when there is one (ours, or the mirrors file's). */
async function publishedSum(file: ReleaseFile, mirrors: Mirrors, signal?: AbortSignal): Promise<string | null> {
  const sumsUrl = downloadUrl(mirrors, file.sumsUrl);
  const published = expectedSum(await fetchText(sumsUrl, signal), file.fileName);
  const pinned = requiredDigest(mirrors, file.url, file.sha256 && `sha256:${file.sha256}`)?.replace(/^sha256:/, '');
  if (pinned && published !== pinned) throw checksumMismatch(`${file.fileName} as ${sumsUrl} publishes it`, `pinned ${pinned}`, published);
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
  if (!expected || actual !== expected) throw checksumMismatch(url, `published ${expected ?? '(none)'}`, actual);
}

/**
 * Fetches one binary of an official release into `outDir/<name>`, through the mirrors' downloads,
 * verified against the release's published sha256. Throws DownloadUnavailable when it cannot;
 * nothing is left behind then.
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
    if (source.kind === 'file') {
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
