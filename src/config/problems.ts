import { KNOWN_FIELDS } from './schema.js';

export type FieldPath = (string | number)[];

/** One thing wrong with a lab file. `value`, when present, is the offending value as written. */
export interface Problem {
  path: FieldPath;
  message: string;
  value?: unknown;
}

/** ['clusters', 1, 'vpc'] → clusters[1].vpc */
function formatPath(path: readonly (string | number)[]): string {
  return path.reduce<string>((acc, part) => (typeof part === 'number' ? `${acc}[${part}]` : acc ? `${acc}.${part}` : part), '');
}

/** JSON would write NaN and ±Infinity (`.nan`, `.inf` in YAML) as null. */
const numbersAsWritten = (_key: string, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v);

/** A value as the user wrote it, short enough for one line. */
export function describeValue(value: unknown): string {
  const text = value === undefined ? 'nothing' : typeof value === 'number' ? String(value) : JSON.stringify(value, numbersAsWritten);
  return text.length > 100 ? `${text.slice(0, 97)}...` : text;
}

/** `<path> = <value>: <message>`, or `<path>: <message>` when no value belongs to the problem. */
export function describeProblem(problem: Problem): string {
  const where = formatPath(problem.path) || '(top level)';
  return 'value' in problem ? `${where} = ${describeValue(problem.value)}: ${problem.message}` : `${where}: ${problem.message}`;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/** Fields allowed where `parent` points (array indices do not matter). */
function knownFieldsAt(parent: FieldPath): readonly string[] {
  return KNOWN_FIELDS[parent.filter((p) => typeof p === 'string').join('.')] ?? [];
}

/** The known field closest to a misspelt one, if it is close enough to be what was meant. */
function closestField(parent: FieldPath, key: string): string | null {
  let best: { name: string; distance: number } | null = null;
  for (const name of knownFieldsAt(parent)) {
    const distance = editDistance(key.toLowerCase(), name.toLowerCase());
    if (!best || distance < best.distance) best = { name, distance };
  }
  return best && best.distance <= Math.max(2, Math.floor(key.length / 3)) ? best.name : null;
}

/** "unknown field; did you mean 'vpc'?" or the list of fields allowed there. */
export function unknownFieldMessage(parent: FieldPath, key: string): string {
  const suggestion = closestField(parent, key);
  if (suggestion) return `unknown field; did you mean '${suggestion}'?`;
  const known = knownFieldsAt(parent);
  return known.length ? `unknown field; fields allowed here: ${known.join(', ')}` : 'unknown field; remove it';
}
