const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;

/**
 * A Go duration as upstream flags and API fields spell them (500ms, 10s, 1m30s,
 * 8640h0m0s), in milliseconds; null when the text is not one. Only the units the
 * lab meets (ms, s, m, h): no sign, no ns/us, and a bare number is not a duration.
 */
export function parseGoDuration(text: string): number | null {
  // ms before m: the first alternative that fits wins, and "500ms" is not 500m and a stray s.
  const re = /(\d+(?:\.\d+)?)(ms|h|m|s)/g;
  let total = 0;
  let consumed = 0;
  for (const m of text.matchAll(re)) {
    if (m.index !== consumed) return null;
    consumed += m[0].length;
    total += Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
  }
  return consumed === text.length && text.length > 0 ? total : null;
}
