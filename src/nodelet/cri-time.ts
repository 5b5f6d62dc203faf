/**
 * Timestamps of the CRI container log format, in nanoseconds since the epoch
 * (bigint: a JS Date only holds milliseconds).
 *
 * The runtime writes them as Go's RFC3339Nano (trailing zeros of the fraction
 * dropped); the kubelet prints them with `--timestamps` in a fixed-width form
 * with nine digits (`2006-01-02T15:04:05.000000000Z07:00`, its RFC3339NanoFixed).
 */

const NS_PER_MS = 1_000_000n;
const NS_PER_S = 1_000_000_000n;

function split(ns: bigint): { seconds: string; fraction: string } {
  const s = ns / NS_PER_S;
  const frac = ns % NS_PER_S;
  // Whole seconds through Date (UTC, ISO form); the fraction from the bigint.
  const seconds = new Date(Number(s) * 1000).toISOString().slice(0, 19);
  return { seconds, fraction: frac.toString().padStart(9, '0') };
}

/** Go's RFC3339Nano in UTC: `2016-10-06T00:17:09.669794202Z`, `…:09.5Z`, `…:09Z`. */
export function formatRfc3339Nano(ns: bigint): string {
  const { seconds, fraction } = split(ns);
  const trimmed = fraction.replace(/0+$/, '');
  return `${seconds}${trimmed ? `.${trimmed}` : ''}Z`;
}

/** The kubelet's fixed-width form: always nine digits of fraction. */
export function formatRfc3339NanoFixed(ns: bigint): string {
  const { seconds, fraction } = split(ns);
  return `${seconds}.${fraction}Z`;
}

const RFC3339 = /^(\d{4}-\d{2}-\d{2})[Tt](\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$/;

/** RFC 3339 with or without a fraction (up to nine digits), any offset; null when it is not one. */
export function parseRfc3339Nano(text: string): bigint | null {
  const m = RFC3339.exec(text);
  if (!m) return null;
  const offset = m[4] === 'z' ? 'Z' : (m[4] as string);
  const ms = Date.parse(`${m[1]}T${m[2]}${offset}`);
  if (Number.isNaN(ms)) return null;
  return BigInt(ms) * NS_PER_MS + BigInt((m[3] ?? '').padEnd(9, '0'));
}

export function nsFromDate(d: Date): bigint {
  return BigInt(d.getTime()) * NS_PER_MS;
}

/**
 * A wall clock with nanosecond resolution: Date.now() anchored to the
 * monotonic high-resolution timer, re-anchored when the two drift apart
 * (the wall clock was set). Never goes backwards between two calls.
 */
export function nanoClock(): () => bigint {
  let base = BigInt(Date.now()) * NS_PER_MS - process.hrtime.bigint();
  let last = 0n;
  return () => {
    let now = base + process.hrtime.bigint();
    const wall = BigInt(Date.now()) * NS_PER_MS;
    const drift = now > wall ? now - wall : wall - now;
    if (drift > 10n * NS_PER_MS) {
      base = wall - process.hrtime.bigint();
      now = wall;
    }
    if (now <= last) now = last + 1n;
    last = now;
    return now;
  };
}
