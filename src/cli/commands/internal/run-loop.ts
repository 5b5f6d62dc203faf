import type { KubeClient } from '../../../kube/client.js';
import { sleep } from '../../../kube/wait.js';

/** A log line with a timestamp, on stderr (the nodelet keeps it as the container log). */
export function stamp(line: string): void {
  process.stderr.write(`${new Date().toISOString()} ${line}\n`);
}

/** Runs `work` until SIGTERM or SIGINT aborts it. */
export async function runUntilSignal(work: (signal: AbortSignal) => Promise<void>): Promise<void> {
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  await work(controller.signal);
}

/**
 * Cuts a loop's sleep short: `wake()` ends the current sleep at once, or the next one if the loop is
 * busy, so an event seen during a pass is not lost.
 */
export class Wakeup {
  private pending = false;
  private end: (() => void) | undefined;

  wake(): void {
    this.pending = true;
    this.end?.();
  }

  async sleep(ms: number, signal: AbortSignal): Promise<void> {
    if (!this.pending && !signal.aborted) {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          this.end = undefined;
          resolve();
        };
        const timer = setTimeout(done, ms);
        signal.addEventListener('abort', done, { once: true });
        this.end = done;
      });
    }
    this.pending = false;
  }
}

/**
 * Calls `pass` every `intervalMs` until the signal aborts, or sooner when `wakeup` is woken; a failing
 * pass is logged and retried.
 */
export async function repeat(signal: AbortSignal, intervalMs: number, pass: () => Promise<void>, wakeup?: Wakeup): Promise<void> {
  while (!signal.aborted) {
    try {
      await pass();
    } catch (err) {
      stamp(`pass failed: ${(err as Error).message}`);
    }
    if (wakeup) await wakeup.sleep(intervalMs, signal);
    // sleep drops its abort listener when the timer fires, so none pile up over the passes.
    else await sleep(intervalMs, signal);
  }
}

/**
 * Watches a collection until the signal aborts, calling `onChange` on every event; a watch that ends
 * or fails is started again after a second (events missed meanwhile only delay the caller's next pass).
 */
export async function watchUntilAborted(
  client: KubeClient,
  collection: string,
  query: Record<string, string>,
  onChange: () => void,
  signal: AbortSignal,
): Promise<void> {
  while (!signal.aborted) {
    await client.watch(collection, query, () => onChange(), signal).catch(() => undefined);
    await sleep(1_000, signal);
  }
}
