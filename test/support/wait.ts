import { waitUntil as waitUntilInSrc } from '../../src/kube/wait.js';

/** Polls `fn` until it returns something other than undefined; throws naming what it waited for, and the last error. */
export function waitUntil<T>(fn: () => Promise<T | undefined>, what: string, timeoutMs = 90_000, intervalMs = 500): Promise<T> {
  return waitUntilInSrc(fn, { what, timeoutMs, intervalMs });
}
