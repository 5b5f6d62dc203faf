import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  junitXml,
  parseScenario,
  runScenario,
  transcriptHtml,
  transcriptMarkdown,
  writeTranscripts,
  type ScenarioEnvironment,
} from '../../src/scenario/index.js';

const F = '```';
const FRONT = 'title: Pods & <things>\nsummary: Shows "quoted" output.\nrequires:\n  clusters: [hub]\n';
const doc = (body: string) =>
  `---\n${FRONT}---\n\n# Heading\n\nSome prose with \`code\` and a [link](https://example.org/a?b=1&c=2) and a [bad one](javascript:alert(1)).\n\n${body}`;
const env: ScenarioEnvironment = { labName: 'unit', kubeconfig: '/dev/null', pathDirs: [], env: {}, clusters: ['hub'], addons: [], capabilities: [] };
const DATE = new Date('2026-01-02T03:04:05.000Z');

const TEXT = `${doc(
  [
    `${F}sh`,
    'printf \'a < b & "c" \\x01 ``` </pre><script>alert(1)</script>\\n\'',
    F,
    '',
    `${F}expect contains`,
    'a < b',
    F,
    '',
    '- a list item',
    '',
    `${F}sh`,
    'echo quiet >/dev/null',
    F,
    '',
    `${F}sh`,
    'echo wrong',
    F,
    `${F}expect contains`,
    'right',
    F,
    '',
    `${F}sh`,
    'echo never',
    F,
    '',
  ].join('\n'),
)}`;

/**
 * A strict enough well-formedness check for the XML we write: balanced tags,
 * quoted attributes, only the five entities and numeric references, no
 * characters XML 1.0 forbids.
 */
function assertWellFormedXml(xml: string): void {
  // eslint-disable-next-line no-control-regex
  expect(xml).not.toMatch(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/);
  const body = xml.replace(/^<\?xml [^?]*\?>\n/, '');
  const stack: string[] = [];
  const token = /<(\/?)([A-Za-z_][\w.-]*)((?:\s+[A-Za-z_][\w.-]*="[^"<]*")*)\s*(\/?)>|([^<]+)|(<)/g;
  for (let m = token.exec(body); m; m = token.exec(body)) {
    const [, closing, name, attrs, selfClosing, text, stray] = m;
    expect(stray, `stray < at ${m.index}`).toBeUndefined();
    const checkEntities = (s: string) => expect(s.replace(/&(amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);/g, ''), 'raw & or >').not.toMatch(/[&]/);
    if (text !== undefined) {
      checkEntities(text);
      continue;
    }
    checkEntities(attrs ?? '');
    if (closing) expect(stack.pop(), `</${name}>`).toBe(name);
    else if (!selfClosing) stack.push(name!);
  }
  expect(stack).toEqual([]);
}

describe('transcripts and JUnit', () => {
  it('puts the real output under every command that printed, marks the failure, and stays a valid document', async () => {
    const s = parseScenario(TEXT, '/d/t.md');
    const r = await runScenario(s, env);
    expect(r.steps.map((x) => x.status)).toEqual(['passed', 'passed', 'failed', 'not-run']);
    const md = transcriptMarkdown(s, r, { lab: 'unit', date: DATE });
    expect(md).toContain('---\n<!-- transcript: failed on lab unit, 2026-01-02T03:04:05.000Z -->\n\n# Heading');
    // The output contains ``` so its fence is longer; it sits between the command and its expectation.
    expect(md).toContain(`${F}\n\n${F}\`output\na < b & "c" \u0001 ${F} </pre><script>alert(1)</script>\n${F}\`\n\n${F}expect contains\na < b`);
    expect(md).toContain(`${F}sh\necho quiet >/dev/null\n${F}\n\n${F}sh\necho wrong`);
    expect(md).toContain(
      `${F}sh\necho wrong\n${F}\n\n${F}output\nwrong\n${F}\n\n> **✖ step failed** (exit status 0): expected the output to contain:\n> right\n${F}expect contains`,
    );
    expect(md).toContain(`${F}sh\necho never\n${F}\n\n> not run: an earlier step failed`);
    const again = parseScenario(md, '/d/t.md');
    expect(again.steps.map((x) => [x.code, x.expectations.map((e) => e.text)])).toEqual(s.steps.map((x) => [x.code, x.expectations.map((e) => e.text)]));
  });

  it('renders a self-contained HTML page with everything escaped', async () => {
    const s = parseScenario(TEXT, '/d/t.md');
    const html = transcriptHtml(s, await runScenario(s, env), { lab: 'unit', date: DATE });
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain('<title>Pods &amp; &lt;things&gt;</title>');
    expect(html).toContain('<p class="summary">Shows &quot;quoted&quot; output.</p>');
    expect(html).not.toContain('<script>');
    expect(html).not.toMatch(/<\/pre><script/);
    expect(html).toContain('&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('<h1>Heading</h1>');
    expect(html).toContain('<code>code</code>');
    expect(html).toContain('<a href="https://example.org/a?b=1&amp;c=2">link</a>');
    expect(html).not.toContain('href="javascript:');
    expect(html).toContain('<ul><li>a list item</li></ul>');
    expect(html).toContain('<figure class="command"><figcaption>sh</figcaption><pre><code>echo wrong</code></pre></figure>');
    expect(html).toContain('<figure class="output"><figcaption>output</figcaption><pre><code>wrong</code></pre></figure>');
    expect(html).toContain('<figure class="expect"><figcaption>expected (contains)</figcaption><pre><code>right</code></pre></figure>');
    expect(html).toContain('<blockquote><strong>✖ step failed</strong> (exit status 0): expected the output to contain: right</blockquote>');
    expect(html).not.toContain('transcript: failed'); // the Markdown comment is not shown
  });

  it('writes <name>.md and <name>.html', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-transcript-'));
    try {
      const s = parseScenario(TEXT, '/d/t.md');
      const files = await writeTranscripts(path.join(dir, 'out'), s, await runScenario(s, env), { date: DATE });
      expect(files).toEqual([path.join(dir, 'out', 't.md'), path.join(dir, 'out', 't.html')]);
      expect(await fs.readFile(files[0]!, 'utf8')).toContain('<!-- transcript: failed, 2026-01-02T03:04:05.000Z -->');
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('writes well-formed JUnit: a testsuite per document, a testcase per block, failures with the details', async () => {
    const s = parseScenario(TEXT, '/d/t.md');
    const r = await runScenario(s, env);
    const skipped = parseScenario(
      `---\ntitle: Needs OCM\nsummary: S\nrequires:\n  clusters: [hub]\n  capabilities: [ocm]\n---\n\n${F}sh\necho\n${F}\n`,
      '/d/needs-ocm.md',
    );
    // Output may hold any bytes: a control character and markup must not break the XML.
    const result = { ...r, steps: r.steps.map((st, i) => (i === 2 ? { ...st, output: `${st.output}\u0001 ]]> </failure>` } : st)) };
    const xml = junitXml([
      { scenario: s, result },
      { scenario: skipped, result: await runScenario(skipped, env) },
    ]);
    expect(() => assertWellFormedXml('<a><b></a>')).toThrow(); // the checker itself can fail
    expect(() => assertWellFormedXml('<a>x & y</a>')).toThrow();
    assertWellFormedXml(xml);
    expect(xml).toMatch(
      /^<\?xml version="1.0" encoding="UTF-8"\?>\n<testsuites name="ocm-lab conformance" tests="5" failures="1" errors="0" skipped="2" time="[\d.]+">/,
    );
    expect(xml).toMatch(/<testsuite name="t" tests="4" failures="1" errors="0" skipped="1" time="[\d.]+">/);
    expect(xml).toContain('<testcase classname="t" name="line 22: echo quiet &gt;/dev/null" file="/d/t.md" line="22"');
    expect(xml).toContain(
      '<failure message="expected the output to contain:" type="expect contains">/d/t.md:26: step failed: expected the output to contain:\nright\n--- command (sh, line 26) ---\necho wrong\n',
    );
    expect(xml).toContain('\nwrong\n\uFFFD ]]&gt; &lt;/failure&gt;</failure>');
    expect(xml).toContain('<skipped message="not run: an earlier step failed"/>');
    expect(xml).toContain('<testsuite name="needs-ocm" tests="1" failures="0" errors="0" skipped="1" time="0.000">');
    expect(xml).toContain('<skipped message="the lab lacks capability ocm"/>');
    // The first command's output (with a control character and markup) never reaches the XML raw.
    expect(xml).toContain('name="line 12: printf &apos;a &lt; b &amp; &quot;c&quot; \\x01 ``` &lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;\\n&apos;"');
  });
});
