import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { labPictureSvg } from '../../src/lab/picture.js';
import { parseScenario, type RunSummary, type Scenario, type StepResult } from '../../src/scenario/index.js';
import { conformanceReportHtml, writeConformanceReport } from '../../src/scenario/report.js';
import { useTempDir } from '../support/temp-dir.js';
import { xmlProblems } from '../support/xml-check.js';

const F = '```';
const doc = (name: string, body: string): Scenario =>
  parseScenario(`---\ntitle: The ${name} <walk>\nsummary: What ${name} shows & why.\n---\n\nProse of ${name}.\n\n${body}\n`, `/docs/${name}.md`);

const alpha = doc('alpha', [`${F}sh`, 'echo one', F, '', `${F}expect contains`, 'one', F, '', 'Then two.', '', `${F}sh`, 'echo two', F].join('\n'));
const beta = doc('beta', [`${F}sh`, 'printf "<script>alert(1)</script>"', F, '', `${F}sh`, 'echo after', F, '', `${F}sh cleanup`, 'echo tidy', F].join('\n'));
const gamma = doc('gamma', [`${F}sh`, 'echo skipped', F].join('\n'));

const step = (s: Scenario, i: number, r: Partial<StepResult>): StepResult => ({
  step: s.steps[i]!,
  status: 'passed',
  exitCode: 0,
  output: '',
  durationMs: 0,
  ...r,
});

const SUMMARY: RunSummary = {
  lab: 'unit',
  passed: 1,
  failed: 1,
  skipped: 1,
  durationMs: 12_345,
  interrupted: false,
  notRun: ['delta'],
  transcripts: [],
  results: [
    {
      scenario: alpha,
      result: {
        name: 'alpha',
        title: alpha.title,
        status: 'passed',
        durationMs: 1_500,
        steps: [step(alpha, 0, { output: 'one\n', durationMs: 1_234 }), step(alpha, 1, { output: 'two\n', durationMs: 250 })],
      },
    },
    {
      scenario: beta,
      result: {
        name: 'beta',
        title: beta.title,
        status: 'failed',
        durationMs: 2_000,
        steps: [
          step(beta, 0, {
            status: 'failed',
            exitCode: 3,
            output: '<script>alert(1)</script>',
            durationMs: 900,
            failure: 'the command failed with exit status 3',
          }),
          step(beta, 1, { status: 'not-run', exitCode: null }),
          step(beta, 2, { output: 'tidy\n', durationMs: 100 }),
        ],
      },
    },
    {
      scenario: gamma,
      result: { name: 'gamma', title: gamma.title, status: 'skipped', skipReason: 'the lab lacks capability pods', durationMs: 0, steps: [] },
    },
  ],
};

const PICTURE = labPictureSvg({
  lab: 'unit',
  runtime: 'local',
  exists: true,
  vpcs: [{ name: 'vpc-1', subnet: null }],
  clusters: [{ name: 'hub', vpc: 'vpc-1', hub: true, apiServer: 'https://10.1.0.10:6443', ready: true, addons: [], tunnel: null }],
  hubEndpoint: null,
  registry: null,
  isolation: { enforced: true, reason: null },
});

const tmp = useTempDir('ocm-lab-conformance-report-');

describe('conformance --html: the report of a run', () => {
  const html = conformanceReportHtml(SUMMARY, {
    pictureSvg: PICTURE,
    cell: 'local · Kubernetes v1.36.4 · addons: ocm-lab',
    date: new Date('2026-01-02T03:04:05Z'),
  });

  it('sums the run up and shows the lab picture inline', () => {
    expect(html).toContain('<h1>Conformance on lab unit</h1>');
    expect(html).toContain('1 passed, 1 failed, 1 skipped, 1 not run in 12.3 s · 2026-01-02T03:04:05.000Z');
    expect(html).toContain('local · Kubernetes v1.36.4 · addons: ocm-lab');
    expect(html).toContain(PICTURE.trim());
    expect(xmlProblems(/<svg[\s\S]*<\/svg>/.exec(html)![0])).toEqual([]);
  });

  it('every document with its steps, outputs and timings; failed ones open, skipped and not run ones said', () => {
    for (const name of ['alpha', 'beta', 'gamma']) expect(html).toContain(`<a href="#${name}">${name}</a>`);
    expect(html).toMatch(/<tr class="passed"><td class="num">\d+<\/td><td>✔<\/td><td><code>echo one<\/code><\/td><td class="num">1\.2 s<\/td>/);
    expect(html).toContain('<td>✘</td><td><code>printf &quot;&lt;script&gt;alert(1)&lt;/script&gt;&quot;</code></td><td class="num">0.9 s</td>');
    expect(html).toContain('the command failed with exit status 3');
    expect(html).toContain('not run: an earlier step failed');
    expect(html).toContain('<code>echo tidy</code> (cleanup)');
    // The transcripts: prose, and the real output under every command.
    expect(html).toContain('<p>Prose of alpha.</p>');
    expect(html).toContain('<p>Then two.</p>');
    expect(html).toMatch(/<figure class="output"><figcaption>output<\/figcaption><pre><code>two\n?<\/code><\/pre><\/figure>/);
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).not.toContain('<script>');
    expect(html).toContain('<details class="document" open><summary id="beta">');
    expect(html).toContain('<details class="document"><summary id="alpha">');
    expect(html).toContain('skipped: the lab lacks capability pods');
    expect(html).toContain('<td>delta</td><td class="not-run">not run: an earlier document failed</td>');
    expect(html).toContain('The alpha &lt;walk&gt;');
  });

  it('without a picture, and written to a file in a new folder', async () => {
    const file = path.join(tmp.path, 'out', 'report.html');
    await writeConformanceReport(file, SUMMARY);
    const written = await fs.readFile(file, 'utf8');
    expect(written).not.toContain('<svg');
    expect(written).toContain('<h2>Documents</h2>');
  });
});
