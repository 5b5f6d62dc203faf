import { setTimeout as delay } from 'node:timers/promises';

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

/** Calls `pass` every `intervalMs` until the signal aborts; a failing pass is logged and retried. */
export async function repeat(signal: AbortSignal, intervalMs: number, pass: () => Promise<void>): Promise<void> {
  while (!signal.aborted) {
    try {
      await pass();
    } catch (err) {
      stamp(`pass failed: ${(err as Error).message}`);
    }
    // timers/promises drops its abort listener when the timer fires: one added per pass would pile up.
    await delay(intervalMs, undefined, { signal }).catch(() => undefined);
  }
}
