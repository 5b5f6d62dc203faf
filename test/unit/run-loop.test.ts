import { describe, expect, it } from 'vitest';
import { repeat, Wakeup } from '../../src/cli/commands/internal/run-loop.js';

describe('Wakeup: a loop sleep that an event cuts short', () => {
  it('wake() ends a sleep at once', async () => {
    const w = new Wakeup();
    const t0 = Date.now();
    const sleeping = w.sleep(10_000, new AbortController().signal);
    setTimeout(() => w.wake(), 20);
    await sleeping;
    expect(Date.now() - t0).toBeLessThan(5_000);
  });

  it('a wake() while the loop is busy ends the next sleep at once, only that one', async () => {
    const w = new Wakeup();
    w.wake();
    const t0 = Date.now();
    await w.sleep(10_000, new AbortController().signal);
    expect(Date.now() - t0).toBeLessThan(5_000);
    const t1 = Date.now();
    await w.sleep(60, new AbortController().signal);
    expect(Date.now() - t1).toBeGreaterThanOrEqual(50);
  });

  it('an abort ends the sleep, and repeat stops', async () => {
    const w = new Wakeup();
    const controller = new AbortController();
    let passes = 0;
    const loop = repeat(controller.signal, 10_000, async () => void passes++, w);
    await new Promise((r) => setTimeout(r, 20));
    w.wake();
    await new Promise((r) => setTimeout(r, 20));
    controller.abort();
    await loop;
    expect(passes).toBe(2);
  });
});
