/** One request's outcome, by when it started and ended (ms since the epoch). */
export interface Sample {
  start: number;
  end: number;
  ok: boolean;
  error?: string;
}

export type Probe = () => Promise<{ ok: boolean; error?: string }>;

/**
 * Steady traffic: one probe every `intervalMs`, not waiting for the previous one, each bounded by
 * `timeoutMs` (a probe that never answers counts as failed then). `stop` waits for those in flight.
 */
export function steadyTraffic(probe: Probe, intervalMs: number, timeoutMs: number): { samples: Sample[]; stop: () => Promise<void> } {
  const samples: Sample[] = [];
  const inFlight = new Set<Promise<void>>();
  const one = async (): Promise<void> => {
    const start = Date.now();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<{ ok: false; error: string }>(
      (res) => (timer = setTimeout(() => res({ ok: false, error: `no answer within ${timeoutMs} ms` }), timeoutMs)),
    );
    const r = await Promise.race([probe().catch((err: Error) => ({ ok: false, error: err.message })), timeout]);
    clearTimeout(timer);
    samples.push({ start, end: Date.now(), ok: r.ok, ...(r.error ? { error: r.error } : {}) });
  };
  const ticker = setInterval(() => {
    const p = one().finally(() => inFlight.delete(p));
    inFlight.add(p);
  }, intervalMs);
  return {
    samples,
    stop: async () => {
      clearInterval(ticker);
      // Probes that lost the race still run to their own end (the client's dial timeout); wait for them.
      await Promise.allSettled([...inFlight]);
    },
  };
}
