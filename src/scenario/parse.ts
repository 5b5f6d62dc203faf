import path from 'node:path';
import { isMap, isScalar, isSeq, type Document, type LineCounter } from 'yaml';
import { z } from 'zod';
import { builtinAddonNames, isBuiltinAddon } from '../addons/registry.js';
import { InvalidInputError } from '../errors.js';
import { printable } from '../util/printable.js';
import { readYaml } from '../util/yaml-read.js';
import { scanFences, type Fence } from './markdown.js';
import { EXPECTATION_KINDS, KNOWN_CAPABILITIES, type ExpectationKind, type Scenario, type Step } from './types.js';

const DEFAULT_TIMEOUT_SECONDS = 120;
const MAX_TIMEOUT_SECONDS = 3600;
/** Title, summary and requires; more is a --- that was meant to close it missing, and YAML reading time would grow with it. */
const MAX_FRONT_MATTER_CHARS = 8_192;

/** Read when the error is made: the registry's addons, a throw-away one a test registers included. */
const unknownAddon = () => `is not an addon ocm-lab knows (${builtinAddonNames().join(', ')})`;
const clusterName = z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, { error: 'must be a cluster name such as hub or cluster1' });
const frontMatterSchema = z.strictObject({
  title: z
    .string({ error: (issue) => (issue.input === undefined ? 'is required: a one-line title' : 'must be text: a one-line title') })
    .trim()
    .min(1, { error: 'must not be empty' }),
  summary: z
    .string({
      error: (issue) =>
        issue.input === undefined ? 'is required: a sentence or two on what the document shows' : 'must be text: a sentence or two on what the document shows',
    })
    .trim()
    .min(1, { error: 'must not be empty' }),
  requires: z
    .strictObject(
      {
        clusters: z.array(clusterName, { error: 'must list the clusters the document uses, e.g. [hub, cluster1]' }).default([]),
        addons: z.array(z.string({ error: unknownAddon }).refine(isBuiltinAddon, { error: unknownAddon })).default([]),
        capabilities: z.array(z.enum(KNOWN_CAPABILITIES, { error: `is not a capability a lab reports (${KNOWN_CAPABILITIES.join(', ')})` })).default([]),
      },
      { error: 'must be a mapping: requires: { clusters: [...], addons: [...], capabilities: [...] }' },
    )
    .default({ clusters: [], addons: [], capabilities: [] }),
});

const RUNNABLE: Record<string, Step['language']> = { sh: 'sh', bash: 'sh', shell: 'sh', js: 'js', javascript: 'js' };

/** The language of a block's first info word, if it runs; an own-property lookup, so `constructor` is no language. */
function runnableLanguage(word: string): Step['language'] | undefined {
  return Object.hasOwn(RUNNABLE, word) ? RUNNABLE[word] : undefined;
}

function fail(file: string, line: number, message: string): never {
  // The message quotes the document (attributes, field values): escaped, it cannot drive the terminal.
  throw new InvalidInputError(printable(`${file}:${line}: ${message}`), { hint: 'see docs/scenarios.md for the document format; nothing was run' });
}

/** Line (1-based, in the YAML text) of the deepest key of `keys` that exists. */
function lineOfPath(doc: Document, counter: LineCounter, keys: readonly PropertyKey[]): number {
  let node: unknown = doc.contents;
  let offset = 0;
  for (const key of keys) {
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && p.key.value === key);
      if (!pair) break;
      offset = (pair.key as { range?: [number, number, number] }).range?.[0] ?? offset;
      node = pair.value;
    } else if (isSeq(node) && typeof key === 'number' && node.items[key]) {
      node = node.items[key];
      offset = (node as { range?: [number, number, number] }).range?.[0] ?? offset;
    } else {
      break;
    }
  }
  return counter.linePos(offset).line;
}

interface FrontMatter {
  data: z.infer<typeof frontMatterSchema>;
  /** Index of the first body line. */
  bodyStart: number;
}

function parseFrontMatter(lines: readonly string[], file: string): FrontMatter {
  if (lines[0]?.trim() !== '---')
    fail(file, 1, 'missing front matter: the document must start with a --- block holding title, summary and (unless it needs nothing) requires');
  const end = lines.findIndex((l, i) => i > 0 && l.trim() === '---');
  if (end < 0) fail(file, 1, 'front matter opened here is never closed with ---');
  const text = lines.slice(1, end).join('\n');
  if (text.length > MAX_FRONT_MATTER_CHARS) {
    fail(
      file,
      end + 1,
      `the front matter closed here has ${text.length} characters, more than the ${MAX_FRONT_MATTER_CHARS} it may have ` +
        '(title, summary and requires take a few hundred): is the --- that should close it missing?',
    );
  }
  const read = readYaml(text);
  if (!read.ok) {
    const problem = read.problems[0]!;
    fail(file, 1 + (problem.line ?? 1), `${problem.kind === 'syntax' ? 'front matter is not valid YAML' : 'cannot read the front matter'}: ${problem.message}`);
  }
  const { doc, counter, value: raw } = read;
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) fail(file, 2, 'front matter must be a mapping with title, summary and requires');
  const parsed = frontMatterSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    if (issue.code === 'unrecognized_keys') {
      const key = issue.keys[0]!;
      const where = lineOfPath(doc, counter, [...issue.path, key]);
      fail(file, 1 + where, `unknown front matter field '${[...issue.path, key].join('.')}'; known: title, summary, requires.{clusters, addons, capabilities}`);
    }
    const field = issue.path
      .map((p) => (typeof p === 'number' ? `[${p}]` : String(p)))
      .join('.')
      .replace(/\.\[/g, '[');
    const value = issue.path.reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[k] : undefined), raw);
    const shown = value === undefined || typeof value === 'object' ? '' : ` ('${String(value)}')`;
    fail(file, 1 + lineOfPath(doc, counter, issue.path), `front matter field '${field}'${shown} ${issue.message}`);
  }
  return { data: parsed.data, bodyStart: end + 1 };
}

function stepOf(fence: Fence, language: Step['language'], attrs: string[], file: string): Step {
  let timeoutSeconds = DEFAULT_TIMEOUT_SECONDS;
  let cleanup = false;
  for (const attr of attrs) {
    const t = /^timeout=(\d+)$/.exec(attr);
    if (t) {
      timeoutSeconds = Number(t[1]);
      if (timeoutSeconds < 1 || timeoutSeconds > MAX_TIMEOUT_SECONDS)
        fail(file, fence.line, `timeout=${t[1]}: give seconds between 1 and ${MAX_TIMEOUT_SECONDS}`);
    } else if (attr === 'cleanup') {
      cleanup = true;
    } else {
      fail(file, fence.line, `unknown block attribute '${attr}'; known: timeout=<seconds>, cleanup, norun`);
    }
  }
  if (!fence.body.trim()) fail(file, fence.line, `the ${language} block is empty`);
  return { language, code: fence.body, line: fence.line, endLine: fence.endLine!, indent: fence.indent, timeoutSeconds, cleanup, expectations: [] };
}

function addExpectation(step: Step | null, fence: Fence, words: string[], file: string): void {
  const kind = words[0] ?? '';
  if (!kind) fail(file, fence.line, `an expect block needs a kind: ${EXPECTATION_KINDS.map((k) => `expect ${k}`).join(', ')}`);
  if (!EXPECTATION_KINDS.includes(kind as ExpectationKind))
    fail(file, fence.line, `unknown expectation kind '${kind}'; use one of: ${EXPECTATION_KINDS.join(', ')}`);
  if (words.length > 1) fail(file, fence.line, `unexpected '${words.slice(1).join(' ')}' after 'expect ${kind}'`);
  if (!step)
    fail(file, fence.line, 'an expect block must follow the sh or js block it checks (only prose, other expect blocks or an output block may come between)');
  const text = fence.body.replace(/^\s*\n/, '').trimEnd();
  if (kind !== 'fails' && !text.trim()) fail(file, fence.line, `expect ${kind} needs the text to look for`);
  if (kind === 'fails' && step.expectations.some((e) => e.kind === 'fails')) fail(file, fence.line, 'a block can have only one expect fails');
  if (kind === 'matches') {
    try {
      new RegExp(text, 'm');
    } catch (err) {
      fail(file, fence.line, `expect matches: invalid regular expression: ${(err as Error).message}`);
    }
  }
  step.expectations.push({ kind: kind as ExpectationKind, text, line: fence.line, endLine: fence.endLine! });
}

/**
 * Parses a scenario document. A malformed one (no or incomplete front matter,
 * an unclosed block, an unknown expectation kind or block attribute, an
 * expectation with nothing to check) is rejected with file and line, so that
 * nothing of it runs.
 */
export function parseScenario(text: string, file: string): Scenario {
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  const { data, bodyStart } = parseFrontMatter(lines, file);
  const steps: Step[] = [];
  // The step the next expect block would check: set by a command block, kept
  // by expect and output blocks, cleared by any other block.
  let checked: Step | null = null;
  for (const fence of scanFences(lines, bodyStart)) {
    if (fence.endLine === null) fail(file, fence.line, `code block opened here is never closed (expected a closing ${fence.marker})`);
    const [word = '', ...rest] = fence.info.split(/\s+/).filter(Boolean);
    if (word === 'expect') {
      addExpectation(checked, fence, rest, file);
      continue;
    }
    if (word === 'output') continue; // sample or transcript output for readers; expectations may still follow
    const language = runnableLanguage(word);
    if (!language || rest.includes('norun')) {
      checked = null; // yaml, text, norun examples…: shown to readers, never run
      continue;
    }
    checked = stepOf(fence, language, rest, file);
    steps.push(checked);
  }
  if (!steps.some((s) => !s.cleanup)) fail(file, bodyStart + 1, 'the document has no sh or js block to run');
  return {
    name: path.basename(file).replace(/\.md$/, ''),
    file,
    title: data.title,
    summary: data.summary,
    requires: { clusters: data.requires.clusters, addons: [...data.requires.addons], capabilities: [...data.requires.capabilities] },
    steps,
    lines,
  };
}
