import { readdirSync, readFileSync } from 'node:fs';
import { parseSmapsRollup } from '../../src/bench/lab-memory.js';

// Synchronous on purpose: a sample is a few hundred small /proc reads taken in one turn of the
// event loop, so on a machine loaded by the very processes it watches it is not spread over seconds.

const readOrNull = (file: string): string | null => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
};

/** A process's resident memory now (VmRSS) and its peak so far (VmHWM), in kB; null once it is gone. */
export function residentKb(pid: number): { rssKb: number; peakKb: number } | null {
  const status = readOrNull(`/proc/${pid}/status`);
  const rss = status && /VmRSS:\s+(\d+) kB/.exec(status);
  const hwm = status && /VmHWM:\s+(\d+) kB/.exec(status);
  return rss && hwm ? { rssKb: Number(rss[1]), peakKb: Number(hwm[1]) } : null;
}

/** RSS and PSS (a shared page split between its sharers) summed over the processes still there, in kB. */
export function memoryTotalsKb(pids: number[]): { processes: number; rssKb: number; pssKb: number } {
  const totals = { processes: 0, rssKb: 0, pssKb: 0 };
  for (const pid of pids) {
    const rollup = readOrNull(`/proc/${pid}/smaps_rollup`);
    const m = rollup === null ? null : parseSmapsRollup(rollup);
    if (!m) continue;
    totals.processes++;
    totals.rssKb += m.rssKb;
    totals.pssKb += m.pssKb;
  }
  return totals;
}

/** How many file descriptors a process holds open. */
export function openFds(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

/** The children a process started from its main thread (where Node's child_process spawns). */
export function childPids(pid: number): number[] {
  return (readOrNull(`/proc/${pid}/task/${pid}/children`) ?? '')
    .split(' ')
    .filter((c) => c.trim())
    .map(Number);
}

/**
 * Calls `measure` every `intervalMs` until stopped and keeps the largest value seen for each
 * figure it returns: peaks during a load, sampled (a shorter peak between samples is missed).
 * Also counts the samples and the longest gap between two, which says how fine the sampling was.
 */
export function peakSampler(
  measure: () => Record<string, number>,
  intervalMs = 500,
): { stop: () => { peaks: Record<string, number>; samples: number; longestGapMs: number } } {
  const peaks: Record<string, number> = {};
  let samples = 0;
  let longestGapMs = 0;
  let last = Date.now();
  const sample = () => {
    const now = Date.now();
    longestGapMs = Math.max(longestGapMs, now - last);
    last = now;
    let figures: Record<string, number>;
    try {
      figures = measure();
    } catch {
      return; // a watched process went away mid-sample
    }
    samples++;
    for (const [k, v] of Object.entries(figures)) peaks[k] = Math.max(peaks[k] ?? -Infinity, v);
  };
  const timer = setInterval(sample, intervalMs);
  sample();
  return {
    stop: () => {
      clearInterval(timer);
      return { peaks, samples, longestGapMs };
    },
  };
}

/** The value at quantile q (0–1) of xs, nearest rank. */
export function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] ?? NaN;
}
