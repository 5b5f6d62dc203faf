import { describe, expect, it } from 'vitest';
import { DEFAULT_BACKOFF, reconnectDelay } from '../../src/tunnel/index.js';

describe('the proxy-agent reconnect delay', () => {
  it('first tries again within 250 ms, doubles per failure and stays within 1.2 s apart', () => {
    const low = () => 0;
    const high = () => 0.999_999;
    expect(reconnectDelay(0, {}, high)).toBeLessThanOrEqual(250);
    expect(reconnectDelay(0, {}, low)).toBe(Math.round(DEFAULT_BACKOFF.initialMs * 0.8));
    expect([1, 2, 3].map((f) => reconnectDelay(f, {}, () => 0.5))).toEqual([400, 800, 1000]);
    for (const failures of [4, 10, 50]) expect(reconnectDelay(failures, {}, high)).toBeLessThanOrEqual(1200);
  });

  it('jitters by ±20% around the base, and takes the flags in place of the defaults', () => {
    const seen = new Set(Array.from({ length: 200 }, () => reconnectDelay(0, { initialMs: 1000, capMs: 10_000 })));
    for (const d of seen) (expect(d).toBeGreaterThanOrEqual(800), expect(d).toBeLessThanOrEqual(1200));
    expect(seen.size).toBeGreaterThan(20);
    expect(reconnectDelay(20, { initialMs: 1000, capMs: 10_000 }, () => 0.5)).toBe(10_000);
  });
});
