import type { Document, LineCounter } from 'yaml';
import { KNOWN_FIELDS } from './schema.js';

export type FieldPath = (string | number)[];

export interface Problem {
  path: FieldPath;
  message: string;
}

/** clusters[1].vpc */
export function formatPath(path: FieldPath): string {
  return path.reduce<string>((acc, part) => (typeof part === 'number' ? `${acc}[${part}]` : acc ? `${acc}.${part}` : part), '');
}

function editDistance(a: string, b: string): number {
  const dp = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) dp[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      dp[i]![j] = Math.min(dp[i - 1]![j]! + 1, dp[i]![j - 1]! + 1, dp[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
  }
  return dp[a.length]![b.length]!;
}

export function closestField(parent: FieldPath, key: string): string | null {
  const level = parent.filter((p) => typeof p === 'string').join('.');
  const known = KNOWN_FIELDS[level] ?? [];
  let best: { name: string; d: number } | null = null;
  for (const name of known) {
    const d = editDistance(key.toLowerCase(), name.toLowerCase());
    if (!best || d < best.d) best = { name, d };
  }
  return best && best.d <= Math.max(2, Math.floor(key.length / 3)) ? best.name : null;
}

/** The line of a field in the YAML source (1-based), or of its nearest existing parent. */
export function lineOf(doc: Document, counter: LineCounter, path: FieldPath): number | null {
  for (let depth = path.length; depth >= 0; depth--) {
    const node = doc.getIn(path.slice(0, depth), true) as { range?: [number, number, number] } | undefined;
    if (node && node.range) return counter.linePos(node.range[0]).line;
  }
  return null;
}

/** Where a key itself (not its value) stands: the line for unknown fields. */
export function lineOfKey(doc: Document, counter: LineCounter, parent: FieldPath, key: string): number | null {
  const container = (parent.length ? doc.getIn(parent, true) : doc.contents) as { items?: { key?: { value?: unknown; range?: [number, number, number] } }[] } | null;
  const pair = container?.items?.find((item) => item.key?.value === key);
  if (pair?.key?.range) return counter.linePos(pair.key.range[0]).line;
  return lineOf(doc, counter, parent);
}
