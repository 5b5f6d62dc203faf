/** How one input ended: accepted (a valid result), rejected with the project's error, or anything else (a bug). */
export type Outcome = 'accepted' | 'rejected' | 'crashed';

interface Row {
  cases: number;
  accepted: number;
  rejected: number;
  crashed: number;
  maxMs: number;
}

/** Cases per input kind and how they ended, with the slowest case's time; printed by each suite for docs/reliability.md. */
export class Tally {
  private readonly rows = new Map<string, Row>();
  private readonly times: number[] = [];

  add(kind: string, outcome: Outcome, ms: number): void {
    const row = this.rows.get(kind) ?? { cases: 0, accepted: 0, rejected: 0, crashed: 0, maxMs: 0 };
    row.cases++;
    row[outcome]++;
    row.maxMs = Math.max(row.maxMs, ms);
    this.rows.set(kind, row);
    this.times.push(ms);
  }

  total(): number {
    return this.times.length;
  }

  count(kind: string, outcome?: Outcome): number {
    const row = this.rows.get(kind);
    return row ? (outcome ? row[outcome] : row.cases) : 0;
  }

  /** The time below which `fraction` of the cases finished. */
  quantileMs(fraction: number): number {
    const sorted = [...this.times].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? 0;
  }

  render(title: string): string {
    const header = `  ${'input'.padEnd(34)} ${'cases'.padStart(6)} ${'accepted'.padStart(9)} ${'rejected'.padStart(9)} ${'crashed'.padStart(8)} ${'max ms'.padStart(8)}`;
    const rows = [...this.rows.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(
        ([k, r]) =>
          `  ${k.padEnd(34)} ${String(r.cases).padStart(6)} ${String(r.accepted).padStart(9)} ${String(r.rejected).padStart(9)} ${String(r.crashed).padStart(8)} ${r.maxMs.toFixed(1).padStart(8)}`,
      );
    const sum = this.times.reduce((a, b) => a + b, 0);
    return `${title}: ${this.total()} inputs in ${(sum / 1000).toFixed(1)} s, median ${this.quantileMs(0.5).toFixed(2)} ms, p99 ${this.quantileMs(0.99).toFixed(1)} ms\n${header}\n${rows.join('\n')}`;
  }
}

/** What a suite's judge made of one input. */
export interface Verdict {
  outcome: Outcome;
  ms: number;
  why?: string;
  error?: unknown;
}

/**
 * The bad outcomes of a suite's inputs (a crash, or a case slower than `hangMs`), each with an
 * excerpt of its input; counted in the tally as they come.
 */
export class BadOutcomes {
  private readonly lines: string[] = [];

  constructor(
    private readonly tally: Tally,
    private readonly hangMs: number,
    private readonly excerptChars: number,
  ) {}

  record(label: string, kind: string, input: string | Buffer, entry: string, verdict: Verdict): void {
    this.tally.add(kind, verdict.outcome, verdict.ms);
    const excerpt = JSON.stringify(typeof input === 'string' ? input.slice(0, this.excerptChars) : input.subarray(0, 300).toString('base64'));
    if (verdict.outcome === 'crashed') {
      const stack = verdict.error instanceof Error ? `\n    ${verdict.error.stack?.split('\n').slice(0, 4).join('\n    ')}` : '';
      this.lines.push(`${label} [${kind}, ${entry}] ${verdict.why}${stack}\n    input: ${excerpt}`);
    } else if (verdict.ms > this.hangMs) {
      this.lines.push(`${label} [${kind}, ${entry}] took ${verdict.ms.toFixed(0)} ms (more than ${this.hangMs})\n    input: ${excerpt}`);
    }
  }

  /** Takes the bad outcomes so far; the message shows one of each kind, so a rare one is not hidden behind many of another. */
  take(replay: string): { all: string[]; message: string } {
    const all = this.lines.splice(0);
    const byReason = new Map<string, string>();
    for (const f of all) {
      const reason = (/\] ([^:"]*)/.exec(f)?.[1] ?? f).slice(0, 60);
      if (!byReason.has(reason)) byReason.set(reason, f);
    }
    return { all, message: `${replay}: ${all.length} bad outcomes; one of each kind:\n${[...byReason.values()].slice(0, 8).join('\n')}` };
  }
}
