import { NotReadyError } from '../errors.js';

/** Resolves after `ms`, or as soon as `signal` aborts (never rejects). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

export interface WaitOptions {
  timeoutMs: number;
  intervalMs?: number;
  /** What is being waited for, for the error message. */
  what: string;
  /** Extra text for the error when time runs out (e.g. what was last seen, log tails). */
  report?: () => Promise<string>;
  /** Turns the last error of `check` into words (default: its message). */
  describeError?: (err: unknown) => string;
}

/**
 * Polls `check` until it returns a value other than undefined. Never waits
 * forever: on timeout it throws NotReadyError naming what was awaited and
 * whatever `report` says about why.
 */
export async function waitUntil<T>(check: () => Promise<T | undefined>, options: WaitOptions): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  let lastError: unknown = null;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
      lastError = null;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) break;
    await sleep(Math.min(options.intervalMs ?? 500, Math.max(0, deadline - Date.now())));
  }
  const extra = options.report ? await options.report().catch((err: unknown) => `(could not build a report: ${String(err)})`) : '';
  const describe = options.describeError ?? ((err: unknown) => (err instanceof Error ? err.message : String(err)));
  const last = lastError ? `\nlast error: ${describe(lastError)}` : '';
  throw new NotReadyError(`timed out after ${Math.round(options.timeoutMs / 1000)} s waiting for ${options.what}${last}${extra ? `\n${extra}` : ''}`);
}
