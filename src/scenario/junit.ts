import { describeFailure } from './run.js';
import type { Scenario, ScenarioResult } from './types.js';

// Characters XML 1.0 cannot hold at all (command output may contain any byte).
const NOT_XML = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

function text(value: string): string {
  return value.replace(NOT_XML, '\uFFFD').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Attribute values also escape quotes and keep line breaks (a parser would fold raw ones into spaces). */
function attr(value: string): string {
  return text(value).replace(/"/g, '&quot;').replace(/'/g, '&apos;').replace(/\n/g, '&#10;').replace(/\r/g, '&#13;').replace(/\t/g, '&#9;');
}

const seconds = (ms: number) => (ms / 1000).toFixed(3);

/** JUnit XML: one testsuite per document, one testcase per block it ran (or one skipped case when the lab cannot run it). */
export function junitXml(results: readonly { scenario: Scenario; result: ScenarioResult }[], name = 'ocm-lab conformance'): string {
  const suites = results.map(({ scenario, result }) => {
    const cases =
      result.status === 'skipped'
        ? [
            `    <testcase classname="${attr(scenario.name)}" name="requirements" time="0">\n` +
              `      <skipped message="${attr(result.skipReason ?? '')}"/>\n    </testcase>`,
          ]
        : result.steps.map((s) => {
            const caseName = `line ${s.step.line}${s.step.cleanup ? ' (cleanup)' : ''}: ${s.step.code.trim().split('\n')[0] ?? ''}`;
            const head =
              `    <testcase classname="${attr(scenario.name)}" name="${attr(caseName)}" ` +
              `file="${attr(scenario.file)}" line="${s.step.line}" time="${seconds(s.durationMs)}"`;
            if (s.status === 'passed') return `${head}/>`;
            const inner =
              s.status === 'failed'
                ? `<failure message="${attr((s.failure ?? 'failed').split('\n')[0]!)}" ` +
                  `type="${s.failedExpectation ? `expect ${s.failedExpectation.kind}` : 'exit status'}">${text(describeFailure(scenario, s))}</failure>`
                : '<skipped message="not run: an earlier step failed"/>';
            return `${head}>\n      ${inner}\n    </testcase>`;
          });
    const failures = result.steps.filter((s) => s.status === 'failed').length;
    const skipped = result.status === 'skipped' ? 1 : result.steps.filter((s) => s.status === 'not-run').length;
    return (
      `  <testsuite name="${attr(scenario.name)}" tests="${cases.length}" failures="${failures}" errors="0" ` +
      `skipped="${skipped}" time="${seconds(result.durationMs)}">\n` +
      `${cases.join('\n')}\n  </testsuite>`
    );
  });
  const total = (f: (r: ScenarioResult) => number) => results.reduce((n, r) => n + f(r.result), 0);
  const tests = total((r) => (r.status === 'skipped' ? 1 : r.steps.length));
  const failures = total((r) => r.steps.filter((s) => s.status === 'failed').length);
  const skipped = total((r) => (r.status === 'skipped' ? 1 : r.steps.filter((s) => s.status === 'not-run').length));
  const time = seconds(total((r) => r.durationMs));
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<testsuites name="${attr(name)}" tests="${tests}" failures="${failures}" errors="0" skipped="${skipped}" time="${time}">\n` +
    `${suites.join('\n')}\n</testsuites>\n`
  );
}
