import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../src/errors.js';
import { listScenarios, parseScenario } from '../../src/scenario/index.js';

const F = '```';
const FRONT = 'title: T\nsummary: S\nrequires:\n  clusters: [hub]\n';
/** Front matter is lines 1–6, a blank line 7, prose line 8, blank line 9: the body starts at line 10. */
const doc = (body: string, front = FRONT) => `---\n${front}---\n\nSome prose.\n\n${body}`;

function parseError(text: string): InvalidInputError {
  try {
    parseScenario(text, '/docs/x.md');
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidInputError);
    expect((err as InvalidInputError).exitCode).toBe(2);
    return err as InvalidInputError;
  }
  throw new Error('expected the document to be rejected');
}

describe('parseScenario', () => {
  it('reads front matter, runnable blocks with attributes and their expectations', () => {
    const s = parseScenario(
      doc(
        [
          `${F}yaml`,
          'kind: X',
          F,
          '', // 10-12: shown only
          `${F}sh timeout=5`,
          'echo hi',
          F, // 14-16
          'Prose between a command and its expectations.',
          `${F}expect contains`,
          'hi',
          F, // 18-20
          `${F}expect row`,
          'NAME  READY',
          'a     1/1',
          F, // 21-24
          `${F}sh norun`,
          'rm -rf /',
          F, // 25-27
          `${F}js`,
          'console.log(1)',
          F, // 28-30
          `${F}sh cleanup`,
          'echo bye',
          F, // 31-33
          '',
        ].join('\n'),
        'title: A title\nsummary: What it shows.\nrequires:\n  clusters: [hub, cluster1]\n  addons: [cluster-proxy]\n  capabilities: [ocm]\n',
      ),
      '/docs/x.md',
    );
    expect(s).toMatchObject({
      name: 'x',
      title: 'A title',
      summary: 'What it shows.',
      requires: { clusters: ['hub', 'cluster1'], addons: ['cluster-proxy'], capabilities: ['ocm'] },
    });
    const base = 2; // two more front matter lines than FRONT
    expect(s.steps.map((x) => [x.language, x.line - base, x.endLine - base, x.timeoutSeconds, x.cleanup, x.code])).toEqual([
      ['sh', 14, 16, 5, false, 'echo hi'],
      ['js', 28, 30, 120, false, 'console.log(1)'],
      ['sh', 31, 33, 120, true, 'echo bye'],
    ]);
    expect(s.steps[0]!.expectations.map((e) => [e.kind, e.text, e.line - base, e.endLine - base])).toEqual([
      ['contains', 'hi', 18, 20],
      ['row', 'NAME  READY\na     1/1', 21, 24],
    ]);
  });

  it('needs no requires when a document needs nothing of the lab', () => {
    expect(parseScenario(doc(`${F}sh\necho\n${F}\n`, 'title: T\nsummary: S\n'), '/d/n.md').requires).toEqual({ clusters: [], addons: [], capabilities: [] });
  });

  it('takes longer fences, tildes and blocks indented in list items, keeping an output block between a command and its expectations', () => {
    const s = parseScenario(
      doc(['1. Run this:', '', `   ${F}sh`, '   echo "a ``` b"', `   ${F}`, '', '~~~~output', 'a ``` b', '~~~~', `${F}expect contains`, 'a', F, ''].join('\n')),
      '/d/y.md',
    );
    expect(s.steps).toHaveLength(1);
    expect(s.steps[0]).toMatchObject({ code: 'echo "a ``` b"', indent: '   ', line: 12, endLine: 14 });
    expect(s.steps[0]!.expectations).toHaveLength(1);
  });

  it('rejects malformed documents with file and line', () => {
    expect(parseError(`${F}sh\necho\n${F}\n`).message).toBe(
      '/docs/x.md:1: missing front matter: the document must start with a --- block holding title, summary and (unless it needs nothing) requires',
    );
    expect(parseError('---\ntitle: T\n').message).toContain('/docs/x.md:1: front matter opened here is never closed');
    expect(parseError(doc(`${F}sh\necho\n${F}\n`, 'title: T\nrequires:\n  clusters: [hub]\n')).message).toMatch(
      /^\/docs\/x\.md:2: front matter field 'summary' is required/,
    );
    expect(parseError(doc(`${F}sh\necho\n${F}\n`, 'title: T\nsummary: S\nrequires: cluster1\n')).message).toMatch(
      /^\/docs\/x\.md:4: front matter field 'requires' \('cluster1'\) must be a mapping/,
    );
    expect(parseError(doc(`${F}sh\necho\n${F}\n`, 'title: T\nsummary: S\nrequires:\n  addons: []\n  clusters: hub\n')).message).toMatch(
      /^\/docs\/x\.md:6: front matter field 'requires.clusters' \('hub'\) must list the clusters/,
    );
    expect(parseError(doc(`${F}sh\necho\n${F}\n`, 'title: T\nsummary: S\nrequires:\n  clusters: [Hub]\n')).message).toMatch(
      /^\/docs\/x\.md:5: front matter field 'requires.clusters\[0\]' \('Hub'\) must be a cluster name/,
    );
    expect(
      parseError(doc(`${F}sh\necho\n${F}\n`, 'title: T\nsummary: S\nrequires:\n  clusters: [hub]\n  capabilities:\n    - ocm\n    - vpc-isolaton\n')).message,
    ).toMatch(
      /^\/docs\/x\.md:8: front matter field 'requires.capabilities\[1\]' \('vpc-isolaton'\) is not a capability a lab reports \(control-plane, vpc-isolation, ocm, pods, cluster-profile, manifestworkreplicaset, local-cluster\)/,
    );
    expect(parseError(doc(`${F}sh\necho\n${F}\n`, `${FRONT}colour: blue\n`)).message).toMatch(/^\/docs\/x\.md:6: unknown front matter field 'colour'/);
    expect(parseError(doc(`${F}sh\necho\n${F}\n`, 'title: [unclosed\n')).message).toMatch(/^\/docs\/x\.md:\d+: front matter is not valid YAML/);
    expect(parseError(doc(`${F}sh\necho\n`)).message).toBe('/docs/x.md:10: code block opened here is never closed (expected a closing ```)');
    expect(parseError(doc(`${F}sh\necho\n${F}\n\n${F}expect smells-like\nx\n${F}\n`)).message).toMatch(
      /^\/docs\/x\.md:14: unknown expectation kind 'smells-like'; use one of: contains, matches, row, fails/,
    );
    expect(parseError(doc(`${F}sh\necho\n${F}\n${F}expect\nx\n${F}\n`)).message).toMatch(/x\.md:13: an expect block needs a kind/);
    expect(parseError(doc(`${F}expect contains\nx\n${F}\n`)).message).toMatch(/x\.md:10: an expect block must follow the sh or js block it checks/);
    // An expectation after a block that does not run would silently check the wrong command.
    expect(parseError(doc(`${F}sh\necho\n${F}\n${F}sh norun\necho x\n${F}\n${F}expect contains\nx\n${F}\n`)).message).toMatch(
      /x\.md:16: an expect block must follow/,
    );
    expect(parseError(doc(`${F}sh wat=1\necho\n${F}\n`)).message).toMatch(/x\.md:10: unknown block attribute 'wat=1'/);
    expect(parseError(doc(`${F}sh timeout=0\necho\n${F}\n`)).message).toMatch(/x\.md:10: timeout=0: give seconds between 1 and 3600/);
    expect(parseError(doc(`${F}sh\necho\n${F}\n${F}expect matches\n(unclosed\n${F}\n`)).message).toMatch(
      /x\.md:13: expect matches: invalid regular expression/,
    );
    expect(parseError(doc(`${F}sh\necho\n${F}\n${F}expect contains\n\n${F}\n`)).message).toMatch(/x\.md:13: expect contains needs the text to look for/);
    expect(parseError(doc(`${F}sh cleanup\necho\n${F}\n`)).message).toMatch(/x\.md:7: the document has no sh or js block to run/);
  });

  it('parses the documents this repository ships, which never sleep', async () => {
    const scenarios = await listScenarios();
    expect(scenarios.map((s) => s.name)).toEqual(expect.arrayContaining(['vpc-isolation', 'manifestwork']));
    for (const s of scenarios) {
      for (const step of s.steps) expect(step.code, `${s.file}:${step.line}`).not.toMatch(/\bsleep\s|setTimeout\(/);
    }
  });
});
