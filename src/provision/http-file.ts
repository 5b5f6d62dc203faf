import crypto from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Progress } from './gobuild.js';

/** A download that stops delivering bytes for this long is given up. */
const STALL_TIMEOUT_MS = 60_000;

/** Why a network request failed, in a few words: `ECONNREFUSED`, `no answer within 5 s`. */
export function describeFetchError(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return `no answer within ${timeoutMs / 1000} s`;
  return e?.cause?.code ?? e?.cause?.message ?? e?.message ?? String(err);
}

/** Thrown by saveResponse when the body broke off; `reason` says how. */
export class BodyInterrupted extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

/**
 * Streams a response body into `file` (mode 0755), hashing as it goes; reports
 * progress every few MB. Returns the sha256 (hex) and the byte count.
 */
export async function saveResponse(
  res: Response,
  file: string,
  label: string,
  progress: Progress,
  signal?: AbortSignal,
): Promise<{ sha256: string; size: number }> {
  if (!res.body) throw new BodyInterrupted('empty response');
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
    throw new BodyInterrupted(stall.signal.aborted ? `stalled for ${STALL_TIMEOUT_MS / 1000} s` : describeFetchError(err, STALL_TIMEOUT_MS));
  } finally {
    clearTimeout(timer);
  }
  return { sha256: hash.digest('hex'), size: received };
}
