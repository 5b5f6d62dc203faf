import type { Expectation, Step } from './types.js';

/** A table in command output, kubectl style: an upper-case header line, columns aligned under it. */
export interface Table {
  headers: string[];
  rows: string[][];
}

const HEADER_CELL = /^[A-Z][A-Z0-9_./()-]*(?: [A-Z][A-Z0-9_./()-]*)*$/;
// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;?]*[A-Za-z]/g;

/** Output as expectations see it: no colour codes, no carriage returns. */
function normaliseOutput(output: string): string {
  return output.replace(ANSI, '').replace(/\r\n?/g, '\n');
}

/** Header cells and where each starts; headers are separated by two or more spaces (one space may sit inside a header, as in `CLUSTER NAME`). */
function headerColumns(line: string): { name: string; start: number }[] | null {
  const columns: { name: string; start: number }[] = [];
  const re = /\S+(?: \S+)*/g;
  for (let m = re.exec(line); m; m = re.exec(line)) {
    if (!HEADER_CELL.test(m[0])) return null;
    columns.push({ name: m[0], start: m.index });
  }
  return columns.length ? columns : null;
}

/** Every table in the output: each starts at a header line and runs to a blank line or the next header. */
export function parseTables(output: string): Table[] {
  const tables: Table[] = [];
  let current: { columns: { name: string; start: number }[]; table: Table } | null = null;
  for (const line of normaliseOutput(output).split('\n')) {
    if (!line.trim()) {
      current = null;
      continue;
    }
    const columns = headerColumns(line);
    if (columns) {
      current = { columns, table: { headers: columns.map((c) => c.name), rows: [] } };
      tables.push(current.table);
      continue;
    }
    if (!current) continue;
    const cols = current.columns;
    current.table.rows.push(cols.map((c, i) => line.slice(c.start, cols[i + 1]?.start ?? line.length).trim()));
  }
  return tables;
}

/** Cells of an expectation line: split at runs of two or more spaces (or tabs) when the line has any, else at every space. */
function expectedCells(line: string): string[] {
  const trimmed = line.trim();
  return (/ {2,}|\t/.test(trimmed) ? trimmed.split(/ {2,}|\t+/) : trimmed.split(/\s+/)).filter(Boolean);
}

const cellMatches = (wanted: string, have: string | undefined) => (wanted === '*' ? have !== undefined : have === wanted);
const startsWithCells = (row: readonly string[], wanted: readonly string[]) => wanted.every((w, i) => cellMatches(w, row[i]));

/**
 * `expect row`: every line is a row the output must have. Without a header,
 * a row's cells must be the leading cells of a table row or output line, in
 * order (`*` matches any one cell). When the first line names columns of a
 * table in the output (`NAME  READY`), the other lines give those columns only.
 */
function checkRows(text: string, output: string): string | null {
  const lines = text.split('\n').filter((l) => l.trim());
  const tables = parseTables(output);
  const header = expectedCells(lines[0] ?? '');
  const keyed = header.every((h) => HEADER_CELL.test(h)) ? tables.filter((t) => header.every((h) => t.headers.includes(h))) : [];
  if (keyed.length) {
    const missing = lines.slice(1).filter((line) => {
      const wanted = expectedCells(line);
      return !keyed.some((t) => t.rows.some((row) => header.every((h, i) => wanted[i] === undefined || cellMatches(wanted[i]!, row[t.headers.indexOf(h)]))));
    });
    return missing.length ? `expected rows under the columns ${header.join(', ')}:\n${missing.join('\n')}` : null;
  }
  if (header.length && header.every((h) => HEADER_CELL.test(h)) && lines.length > 1 && tables.length) {
    return `expected a table with the columns ${header.join(', ')}; the output's tables have ${tables.map((t) => t.headers.join(', ')).join(' / ')}`;
  }
  const candidates = [
    ...tables.flatMap((t) => t.rows),
    ...normaliseOutput(output)
      .split('\n')
      .map((l) => l.trim().split(/\s+/)),
  ];
  const missing = lines.filter((line) => !candidates.some((row) => startsWithCells(row, expectedCells(line))));
  return missing.length ? `expected ${missing.length === 1 ? 'a table row' : 'table rows'} starting with:\n${missing.join('\n')}` : null;
}

/** Null when the output satisfies this one expectation (exit status aside), else why not. */
export function checkExpectation(e: Expectation, output: string): string | null {
  const out = normaliseOutput(output);
  switch (e.kind) {
    case 'contains':
      return out.includes(e.text.trim()) ? null : `expected the output to contain:\n${e.text.trim()}`;
    case 'matches':
      return new RegExp(e.text, 'm').test(out) ? null : `expected the output to match /${e.text}/m`;
    case 'row':
      return checkRows(e.text, out);
    case 'fails':
      return e.text.trim() && !out.includes(e.text.trim()) ? `expected the failure to say:\n${e.text.trim()}` : null;
  }
}

export interface StepVerdict {
  /** Why the step failed, or null when it passed. */
  failure: string | null;
  /** The expectation that did not hold (none when the exit status alone decided). */
  expectation: Expectation | null;
}

/**
 * A block must exit 0 unless it has `expect fails`, which requires a non-zero
 * exit; then every expectation must hold for the output.
 */
export function judgeStep(step: Pick<Step, 'expectations'>, output: string, exitCode: number | null): StepVerdict {
  const fails = step.expectations.find((e) => e.kind === 'fails');
  if (fails && exitCode === 0) return { failure: 'expected the command to fail, but it exited 0', expectation: fails };
  if (!fails && exitCode !== 0) return { failure: `the command failed with exit status ${String(exitCode)}`, expectation: null };
  for (const e of step.expectations) {
    const why = checkExpectation(e, output);
    if (why) return { failure: why, expectation: e };
  }
  return { failure: null, expectation: null };
}
