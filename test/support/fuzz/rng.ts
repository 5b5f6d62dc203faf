/** Deterministic PRNG (mulberry32): the same seed gives the same inputs. */
export class Rng {
  private s: number;
  constructor(readonly seed: number) {
    this.s = seed >>> 0;
  }
  next(): number {
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let t = this.s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  /** An integer from `lo` to `hi`, both included. */
  between(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }
  pick<T>(list: readonly T[]): T {
    return list[this.int(list.length)]!;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  bytes(n: number): Buffer {
    const b = Buffer.alloc(n);
    for (let i = 0; i < n; i++) b[i] = this.int(256);
    return b;
  }
}

/** The seed of this run: `$<envVar>` to replay one, else a fresh one (the tests print it). */
export function fuzzSeed(envVar: string): number {
  const env = process.env[envVar];
  if (env) {
    const n = Number(env);
    if (!Number.isInteger(n)) throw new Error(`${envVar}=${env} is not an integer`);
    return n;
  }
  return Math.floor(Math.random() * 2 ** 31);
}
