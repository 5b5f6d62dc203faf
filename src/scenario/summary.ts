import fs from 'node:fs/promises';
import path from 'node:path';
import { addonImplementation, recordedLabConfig, UPSTREAM_ADDONS, type AddonImplementation, type LabConfig } from '../config/index.js';
import type { RunSummary } from './progress.js';

/** What a conformance run ran against: one cell of the CI matrix (runtime × Kubernetes version × addon implementations). */
export interface MatrixCell {
  lab: string;
  /** local, kind, existing; 'unknown' when the lab left no record of it. */
  runtime: string;
  kubernetesVersion: string;
  ocmVersion: string;
  addons: { name: string; implementation: AddonImplementation }[];
}

/**
 * The line of the per-cell Markdown that scripts/matrix-summary.mjs reads back:
 * an HTML comment (invisible where the Markdown is rendered) holding the cell
 * and its totals as JSON.
 */
const CELL_MARKER = 'ocm-lab-conformance-cell';

/**
 * The addon axis of the matrix as one word: "ocm-lab" when every addon is ours,
 * "upstream" when every addon that has an upstream implementation runs it,
 * else the ones that do ("upstream: managed-serviceaccount").
 */
export function implementationsLabel(addons: MatrixCell['addons']): string {
  if (!addons.length) return 'no addons';
  const upstream = addons.filter((a) => a.implementation === 'upstream').map((a) => a.name);
  if (!upstream.length) return 'ocm-lab';
  const choosable = addons.filter((a) => (UPSTREAM_ADDONS as readonly string[]).includes(a.name));
  return upstream.length === choosable.length ? 'upstream' : `upstream: ${upstream.join(', ')}`;
}

export function cellOf(config: LabConfig, runtime: string): MatrixCell {
  return {
    lab: config.name,
    runtime,
    kubernetesVersion: config.kubernetesVersion,
    ocmVersion: config.ocmVersion,
    // A lab recorded before addon implementations existed has none: all ours.
    addons: config.addons.map((name) => ({ name, implementation: addonImplementation(config, name) })),
  };
}

/**
 * The cell of a running lab: the configuration it was brought up with, as the
 * lab recorded it (`<labDir>/state.json`: a `--kubernetes-version` given to
 * `up` is there, not in the lab file); the lab file stands in when there is no
 * record. `runtime` comes from the caller (only the CLI and the lifecycle may
 * ask runtime/registry.ts which runtime a lab has).
 */
export async function labCell(config: LabConfig, runtime: string | null): Promise<MatrixCell> {
  return cellOf((await recordedLabConfig(config.name)) ?? config, runtime ?? 'unknown');
}

/** The header line naming the cell. */
function cellTitle(cell: MatrixCell): string {
  return `${cell.runtime} · Kubernetes ${cell.kubernetesVersion} · addons: ${implementationsLabel(cell.addons)}`;
}

/** Markdown table cells: no line breaks, no column separators. */
function cellText(value: string): string {
  return value.replace(/\r?\n/g, ' ').replace(/\|/g, '\\|');
}

function formatDuration(ms: number): string {
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  const whole = Math.round(seconds);
  return `${Math.floor(whole / 60)} min ${String(whole % 60).padStart(2, '0')} s`;
}

function resultText(outcome: RunSummary['results'][number]): string {
  const { scenario, result } = outcome;
  if (result.status === 'passed') return '✅ passed';
  if (result.status === 'skipped') return `⏭️ skipped: ${result.skipReason ?? 'the lab cannot run it'}`;
  const lines = result.steps.filter((s) => s.status === 'failed').map((s) => `${path.basename(scenario.file)}:${s.step.line}`);
  return `❌ failed at ${lines.join(', ') || 'an unknown step'}`;
}

/** The JSON in the marker comment; `>` escaped so no string can close the comment. */
function markerLine(cell: MatrixCell, result: RunSummary): string {
  const record = {
    ...cell,
    addonsLabel: implementationsLabel(cell.addons),
    passed: result.passed,
    failed: result.failed,
    skipped: result.skipped,
    notRun: result.notRun.length,
    interrupted: result.interrupted,
    durationMs: result.durationMs,
  };
  return `<!-- ${CELL_MARKER} ${JSON.stringify(record).replace(/>/g, '\\u003e')} -->`;
}

/**
 * `conformance --summary FILE`: a Markdown section for a CI job summary — the
 * cell as a header, one row per document (result and time), the totals.
 */
export function conformanceSummaryMarkdown(cell: MatrixCell, result: RunSummary): string {
  const rows = result.results.map(
    (r) => `| \`${cellText(r.scenario.name)}\` | ${cellText(resultText(r))} | ${r.result.status === 'skipped' ? '–' : formatDuration(r.result.durationMs)} |`,
  );
  for (const name of result.notRun) rows.push(`| \`${cellText(name)}\` | not run: ${result.interrupted ? 'interrupted' : 'an earlier document failed'} | – |`);
  const totals = [
    `${result.passed} passed`,
    `${result.failed} failed`,
    `${result.skipped} skipped`,
    ...(result.notRun.length ? [`${result.notRun.length} not run`] : []),
  ].join(', ');
  const addons = cell.addons.length ? cell.addons.map((a) => `${a.name} (${a.implementation})`).join(', ') : 'none';
  return [
    `### Conformance: ${cellTitle(cell)}`,
    '',
    markerLine(cell, result),
    '',
    '| scenario | result | time |',
    '| --- | --- | ---: |',
    ...rows,
    '',
    `**${totals}** in ${formatDuration(result.durationMs)}${result.interrupted ? ' (interrupted)' : ''} · ` +
      `lab \`${cell.lab}\` · OCM ${cell.ocmVersion} · addons: ${addons}`,
    '',
  ].join('\n');
}

export async function writeConformanceSummary(file: string, cell: MatrixCell, result: RunSummary): Promise<void> {
  await fs.mkdir(path.dirname(path.resolve(file)), { recursive: true });
  await fs.writeFile(file, conformanceSummaryMarkdown(cell, result));
}
