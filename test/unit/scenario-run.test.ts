import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeFailure, parseScenario, runConformance, runScenario, runScenarios, type ScenarioEnvironment } from '../../src/scenario/index.js';
import { defaultLabConfig } from '../../src/config/index.js';
import { useTempDir } from '../support/temp-dir.js';

const F = '```';
const FRONT = 'title: T\nsummary: S\nrequires:\n  clusters: [hub]\n';
const doc = (body: string, front = FRONT) => `---\n${front}---\n\nSome prose.\n\n${body}`;
const block = (info: string, code: string) => `${F}${info}\n${code}\n${F}\n`;

const env = (extra: Partial<ScenarioEnvironment> = {}): ScenarioEnvironment => ({
  labName: 'unit',
  kubeconfig: '/dev/null',
  pathDirs: [],
  env: { OCM_LAB_NAME: 'unit' },
  clusters: ['hub', 'cluster1'],
  addons: [],
  capabilities: ['control-plane'],
  ...extra,
});

/** True while the process exists and is not a zombie. */
async function alive(pid: number): Promise<boolean> {
  return fs.readFile(`/proc/${pid}/stat`, 'utf8').then(
    (st) => !/\) [ZX] /.test(st),
    () => false,
  );
}

/** Waits for the kernel to finish a process we already SIGKILLed (bounded, not a timing assertion). */
async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    if (!(await alive(pid))) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

const tmp = useTempDir('ocm-lab-scn-', { each: true });

describe('running documents', () => {
  it('passes a document whose expectations hold; exported variables reach later sh and js blocks', async () => {
    const s = parseScenario(
      doc(
        [
          block('sh', 'export GREETING=hello\necho "KUBECONFIG=$KUBECONFIG lab=$OCM_LAB_NAME"'),
          block('expect contains', 'KUBECONFIG=/dev/null lab=unit'),
          block('js', "const n = await waitFor(async () => 42, { timeout: 5000 });\nconsole.log(process.env.GREETING, n);\nexportVar('ANSWER', `it's ${n}`);"),
          block('expect contains', 'hello 42'),
          block('sh', 'echo "$GREETING: $ANSWER"; printf "NAME  READY\\nweb   1/1\\n"'),
          block('expect contains', "hello: it's 42"),
          block('expect row', 'NAME  READY\nweb   1/1'),
          block('sh', 'false'),
          block('expect fails', ''),
        ].join('\n'),
      ),
      '/d/ok.md',
    );
    const r = await runScenario(s, env());
    expect(r.steps.map((x) => x.failure ?? x.status)).toEqual(['passed', 'passed', 'passed', 'passed']);
    expect(r.status).toBe('passed');
  });

  it('reports a failed expectation with step, command, expectation and output; later blocks do not run, cleanup does', async () => {
    const s = parseScenario(
      doc(
        [
          block('sh', 'echo actual-output'),
          block('expect contains', 'expected-output'),
          block('sh', `touch ${tmp.path}/should-not-run`),
          block('sh cleanup', `touch ${tmp.path}/cleaned`),
        ].join('\n'),
      ),
      '/d/bad.md',
    );
    const r = await runScenario(s, env());
    expect(r.status).toBe('failed');
    expect(r.steps.map((x) => x.status)).toEqual(['failed', 'not-run', 'passed']);
    expect(r.steps[0]).toMatchObject({
      exitCode: 0,
      failure: 'expected the output to contain:\nexpected-output',
      failedExpectation: { kind: 'contains', line: 14 },
    });
    expect(r.steps[0]!.output).toBe('actual-output\n');
    await expect(fs.access(path.join(tmp.path, 'cleaned'))).resolves.toBeUndefined();
    await expect(fs.access(path.join(tmp.path, 'should-not-run'))).rejects.toThrow();
    expect(describeFailure(s, r.steps[0]!)).toBe(
      [
        '/d/bad.md:10: step failed: expected the output to contain:',
        'expected-output',
        '--- command (sh, line 10) ---',
        'echo actual-output',
        '--- expected (expect contains, line 14) ---',
        'expected-output',
        `--- output (exit status 0, ${(r.steps[0]!.durationMs / 1000).toFixed(1)} s) ---`,
        'actual-output',
      ].join('\n'),
    );
  });

  it('fails a block that exits non-zero under bash -euo pipefail, and one that fails a pipe', async () => {
    const s = parseScenario(doc([block('sh', 'false | cat\necho unreachable'), block('sh cleanup', 'echo cleaning')].join('\n')), '/d/pipe.md');
    const r = await runScenario(s, env());
    expect(r.steps[0]).toMatchObject({ status: 'failed', exitCode: 1, failure: 'the command failed with exit status 1', output: '' });
    expect(r.steps[1]).toMatchObject({ status: 'passed', output: 'cleaning\n' });
  });

  it('kills the whole process group of a block that times out, and background jobs of a block that ends', async () => {
    const s = parseScenario(
      doc(
        [
          block('sh', `sleep 300 &\necho $! > ${tmp.path}/leftover.pid`),
          block('sh timeout=1', `sleep 300 &\necho $! > ${tmp.path}/child.pid\nwait`),
          block('sh cleanup', 'echo cleanup ran'),
        ].join('\n'),
      ),
      '/d/slow.md',
    );
    const r = await runScenario(s, env());
    expect(r.steps.map((x) => x.status)).toEqual(['passed', 'failed', 'passed']);
    expect(r.steps[1]!.failure).toMatch(/^timed out after 1 s \(its process group was killed\)/);
    expect(r.steps[1]!.exitCode).toBeNull();
    for (const file of ['leftover.pid', 'child.pid']) {
      const pid = Number((await fs.readFile(path.join(tmp.path, file), 'utf8')).trim());
      expect(pid).toBeGreaterThan(1);
      expect(await gone(pid), `${file}: pid ${pid} outlived its block`).toBe(true);
    }
  });

  it('an interrupted run kills the running block, still runs cleanup blocks and starts no further document', async () => {
    const first = parseScenario(
      doc(
        [
          block('sh', `echo $$ > ${tmp.path}/block.pid\ntouch ${tmp.path}/started\ntail -f /dev/null`),
          block('sh', 'echo never'),
          block('sh cleanup', `touch ${tmp.path}/cleaned`),
        ].join('\n'),
      ),
      '/d/first.md',
    );
    const second = parseScenario(doc(block('sh', `touch ${tmp.path}/second-ran`)), '/d/second.md');
    const controller = new AbortController();
    const watcher = (async () => {
      for (;;) {
        if (
          await fs.access(path.join(tmp.path, 'started')).then(
            () => true,
            () => false,
          )
        )
          return controller.abort();
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const summary = await runScenarios([first, second], env(), { signal: controller.signal });
    await watcher;
    expect(summary.interrupted).toBe(true);
    expect(summary.notRun).toEqual(['second']);
    expect(summary.results[0]!.result.steps.map((s) => s.failure ?? s.status)).toEqual(['interrupted (its process group was killed)', 'not-run', 'passed']);
    await expect(fs.access(path.join(tmp.path, 'cleaned'))).resolves.toBeUndefined();
    await expect(fs.access(path.join(tmp.path, 'second-ran'))).rejects.toThrow();
    expect(await gone(Number(await fs.readFile(path.join(tmp.path, 'block.pid'), 'utf8')))).toBe(true);
  });

  it('maps a js error to the document, and fails a waitFor that never holds', async () => {
    const s = parseScenario(doc([block('js', "await waitFor(() => false, { timeout: 300, interval: 50, what: 'the moon' });")].join('\n')), '/d/js.md');
    const r = await runScenario(s, env());
    expect(r.status).toBe('failed');
    expect(r.steps[0]!.output).toContain('waitFor: the moon not met within 300 ms (last result: false)');
    // The call is on the block's first line, the line after the fence (10).
    expect(r.steps[0]!.output).toMatch(/at async \/d\/js\.md:11:\d+/);
  });

  it('skips documents the lab cannot run, saying what is missing', async () => {
    const s = parseScenario(
      doc(
        block('sh', 'echo'),
        'title: T\nsummary: S\nrequires:\n  clusters: [hub, cluster9]\n  addons: [cluster-proxy]\n  capabilities: [ocm, control-plane]\n',
      ),
      '/d/req.md',
    );
    const r = await runScenario(s, env());
    expect(r).toMatchObject({ status: 'skipped', skipReason: 'the lab lacks cluster cluster9; addon cluster-proxy; capability ocm', steps: [] });
  });

  it('runs several documents: counts, keeps going or stops after a failure', async () => {
    const ok = parseScenario(doc(block('sh', 'echo fine')), '/d/ok.md');
    const bad = parseScenario(doc(block('sh', 'exit 7')), '/d/bad.md');
    const needs = parseScenario(doc(block('sh', 'echo'), 'title: T\nsummary: S\nrequires:\n  clusters: [hub]\n  capabilities: [ocm]\n'), '/d/needs.md');
    const all = await runScenarios([bad, needs, ok], env());
    expect([all.passed, all.failed, all.skipped, all.notRun]).toEqual([1, 1, 1, []]);
    expect(all.results.map((r) => r.result.status)).toEqual(['failed', 'skipped', 'passed']);
    const stopped = await runScenarios([bad, needs, ok], env(), { keepGoing: false });
    expect([stopped.passed, stopped.failed, stopped.skipped, stopped.notRun]).toEqual([0, 1, 0, ['needs', 'ok']]);
  });

  it('runConformance: rejects the whole folder when one document is malformed, before running any', async () => {
    await fs.writeFile(path.join(tmp.path, 'a-good.md'), doc(block('sh', `touch ${tmp.path}/ran`)));
    await fs.writeFile(path.join(tmp.path, 'b-bad.md'), doc(`${F}sh\necho unclosed\n`));
    await expect(runConformance(defaultLabConfig(), { dir: tmp.path, environment: env() })).rejects.toThrow(
      /b-bad\.md:10: code block opened here is never closed/,
    );
    await expect(fs.access(path.join(tmp.path, 'ran'))).rejects.toThrow();
  });

  it('runConformance: --only, names, requireAll and JUnit', async () => {
    await fs.writeFile(path.join(tmp.path, 'one.md'), doc(block('sh', 'echo one')));
    await fs.writeFile(path.join(tmp.path, 'two.md'), doc(block('sh', 'echo two'), `${FRONT}  capabilities: [ocm]\n`));
    const config = defaultLabConfig();
    const junit = path.join(tmp.path, 'out', 'junit.xml');
    const all = await runConformance(config, { dir: tmp.path, environment: env(), junitFile: junit });
    expect([all.passed, all.skipped]).toEqual([1, 1]);
    expect(await fs.readFile(junit, 'utf8')).toContain('<testsuite name="two" tests="1" failures="0" errors="0" skipped="1"');
    expect((await runConformance(config, { dir: tmp.path, environment: env(), only: '^on' })).results.map((r) => r.scenario.name)).toEqual(['one']);
    await expect(runConformance(config, { dir: tmp.path, environment: env(), only: '(' })).rejects.toMatchObject({ exitCode: 2 });
    await expect(runConformance(config, { dir: tmp.path, environment: env(), only: 'zzz' })).rejects.toMatchObject({
      exitCode: 5,
      message: "no scenario matches 'zzz'",
    });
    await expect(runConformance(config, { dir: tmp.path, environment: env(), names: ['three'] })).rejects.toMatchObject({
      exitCode: 5,
      hint: 'known scenarios: one, two',
    });
    await expect(runConformance(config, { dir: tmp.path, environment: env(), names: ['one', 'two'], requireAll: true })).rejects.toMatchObject({
      exitCode: 3,
      message: "lab 'unit' cannot run two (the lab lacks capability ocm)",
    });
  });
});
