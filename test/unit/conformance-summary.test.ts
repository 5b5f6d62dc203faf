import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import type { LabConfig } from '../../src/config/index.js';
import type { RunSummary, Scenario, ScenarioResult, Step, StepResult } from '../../src/scenario/index.js';
import { cellOf, conformanceSummaryMarkdown, implementationsLabel, labCell, type MatrixCell } from '../../src/scenario/summary.js';
import { expectGolden } from '../support/golden.js';
import { useTempDir } from '../support/temp-dir.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MERGE = path.join(ROOT, 'scripts/matrix-summary.mjs');

const golden = (name: string, actual: string): Promise<void> => expectGolden(name, actual, 'test/unit/conformance-summary.test.ts');

function scenario(name: string, lines: number[]): Scenario {
  const steps: Step[] = lines.map((line) => ({
    language: 'sh',
    code: 'true\n',
    line,
    endLine: line + 2,
    indent: '',
    timeoutSeconds: 60,
    cleanup: false,
    expectations: [],
  }));
  return { name, file: `/repo/scenarios/${name}.md`, title: name, summary: '', requires: { clusters: [], addons: [], capabilities: [] }, steps, lines: [] };
}

function outcome(s: Scenario, status: ScenarioResult['status'], durationMs: number, failedLine?: number, skipReason?: string) {
  const steps: StepResult[] =
    status === 'skipped'
      ? []
      : s.steps.map((step) => ({
          step,
          status: step.line === failedLine ? 'failed' : 'passed',
          exitCode: step.line === failedLine ? 1 : 0,
          output: '',
          durationMs: 10,
          ...(step.line === failedLine ? { failure: 'exit status 1' } : {}),
        }));
  return { scenario: s, result: { name: s.name, title: s.title, status, skipReason, durationMs, steps } };
}

const FAILED_RUN: RunSummary = {
  lab: 'default',
  passed: 2,
  failed: 1,
  skipped: 1,
  durationMs: 184_321,
  results: [
    outcome(scenario('deployment-only-role', [12, 30]), 'passed', 41_234),
    outcome(scenario('proxy-health', [8, 20, 33]), 'failed', 75_950, 20),
    outcome(scenario('cluster-gateway', [10]), 'passed', 9_870),
    outcome(scenario('three-spokes', [7]), 'skipped', 0, undefined, 'needs cluster cluster3 | the lab has hub, cluster1, cluster2'),
  ],
  notRun: [],
  interrupted: false,
  transcripts: [],
};

const PASSED_RUN: RunSummary = {
  ...FAILED_RUN,
  passed: 3,
  failed: 0,
  durationMs: 52_100,
  results: FAILED_RUN.results.map((r) => (r.scenario.name === 'proxy-health' ? outcome(r.scenario, 'passed', 30_000) : r)),
};

const config = (extra: Partial<LabConfig> = {}): LabConfig => ({
  name: 'default',
  kubernetesVersion: 'v1.36.3',
  ocmVersion: 'v1.2.1',
  network: {},
  vpcs: [{ name: 'vpc-1' }, { name: 'vpc-2' }],
  clusters: [
    { name: 'hub', vpc: 'vpc-1', hub: true },
    { name: 'cluster1', vpc: 'vpc-2', hub: false },
  ],
  addons: ['cluster-proxy', 'managed-serviceaccount', 'cluster-gateway'],
  addonImplementations: {},
  source: null,
  ...extra,
});

const UPSTREAM: MatrixCell = cellOf(config({ addonImplementations: { 'cluster-proxy': 'upstream', 'managed-serviceaccount': 'upstream' } }), 'local');

describe('conformance --summary (Markdown)', () => {
  it('names the cell and lists each document with its result and time (golden)', async () => {
    await golden('conformance-summary.md', conformanceSummaryMarkdown(UPSTREAM, FAILED_RUN));
  });

  it('says "ocm-lab" when every addon is ours, and lists documents never started', () => {
    const md = conformanceSummaryMarkdown(cellOf(config(), 'kind'), { ...PASSED_RUN, notRun: ['vpc-isolation'], interrupted: true });
    expect(md.split('\n')[0]).toBe('### Conformance: kind · Kubernetes v1.36.3 · addons: ocm-lab');
    expect(md).toContain('| `vpc-isolation` | not run: interrupted | – |');
    expect(md).toContain('(interrupted)');
  });

  it('takes the configuration the lab was brought up with from its state.json, else the lab file', async () => {
    const home = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-summary-'));
    const saved = process.env.OCM_LAB_HOME;
    process.env.OCM_LAB_HOME = home;
    try {
      const fromFile = config({ kubernetesVersion: 'v1.35.4' });
      expect(await labCell(fromFile, null)).toMatchObject({ runtime: 'unknown', kubernetesVersion: 'v1.35.4' });
      await fs.mkdir(path.join(home, 'default'));
      const recorded = config({ addonImplementations: { 'managed-serviceaccount': 'upstream' } });
      await fs.writeFile(path.join(home, 'default', 'state.json'), JSON.stringify({ version: 1, runtime: 'kind', config: recorded }));
      const cell = await labCell(fromFile, 'kind');
      expect(cell).toMatchObject({ runtime: 'kind', kubernetesVersion: 'v1.36.3' });
      expect(cell.addons).toContainEqual({ name: 'managed-serviceaccount', implementation: 'upstream' });
      expect(cell.addons).toContainEqual({ name: 'cluster-proxy', implementation: 'ocm-lab' });
      expect(implementationsLabel(cell.addons)).toBe('upstream: managed-serviceaccount');
      expect(implementationsLabel(UPSTREAM.addons)).toBe('upstream');
      expect(implementationsLabel([])).toBe('no addons');
      // A lab recorded before addon implementations existed runs ours.
      const { addonImplementations: _, ...older } = recorded;
      await fs.writeFile(path.join(home, 'default', 'state.json'), JSON.stringify({ version: 1, runtime: 'local', config: older }));
      expect(implementationsLabel((await labCell(fromFile, 'local')).addons)).toBe('ocm-lab');
    } finally {
      if (saved === undefined) delete process.env.OCM_LAB_HOME;
      else process.env.OCM_LAB_HOME = saved;
      await fs.rm(home, { recursive: true, force: true });
    }
  });
});

describe('scripts/matrix-summary.mjs', () => {
  const tmp = useTempDir('ocm-lab-matrix-');

  it('merges per-cell summaries, including a cell whose `up` failed, into one table sorted by cell (golden)', async () => {
    await fs.mkdir(path.join(tmp.path, 'cells', 'a'), { recursive: true });
    await fs.writeFile(path.join(tmp.path, 'cells', 'a', 'summary.md'), conformanceSummaryMarkdown(UPSTREAM, FAILED_RUN));
    await fs.writeFile(
      path.join(tmp.path, 'cells', 'local-v1.35.4.md'),
      conformanceSummaryMarkdown(cellOf(config({ kubernetesVersion: 'v1.35.4' }), 'local'), PASSED_RUN),
    );
    const failed = await execa('node', [
      MERGE,
      '--failed-cell',
      '--runtime',
      'kind',
      '--kubernetes-version',
      'v1.37.2',
      '--addons',
      'ocm-lab',
      '--reason',
      "'ocm-lab up' failed; see the job's log",
    ]);
    await fs.writeFile(path.join(tmp.path, 'cells', 'kind-v1.37.2.md'), failed.stdout);
    await fs.writeFile(path.join(tmp.path, 'cells', 'notes.txt'), 'not a summary');

    const merged = await execa('node', [MERGE, path.join(tmp.path, 'cells')]);
    expect(merged.stderr).toBe('');
    await golden('matrix-summary.md', merged.stdout);
  });

  it('exits 1 when no summary is found and 2 on bad usage, saying why', async () => {
    await fs.mkdir(path.join(tmp.path, 'empty'), { recursive: true });
    const none = await execa('node', [MERGE, path.join(tmp.path, 'empty')], { reject: false });
    expect(none.exitCode).toBe(1);
    expect(none.stderr).toContain("did 'ocm-lab conformance --summary FILE' run?");
    const bad = await execa('node', [MERGE, '--failed-cell', '--runtime', 'local'], { reject: false });
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('--failed-cell needs --kubernetes-version');
    const missing = await execa('node', [MERGE, path.join(tmp.path, 'nope')], { reject: false });
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toContain('does not exist');
  });
});
