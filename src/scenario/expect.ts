import type { Expectation } from './types.js';

/** Cells of a kubectl-style table line (columns are separated by runs of spaces). */
function cells(line: string): string[] {
  return line.trim().split(/\s+/).filter(Boolean);
}

function rowMatches(line: string, wanted: string[]): boolean {
  const have = cells(line);
  let i = 0;
  for (const cell of have) if (i < wanted.length && (wanted[i] === '*' || cell === wanted[i])) i++;
  return i === wanted.length;
}

/** Null when the output satisfies the expectation, else why not. */
export function checkExpectation(e: Expectation, output: string, exitCode: number | null): string | null {
  if (e.kind === 'fails') {
    if (exitCode === 0) return `expected the command to fail${e.text ? ` with "${e.text}"` : ''}, but it succeeded`;
    if (e.text && !output.includes(e.text)) return `expected the failure to say "${e.text}"`;
    return null;
  }
  if (exitCode !== 0) return `the command failed with exit status ${String(exitCode)}`;
  switch (e.kind) {
    case 'contains':
      return output.includes(e.text) ? null : `expected the output to contain:\n${e.text}`;
    case 'matches':
      return new RegExp(e.text, 'm').test(output) ? null : `expected the output to match /${e.text}/m`;
    case 'row': {
      const missing = e.text.split('\n').filter((row) => row.trim() && !output.split('\n').some((line) => rowMatches(line, cells(row))));
      return missing.length ? `expected a table row with the cells: ${missing.join(' | ')}` : null;
    }
  }
}
