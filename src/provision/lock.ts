import fs from 'node:fs/promises';
import path from 'node:path';
import lockfile from 'proper-lockfile';
import { sleep } from '../kube/wait.js';

/**
 * Serialises provisioning between concurrent ocm-lab runs (and concurrent calls
 * in one process): the second waits, telling `onWait` once, and then finds the
 * cache warm. proper-lockfile keeps the lock fresh while a long build runs and
 * lets a lock left by a killed run go stale after a minute.
 */
export async function withCacheLock<T>(cache: string, body: () => Promise<T>, opts: { onWait?: () => void; signal?: AbortSignal } = {}): Promise<T> {
  await fs.mkdir(cache, { recursive: true });
  const lockTarget = path.join(cache, 'provision.lock');
  await fs.writeFile(lockTarget, '', { flag: 'a' });
  let release: (() => Promise<void>) | null = null;
  let told = false;
  let compromised: Error | null = null;
  while (!release) {
    opts.signal?.throwIfAborted();
    try {
      release = await lockfile.lock(lockTarget, {
        stale: 60_000,
        update: 10_000,
        retries: 0,
        realpath: false,
        // The default throws from a timer and kills the process; a late refresh is not worth that.
        onCompromised: (err) => {
          compromised = err;
        },
      });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ELOCKED') throw err;
      if (!told) {
        opts.onWait?.();
        told = true;
      }
      await sleep(500);
    }
  }
  try {
    return await body();
  } finally {
    if (!compromised) await release().catch(() => undefined);
  }
}
