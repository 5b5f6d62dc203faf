import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../src/errors.js';
import { checkExpectation, junitXml, listScenarios, parseScenario, runScenario, transcriptMarkdown, type ScenarioEnvironment } from '../../src/scenario/index.js';

const F = '```';
const doc = (body: string, front = 'title: T\nsummary: S\n') => `---\n${front}---\n\nSome prose.\n\n${body}`;

const env = (extra: Partial<ScenarioEnvironment> = {}): ScenarioEnvironment => ({
  labName: 'unit',
  kubeconfig: '/dev/null',
  clusters: ['hub', 'cluster1'],
  addons: [],
  capabilities: ['control-plane'],
  env: { ...process.env },
  dispose: async () => undefined,
  ...extra,
});

function parseError(text: string): string {
  try {
    parseScenario(text, '/docs/x.md');
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidInputError);
    return (err as Error).message;
  }
  throw new Error('expected a parse error');
}

describe('scenario documents', () => {
  it('parses steps, expectations, attributes and skips non-runnable blocks', () => {
    const s = parseScenario(
      doc(`${F}yaml\nkind: X\n${F}\n\n${F}sh timeout=5\necho hi\n${F}\n\n${F}expect contains\nhi\n${F}\n\n${F}sh norun\nrm -rf /\n${F}\n\n${F}js\nconsole.log(1)\n${F}\n\n${F}sh cleanup\necho bye\n${F}\n`),
      '/docs/x.md',
    );
    expect(s.name).toBe('x');
    expect(s.steps.map((x) => [x.language, x.line, x.timeoutSeconds, x.cleanup])).toEqual([
      ['sh', 12, 5, false],
      ['js', 24, 120, false],
      ['sh', 28, 120, true],
    ]);
    expect(s.steps[0]!.expectations).toEqual([{ kind: 'contains', text: 'hi', line: 16 }]);
  });

  it('rejects malformed documents with file and line before anything runs', () => {
    expect(parseError(`${F}sh\necho\n${F}\n`)).toContain('/docs/x.md:1: missing front matter');
    expect(parseError(doc(`${F}sh\necho\n${F}\n`, 'title: T\n'))).toContain("front matter field 'summary'");
    expect(parseError(doc(`${F}sh\necho\n`))).toMatch(/x\.md:8: code block opened here is never closed/);
    expect(parseError(doc(`${F}sh\necho\n${F}\n${F}expect smells-like\nx\n${F}\n`))).toMatch(/x\.md:11: unknown expectation kind 'smells-like'/);
    expect(parseError(doc(`${F}expect contains\nx\n${F}\n`))).toContain('must follow the command block');
    expect(parseError(doc(`${F}sh wat=1\necho\n${F}\n`))).toContain("unknown block attribute 'wat=1'");
    expect(parseError(doc(`${F}sh\necho\n${F}\n${F}expect matches\n(unclosed\n${F}\n`))).toContain('invalid regular expression');
  });

  it('checks expectations: contains, matches, table rows, failures', () => {
    const table = 'NAME       READY   STATUS\nhello-1    1/1     Running\n';
    expect(checkExpectation({ kind: 'contains', text: 'Running', line: 1 }, table, 0)).toBeNull();
    expect(checkExpectation({ kind: 'contains', text: 'Pending', line: 1 }, table, 0)).toContain('Pending');
    expect(checkExpectation({ kind: 'matches', text: '^hello-\\d+', line: 1 }, table, 0)).toBeNull();
    expect(checkExpectation({ kind: 'row', text: 'hello-1 1/1 Running', line: 1 }, table, 0)).toBeNull();
    expect(checkExpectation({ kind: 'row', text: 'hello-1 * Running', line: 1 }, table, 0)).toBeNull();
    expect(checkExpectation({ kind: 'row', text: 'hello-1 0/1', line: 1 }, table, 0)).toContain('hello-1 0/1');
    expect(checkExpectation({ kind: 'contains', text: 'Running', line: 1 }, table, 1)).toContain('exit status 1');
    expect(checkExpectation({ kind: 'fails', text: 'Forbidden', line: 1 }, 'Error: Forbidden', 1)).toBeNull();
    expect(checkExpectation({ kind: 'fails', text: 'Forbidden', line: 1 }, 'ok', 0)).toContain('succeeded');
    expect(checkExpectation({ kind: 'fails', text: 'Forbidden', line: 1 }, 'NotFound', 1)).toContain('Forbidden');
  });
});

describe('scenario runner', () => {
  it('passes a document whose expectations hold, carrying exported variables between blocks', async () => {
    const s = parseScenario(doc(`${F}sh\nexport GREETING=hello\n${F}\n\n${F}sh\necho "$GREETING world"\n${F}\n${F}expect contains\nhello world\n${F}\n\n${F}js\nconst r = await waitFor(async () => 42); console.log('answer', r)\n${F}\n${F}expect contains\nanswer 42\n${F}\n`), '/d/ok.md');
    const r = await runScenario(s, env());
    expect(r.steps.map((x) => x.failure ?? x.status)).toEqual(['passed', 'passed', 'passed']);
    expect(r.status).toBe('passed');
  });

  it('reports a failed expectation with step, command, expectation and output, then runs cleanup only', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-scn-'));
    const marker = path.join(dir, 'cleaned');
    try {
      const s = parseScenario(
        doc(`${F}sh\necho actual-output\n${F}\n${F}expect contains\nexpected-output\n${F}\n\n${F}sh\ntouch ${dir}/should-not-run\n${F}\n\n${F}sh cleanup\ntouch ${marker}\n${F}\n`),
        '/d/bad.md',
      );
      const r = await runScenario(s, env());
      expect(r.status).toBe('failed');
      expect(r.steps.map((x) => x.status)).toEqual(['failed', 'not-run', 'passed']);
      expect(r.steps[0]!.failure).toContain('expected-output');
      expect(r.steps[0]!.output).toContain('actual-output');
      await expect(fs.access(marker)).resolves.toBeUndefined();
      await expect(fs.access(path.join(dir, 'should-not-run'))).rejects.toThrow();
      const { describeFailure } = await import('../../src/scenario/index.js');
      const text = describeFailure(s, r.steps[0]!);
      expect(text).toContain('/d/bad.md:8');
      expect(text).toContain('echo actual-output');
      expect(text).toContain('expected-output');
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('kills the whole process group of a block that times out', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-scn-'));
    try {
      const s = parseScenario(doc(`${F}sh timeout=1\nsleep 30 &\necho $! > ${dir}/child.pid\nwait\n${F}\n`), '/d/slow.md');
      const r = await runScenario(s, env());
      expect(r.steps[0]!.failure).toContain('timed out after 1 s');
      const pid = Number((await fs.readFile(path.join(dir, 'child.pid'), 'utf8')).trim());
      await new Promise((res) => setTimeout(res, 200));
      const alive = await fs.readFile(`/proc/${pid}/stat`, 'utf8').then((st) => !/\) Z /.test(st), () => false);
      expect(alive).toBe(false);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('skips a document whose requirements the lab lacks, with the reason', async () => {
    const s = parseScenario(doc(`${F}sh\necho\n${F}\n`, 'title: T\nsummary: S\nrequires:\n  clusters: [cluster9]\n'), '/d/req.md');
    const r = await runScenario(s, env());
    expect(r.status).toBe('skipped');
    expect(r.skipReason).toBe('the lab has no cluster cluster9');
    const caps = parseScenario(doc(`${F}sh\necho\n${F}\n`, 'title: T\nsummary: S\nrequires:\n  capabilities: [ocm]\n'), '/d/req.md');
    expect((await runScenario(caps, env())).skipReason).toBe('the lab lacks ocm');
  });

  it('writes transcripts with real output and well-formed JUnit', async () => {
    const s = parseScenario(doc(`${F}sh\necho 'a < b & "c"'\n${F}\n`), '/d/t.md');
    const r = await runScenario(s, env());
    const md = transcriptMarkdown(s, r);
    expect(md).toContain('Some prose.');
    expect(md).toMatch(/<!-- output \(exit 0, \d+ ms\) -->\n```text\na < b & "c"\n```/);
    const xml = junitXml([{ scenario: s, result: r }]);
    expect(xml).toContain('<testsuite name="t" tests="1" failures="0"');
    expect(xml).toContain('a &lt; b &amp; &quot;c&quot;');
    expect(xml).not.toMatch(/[<>]"c"/);
  });

  it('ships documents that parse', async () => {
    const names = (await listScenarios()).map((s) => s.name);
    expect(names).toEqual(expect.arrayContaining(['vpc-isolation', 'manifestwork']));
  });
});
