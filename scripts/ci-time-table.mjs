#!/usr/bin/env node
// docs/ci.md's "Time per test file" table from a test run's log: the summary reporter's "Duration per file" block
// (test/support/summary-reporter.ts) becomes Markdown rows, files under a second folded into one row, with each
// project's total and the closing line. Usage: node scripts/ci-time-table.mjs RUN.log [--min-seconds 1]
import fs from 'node:fs';

const args = process.argv.slice(2);
const file = args.find((a) => !a.startsWith('--'));
const minAt = args.indexOf('--min-seconds');
const min = minAt === -1 ? 1 : Number(args[minAt + 1]);
if (!file || !Number.isFinite(min)) {
  process.stderr.write('usage: node scripts/ci-time-table.mjs RUN.log [--min-seconds N]\n');
  process.exit(2);
}

// vitest colours its output; the reporter's own lines are plain, but a log may be read through a pager's escapes.
const lines = fs
  .readFileSync(file, 'utf8')
  .replace(/\x1b\[[0-9;]*m/g, '')
  .split('\n');
const start = lines.findLastIndex((l) => l.startsWith('Duration per file'));
if (start === -1) {
  process.stderr.write(`${file}: no 'Duration per file' block (the summary reporter prints it at the end of a vitest run)\n`);
  process.exit(1);
}
const rows = [];
for (const line of lines.slice(start + 1)) {
  const m = /^\s*([\d.]+) s {2}(\S+)\s+(\S+)$/.exec(line);
  if (!m) break;
  rows.push({ seconds: Number(m[1]), project: m[2], file: m[3] });
}
const closing = lines.slice(start).find((l) => /^\d+ passed, \d+ failed/.test(l)) ?? '(no closing line)';

const totals = new Map();
for (const r of rows) totals.set(r.project, (totals.get(r.project) ?? 0) + r.seconds);
const shown = rows.filter((r) => r.seconds >= min);
const small = rows.filter((r) => r.seconds < min);

const out = [];
out.push(
  `${rows.length} files, ${closing}; vitest time by project: ` +
    [...totals.entries()].map(([p, s]) => `${p} ${Math.round(s)} s`).join(', ') +
    ` (${Math.round(rows.reduce((a, r) => a + r.seconds, 0))} s in all)`,
);
out.push('');
out.push('| project | file | seconds |');
out.push('| --- | --- | ---: |');
for (const r of shown) out.push(`| ${r.project} | \`${r.file}\` | ${r.seconds.toFixed(1)} |`);
if (small.length) {
  const projects = [...new Set(small.map((r) => r.project))].join(', ');
  out.push(`| ${projects} | the other ${small.length} files (each under ${min} s) | ${small.reduce((a, r) => a + r.seconds, 0).toFixed(1)} together |`);
}
process.stdout.write(`${out.join('\n')}\n`);
