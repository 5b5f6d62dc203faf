import fs from 'node:fs/promises';
import path from 'node:path';
import type { RunSummary } from './progress.js';
import { escapeHtml, TRANSCRIPT_STYLE, transcriptBodyHtml } from './transcript.js';
import type { ScenarioResult, StepResult } from './types.js';

export interface ReportContext {
  /** The lab's picture (status --svg), inlined at the top. */
  pictureSvg?: string;
  /** What the run ran against, one line (runtime, Kubernetes version, addons). */
  cell?: string;
  date?: Date;
}

const REPORT_STYLE = `${TRANSCRIPT_STYLE}
body{max-width:72rem}table{border-collapse:collapse;margin:1rem 0;font-size:.92em}
th,td{border:1px solid #ddd;padding:.25rem .6rem;text-align:left;vertical-align:top}
th{background:#f0f0f0}td.num{text-align:right;white-space:nowrap}.passed{color:#1a7f37}.failed{color:#c33}.skipped,.not-run{color:#777}
details.document{border:1px solid #ddd;border-radius:6px;margin:1rem 0;padding:.2rem 1rem}
details.document>summary{cursor:pointer;font-weight:600;padding:.4rem 0}
.picture{overflow:auto;border:1px solid #ddd;border-radius:6px;padding:.5rem;background:white}.picture svg{max-width:100%;height:auto}`;

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const MARK: Record<StepResult['status'], string> = { passed: '✔', failed: '✘', 'not-run': '–' };

function stepRows(name: string, steps: readonly StepResult[]): string {
  const rows = steps.map((s) => {
    const first = s.step.code.trim().split('\n')[0] ?? '';
    const why = s.status === 'failed' ? (s.failure ?? 'failed').split('\n')[0]! : s.status === 'not-run' ? 'not run: an earlier step failed' : '';
    return (
      `<tr class="${s.status}"><td class="num">${s.step.line}</td><td>${MARK[s.status]}</td>` +
      `<td><code>${escapeHtml(first)}${s.step.code.trim().includes('\n') ? ' …' : ''}</code>${s.step.cleanup ? ' (cleanup)' : ''}</td>` +
      `<td class="num">${s.status === 'not-run' ? '–' : seconds(s.durationMs)}</td><td>${escapeHtml(why)}</td></tr>`
    );
  });
  return `<table aria-label="steps of ${escapeHtml(name)}"><tr><th>line</th><th></th><th>command</th><th>time</th><th>note</th></tr>${rows.join('')}</table>`;
}

function statusCell(result: ScenarioResult): string {
  if (result.status !== 'skipped') return `<span class="${result.status}">${result.status}</span>`;
  return `<span class="skipped">skipped: ${escapeHtml(result.skipReason ?? 'the lab cannot run it')}</span>`;
}

function documentSection(outcome: RunSummary['results'][number], date: Date, lab: string): string {
  const { scenario, result } = outcome;
  const head =
    `<summary id="${escapeHtml(scenario.name)}">${escapeHtml(scenario.name)}: ${escapeHtml(scenario.title)} — ${statusCell(result)}` +
    `${result.status === 'skipped' ? '' : ` (${seconds(result.durationMs)})`}</summary>`;
  if (result.status === 'skipped') return `<details class="document">${head}<p>${escapeHtml(scenario.summary)}</p></details>`;
  return (
    `<details class="document"${result.status === 'failed' ? ' open' : ''}>${head}<p class="summary">${escapeHtml(scenario.summary)}</p>` +
    `${stepRows(scenario.name, result.steps)}\n${transcriptBodyHtml(scenario, result, { lab, date })}</details>`
  );
}

function overviewTable(summary: RunSummary): string {
  const rows = summary.results.map(({ scenario, result }) => {
    const passed = result.steps.filter((s) => s.status === 'passed').length;
    const steps = result.status === 'skipped' ? '–' : `${passed}/${result.steps.length}`;
    return (
      `<tr><td><a href="#${escapeHtml(scenario.name)}">${escapeHtml(scenario.name)}</a></td><td>${statusCell(result)}</td>` +
      `<td class="num">${steps}</td><td class="num">${result.status === 'skipped' ? '–' : seconds(result.durationMs)}</td></tr>`
    );
  });
  const why = summary.interrupted ? 'interrupted' : 'an earlier document failed';
  for (const name of summary.notRun) rows.push(`<tr><td>${escapeHtml(name)}</td><td class="not-run">not run: ${why}</td><td>–</td><td>–</td></tr>`);
  return `<table><tr><th>document</th><th>result</th><th>steps</th><th>time</th></tr>${rows.join('')}</table>`;
}

/**
 * `conformance --html FILE`: one self-contained page of a run — the totals, the lab's picture,
 * a table of the documents, then each document with its steps (mark, command, time) and its
 * transcript (prose and the real output under every command); failed documents open.
 */
export function conformanceReportHtml(summary: RunSummary, context: ReportContext = {}): string {
  const date = context.date ?? new Date();
  const totals =
    `${summary.passed} passed, ${summary.failed} failed, ${summary.skipped} skipped` +
    `${summary.notRun.length ? `, ${summary.notRun.length} not run` : ''}${summary.interrupted ? ' (interrupted)' : ''}`;
  const verdict = summary.failed || summary.interrupted ? 'failed' : 'passed';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>ocm-lab conformance: ${escapeHtml(summary.lab)}</title><style>${REPORT_STYLE}</style></head>
<body>
<h1>Conformance on lab ${escapeHtml(summary.lab)}</h1>
<p class="status ${verdict}">${escapeHtml(totals)} in ${seconds(summary.durationMs)} · ${escapeHtml(date.toISOString())}</p>
${context.cell ? `<p class="summary">${escapeHtml(context.cell)}</p>` : ''}
${context.pictureSvg ? `<h2>The lab</h2>\n<div class="picture">${context.pictureSvg.replace(/^<\?xml[^>]*>\s*/, '')}</div>` : ''}
<h2>Documents</h2>
${overviewTable(summary)}
${summary.results.map((r) => documentSection(r, date, summary.lab)).join('\n')}
</body></html>
`;
}

export async function writeConformanceReport(file: string, summary: RunSummary, context: ReportContext = {}): Promise<void> {
  await fs.mkdir(path.dirname(path.resolve(file)), { recursive: true });
  await fs.writeFile(file, conformanceReportHtml(summary, context));
}
