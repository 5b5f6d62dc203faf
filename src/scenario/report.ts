import fs from 'node:fs/promises';
import path from 'node:path';
import type { Scenario, ScenarioResult } from './types.js';

function fenceFor(text: string): string {
  const longest = Math.max(2, ...(text.match(/`+/g) ?? []).map((m) => m.length));
  return '`'.repeat(longest + 1);
}

/** The document again, with the real output of every executed block inserted after it (and its expectations). */
export function transcriptMarkdown(scenario: Scenario, result: ScenarioResult): string {
  const insertAfter = new Map<number, string>();
  for (const s of result.steps) {
    if (s.status === 'not-run' || (!s.output.trim() && s.status === 'passed')) continue;
    const last = Math.max(s.step.line, ...s.step.expectations.map((e) => e.line));
    // find the closing fence of the last block belonging to this step
    let close = last;
    for (let i = last; i < scenario.lines.length; i++) {
      if (/^\s*(`{3,}|~{3,})\s*$/.test(scenario.lines[i] as string)) {
        close = i + 1;
        break;
      }
    }
    const fence = fenceFor(s.output);
    const status = s.status === 'failed' ? ` — FAILED: ${s.failure ?? ''}` : '';
    insertAfter.set(close, `\n<!-- output (exit ${String(s.exitCode)}, ${s.durationMs} ms)${status.replace(/--/g, '- -')} -->\n${fence}text\n${s.output.trimEnd()}\n${fence}`);
  }
  const out: string[] = [];
  scenario.lines.forEach((line, i) => {
    out.push(line);
    const extra = insertAfter.get(i + 1);
    if (extra) out.push(extra);
  });
  return out.join('\n');
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** A self-contained page: the prose as text, every block with its real output under it. */
export function transcriptHtml(scenario: Scenario, result: ScenarioResult): string {
  const body = transcriptMarkdown(scenario, result)
    .split(/\n(?=`{3,}|~{3,})/)
    .join('\n');
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>${escapeHtml(scenario.title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}pre{background:#f4f4f4;padding:.75rem;overflow:auto}.failed{color:#b00}</style>
</head><body>
<h1>${escapeHtml(scenario.title)}</h1>
<p class="${result.status}">result: ${escapeHtml(result.status)}${result.skipReason ? ` (${escapeHtml(result.skipReason)})` : ''}</p>
<pre>${escapeHtml(body)}</pre>
</body></html>
`;
}

export async function writeTranscripts(dir: string, scenario: Scenario, result: ScenarioResult): Promise<void> {
  await fs.mkdir(dir, { recursive: true });
  await fs.writeFile(path.join(dir, `${scenario.name}.md`), transcriptMarkdown(scenario, result));
  await fs.writeFile(path.join(dir, `${scenario.name}.html`), transcriptHtml(scenario, result));
}

function xml(text: string): string {
  // eslint-disable-next-line no-control-regex
  return escapeHtml(text).replace(/'/g, '&apos;').replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '');
}

/** JUnit XML: one testsuite per scenario, one testcase per step. */
export function junitXml(results: { scenario: Scenario; result: ScenarioResult }[]): string {
  const suites = results.map(({ scenario, result }) => {
    const cases =
      result.status === 'skipped'
        ? [`    <testcase classname="${xml(scenario.name)}" name="${xml(scenario.title)}" time="0"><skipped message="${xml(result.skipReason ?? '')}"/></testcase>`]
        : result.steps.map((s) => {
            const name = `line ${s.step.line}: ${s.step.code.trim().split('\n')[0] ?? ''}`;
            const inner =
              s.status === 'failed'
                ? `<failure message="${xml(s.failure ?? '')}">${xml(s.output)}</failure>`
                : s.status === 'not-run'
                  ? '<skipped message="an earlier step failed"/>'
                  : '';
            return `    <testcase classname="${xml(scenario.name)}" name="${xml(name)}" time="${(s.durationMs / 1000).toFixed(3)}">${inner}</testcase>`;
          });
    const failures = result.steps.filter((s) => s.status === 'failed').length;
    const skipped = result.status === 'skipped' ? 1 : result.steps.filter((s) => s.status === 'not-run').length;
    return `  <testsuite name="${xml(scenario.name)}" tests="${cases.length}" failures="${failures}" skipped="${skipped}" time="${(result.durationMs / 1000).toFixed(3)}">\n${cases.join('\n')}\n  </testsuite>`;
  });
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="ocm-lab conformance">\n${suites.join('\n')}\n</testsuites>\n`;
}
