#!/usr/bin/env node
// The conformance matrix as one Markdown table: reads the per-cell summaries
// that `ocm-lab conformance --summary FILE` writes (each carries its cell and
// totals in an `ocm-lab-conformance-cell` comment) and prints one row per cell.
// Plain Node, no dependencies: the CI's final job runs it without installing
// anything.
//
//   node scripts/matrix-summary.mjs PATH...        merge: every *.md under the PATHs (files or folders)
//   node scripts/matrix-summary.mjs --failed-cell --runtime R --kubernetes-version V --addons LABEL \
//        [--lab NAME] --reason TEXT                 print the summary of a cell that never reached
//                                                   `conformance` (e.g. `up` failed), for merging
//
// Exit status: 0 printed; 1 no cell summary found under the PATHs; 2 bad usage.
import fs from 'node:fs';
import path from 'node:path';

const MARKER = 'ocm-lab-conformance-cell';
const USAGE = `usage: node scripts/matrix-summary.mjs PATH...
       node scripts/matrix-summary.mjs --failed-cell --runtime R --kubernetes-version V --addons LABEL [--lab NAME] --reason TEXT`;

function usage(message) {
  process.stderr.write(`matrix-summary: ${message}\n${USAGE}\n`);
  process.exit(2);
}

function parseFlags(args) {
  const flags = {};
  const positional = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '-h' || arg === '--help') {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
    }
    if (arg === '--failed-cell') flags.failedCell = true;
    else if (arg.startsWith('--')) {
      const [name, inline] = arg.slice(2).split(/=(.*)/s);
      const value = inline ?? args[++i];
      if (value === undefined) usage(`--${name} needs a value`);
      flags[name] = value;
    } else positional.push(arg);
  }
  return { flags, positional };
}

const cellText = (value) => String(value).replace(/\r?\n/g, ' ').replace(/\|/g, '\\|');

function duration(ms) {
  if (typeof ms !== 'number') return '–';
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  const whole = Math.round(seconds);
  return `${Math.floor(whole / 60)} min ${String(whole % 60).padStart(2, '0')} s`;
}

/** A cell's addons as one phrase: the label `conformance --summary` recorded, or the one --failed-cell was given. */
function addonsLabel(cell) {
  return typeof cell.addonsLabel === 'string' ? cell.addonsLabel : '?';
}

function failedCell(flags) {
  for (const name of ['runtime', 'kubernetes-version', 'addons', 'reason']) if (!flags[name]) usage(`--failed-cell needs --${name}`);
  const record = {
    lab: flags.lab ?? '',
    runtime: flags.runtime,
    kubernetesVersion: flags['kubernetes-version'],
    addonsLabel: flags.addons,
    error: flags.reason,
  };
  const title = `${record.runtime} · Kubernetes ${record.kubernetesVersion} · addons: ${record.addonsLabel}`;
  process.stdout.write(`### Conformance: ${title}\n\n<!-- ${MARKER} ${JSON.stringify(record).replace(/>/g, '\\u003e')} -->\n\n❌ ${cellText(record.error)}\n`);
}

function markdownFiles(target) {
  let stat;
  try {
    stat = fs.statSync(target);
  } catch {
    usage(`${target} does not exist`);
  }
  if (stat.isFile()) return [target];
  return fs
    .readdirSync(target, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) => {
      const full = path.join(target, entry.name);
      if (entry.isDirectory()) return markdownFiles(full);
      return entry.isFile() && entry.name.endsWith('.md') ? [full] : [];
    });
}

function readCells(files) {
  const cells = [];
  const pattern = new RegExp(`<!-- ${MARKER} (\\{.*\\}) -->`, 'g');
  for (const file of files) {
    const text = fs.readFileSync(file, 'utf8');
    for (const m of text.matchAll(pattern)) {
      try {
        cells.push({ file, ...JSON.parse(m[1]) });
      } catch (err) {
        process.stderr.write(`matrix-summary: ${file}: the ${MARKER} comment is not JSON (${err.message}); left out\n`);
      }
    }
  }
  return cells;
}

function compareVersions(a, b) {
  return String(a).localeCompare(String(b), 'en', { numeric: true });
}

function merge(targets) {
  if (!targets.length) usage('name the summary files or folders to merge');
  const cells = readCells(targets.flatMap(markdownFiles));
  if (!cells.length) {
    process.stderr.write(`matrix-summary: no '${MARKER}' comment in any .md under ${targets.join(', ')}; did 'ocm-lab conformance --summary FILE' run?\n`);
    process.exit(1);
  }
  cells.sort(
    (a, b) =>
      String(a.runtime).localeCompare(String(b.runtime)) ||
      compareVersions(a.kubernetesVersion, b.kubernetesVersion) ||
      addonsLabel(a).localeCompare(addonsLabel(b)),
  );
  const ok = (c) => !c.error && c.failed === 0 && !c.interrupted;
  const rows = cells.map((c) => {
    const result = c.error ? `❌ ${c.error}` : ok(c) ? '✅ passed' : c.interrupted ? '❌ interrupted' : '❌ failed';
    const number = (n) => (c.error ? '–' : String(n ?? 0));
    return `| ${cellText(c.runtime)} | ${cellText(c.kubernetesVersion)} | ${cellText(addonsLabel(c))} | ${cellText(result)} | ${number(c.passed)} | ${number(c.failed)} | ${number(c.skipped)} | ${duration(c.durationMs)} |`;
  });
  const passed = cells.filter(ok).length;
  process.stdout.write(
    [
      '## Conformance matrix',
      '',
      '| runtime | Kubernetes | addons | result | passed | failed | skipped | time |',
      '| --- | --- | --- | --- | ---: | ---: | ---: | ---: |',
      ...rows,
      '',
      `${cells.length} cell(s): ${passed} passed, ${cells.length - passed} failed.`,
      '',
    ].join('\n'),
  );
}

const { flags, positional } = parseFlags(process.argv.slice(2));
if (flags.failedCell) failedCell(flags);
else {
  const unknown = Object.keys(flags);
  if (unknown.length) usage(`unknown option --${unknown[0]}`);
  merge(positional);
}
