import { describe, expect, it } from 'vitest';
import { cpuTicksOfStat, summarize } from '../../src/bench/tunnel.js';

const result = (mbitPerSec: number, p99ms: number): Parameters<typeof summarize>[0][number] => ({
  mbitPerSec,
  p50ms: 1,
  p99ms,
  cpuSecPerGiB: 5,
  cpuUsPerRequest: 600,
});

describe('tunnel bench: rounds and CPU accounting', () => {
  it('summarize: the median of each figure over the rounds, and its range', () => {
    const s = summarize([result(900, 6), result(500, 4), result(950, 12)]);
    expect(s.rounds).toBe(3);
    expect(s.median.mbitPerSec).toBe(900);
    expect(s.median.p99ms).toBe(6);
    expect([s.min.mbitPerSec, s.max.mbitPerSec]).toEqual([500, 950]);
    expect([s.min.p99ms, s.max.p99ms]).toEqual([4, 12]);
  });

  it('summarize: an even number of rounds takes the mean of the middle two; none is an error', () => {
    expect(summarize([result(1, 1), result(3, 3), result(10, 10), result(2, 2)]).median.mbitPerSec).toBe(2.5);
    expect(() => summarize([])).toThrow(/no results/);
  });

  it('cpuTicksOfStat: utime + stime, whatever the command name holds', () => {
    const tail = 'S 1 2 3 0 -1 4194560 100 0 0 0 1234 567 0 0 20 0 9 0 42 1000 200 18446744073709551615';
    expect(cpuTicksOfStat(`4242 (node) ${tail}`)).toBe(1234 + 567);
    expect(cpuTicksOfStat(`4242 (odd) name (x)) ${tail}`)).toBe(1234 + 567);
    expect(() => cpuTicksOfStat('4242 (node)')).toThrow(/utime\/stime/);
  });
});
