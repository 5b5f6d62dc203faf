import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isBuiltinAddon } from '../../src/addons/registry.js';
import { ExitCode, InvalidInputError } from '../../src/errors.js';
import { DEFAULT_SCENARIO_DIR, listScenarios, parseScenario } from '../../src/scenario/index.js';
import { EXPECTATION_KINDS, KNOWN_CAPABILITIES, type Scenario } from '../../src/scenario/types.js';
import { Rng, fuzzSeed } from '../support/fuzz/rng.js';
import { SCENARIO_MUTATIONS, applyScenario, hostileFrontMatter } from '../support/fuzz/scenario-mutations.js';
import { BadOutcomes, Tally, type Verdict } from '../support/fuzz/tally.js';
import { TEXT_MUTATIONS, type Mutant } from '../support/fuzz/text-mutations.js';
import { useTempDir } from '../support/temp-dir.js';

// Hostile scenario documents (docs/reliability.md, "Hostile input: lab files
// and scenario documents"): the repository's scenarios/*.md mutated in their
// fences, expectations, front matter and headings, and as text or bytes, fed
// to parseScenario and to listScenarios as `scenario run` and `conformance`
// read them. Each must parse to a well-formed document or be rejected with the
// scenario error (exit 2) naming the file and a line in it; nothing else.

const seed = fuzzSeed('SCENARIO_FUZZ_SEED');
const tally = new Tally();
/** Random cases per run, spread over the mutation kinds. */
const RANDOM_CASES = 2_000;
/** Far above any case's time (the median is well under 1 ms): a case this slow is a hang. */
const HANG_MS = 5_000;
const FILE = '/docs/fuzzed.md';

const tmp = useTempDir('ocm-lab-scenario-fuzz-');
const starts: { name: string; text: string }[] = [];

beforeAll(async () => {
  console.log(`scenario fuzz seed ${seed}; replay with SCENARIO_FUZZ_SEED=${seed}`);
  const names = (await fs.readdir(DEFAULT_SCENARIO_DIR)).filter((f) => f.endsWith('.md') && f.toLowerCase() !== 'readme.md').sort();
  for (const name of names) starts.push({ name, text: await fs.readFile(path.join(DEFAULT_SCENARIO_DIR, name), 'utf8') });
});

afterAll(async () => {
  console.log(tally.render(`scenario fuzz, seed ${seed}`));
});

/** What a parsed document must be for the runner; an accepted input that breaks one of these is a bug as much as a crash. */
function invalidities(s: Scenario, file: string, text: string): string[] {
  const out: string[] = [];
  const lineCount = text.replace(/\r\n/g, '\n').split('\n').length;
  const dns = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
  if (s.file !== file || s.name !== path.basename(file, '.md')) out.push(`name ${s.name} / file ${s.file}`);
  if (typeof s.title !== 'string' || !s.title.trim() || typeof s.summary !== 'string' || !s.summary.trim()) out.push('title or summary empty');
  if (!s.requires.clusters.every((c) => typeof c === 'string' && dns.test(c))) out.push(`requires.clusters ${JSON.stringify(s.requires.clusters)}`);
  if (!s.requires.addons.every(isBuiltinAddon)) out.push(`requires.addons ${JSON.stringify(s.requires.addons)}`);
  if (!s.requires.capabilities.every((c) => (KNOWN_CAPABILITIES as readonly string[]).includes(c)))
    out.push(`requires.capabilities ${JSON.stringify(s.requires.capabilities)}`);
  if (!s.steps.some((step) => !step.cleanup)) out.push('nothing to run');
  if (s.lines.length !== lineCount) out.push(`lines ${s.lines.length}, not ${lineCount}`);
  let after = 0;
  for (const step of s.steps) {
    const at = `step at line ${step.line}`;
    if (step.language !== 'sh' && step.language !== 'js') out.push(`${at}: language ${String(step.language)}`);
    if (typeof step.code !== 'string' || !step.code.trim()) out.push(`${at}: empty code`);
    if (!(step.line > after && step.endLine > step.line && step.endLine <= lineCount))
      out.push(`${at}: lines ${step.line}-${step.endLine} out of order or outside the document`);
    if (!Number.isInteger(step.timeoutSeconds) || step.timeoutSeconds < 1 || step.timeoutSeconds > 3600) out.push(`${at}: timeout ${step.timeoutSeconds}`);
    if (typeof step.cleanup !== 'boolean') out.push(`${at}: cleanup ${String(step.cleanup)}`);
    if (step.expectations.filter((e) => e.kind === 'fails').length > 1) out.push(`${at}: two expect fails`);
    for (const e of step.expectations) {
      if (!EXPECTATION_KINDS.includes(e.kind)) out.push(`${at}: expectation kind ${String(e.kind)}`);
      if (!(e.line > step.endLine && e.endLine > e.line && e.endLine <= lineCount)) out.push(`${at}: expectation lines ${e.line}-${e.endLine}`);
      if (e.kind !== 'fails' && !e.text.trim()) out.push(`${at}: empty expect ${e.kind}`);
      if (e.kind === 'matches') {
        try {
          new RegExp(e.text, 'm');
        } catch {
          out.push(`${at}: expect matches is not a regular expression`);
        }
      }
    }
    after = step.endLine;
  }
  return out;
}

/** Why a rejection is not the scenario error it must be: exit 2, one line naming the file and a line in it. */
function badRejection(err: unknown, file: string, text: string): string | null {
  if (!(err instanceof InvalidInputError)) return `threw ${err instanceof Error ? err.name : typeof err}, not InvalidInputError`;
  if (err.exitCode !== ExitCode.invalidInput) return `exit code ${err.exitCode}, not 2`;
  if (!err.hint?.includes('docs/scenarios.md')) return `hint ${JSON.stringify(err.hint)}`;
  if (/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u.test(err.message)) return 'the message holds a raw control or invisible character (or a line break)';
  if (err.message.includes('[object Object]')) return 'the message holds [object Object]';
  const m = /^(.*):(\d+): ./.exec(err.message);
  if (!m || m[1] !== file) return `message names no file and line: ${JSON.stringify(err.message.slice(0, 200))}`;
  const lineCount = text.replace(/\r\n/g, '\n').split('\n').length;
  // "nothing to run" points at the line after the front matter, which may be one past the last.
  if (Number(m[2]) < 1 || Number(m[2]) > lineCount + 1)
    return `line ${m[2]} is outside the document (${lineCount} lines): ${JSON.stringify(err.message.slice(0, 200))}`;
  return null;
}

type Entry = 'parseScenario' | 'listScenarios';

/** Feeds one document to one entry point and judges what came out. */
async function judge(input: string | Buffer, entry: Entry, name = 'fuzzed.md'): Promise<Verdict> {
  const text = typeof input === 'string' ? input : input.toString('utf8');
  const caseDir = path.join(tmp.path, 'docs');
  const file = entry === 'parseScenario' ? FILE : path.join(caseDir, name);
  if (entry === 'listScenarios') {
    await fs.rm(caseDir, { recursive: true, force: true });
    await fs.mkdir(caseDir);
    await fs.writeFile(file, input);
  }
  const start = performance.now();
  let scenario: Scenario | undefined;
  let error: unknown;
  try {
    scenario = entry === 'parseScenario' ? parseScenario(text, file) : (await listScenarios(`${caseDir}/`))[0];
  } catch (err) {
    error = err;
  }
  const ms = performance.now() - start;
  if (scenario) {
    const wrong = invalidities(scenario, file, text);
    return wrong.length ? { outcome: 'crashed', ms, why: `accepted a malformed document: ${wrong.slice(0, 3).join('; ')}` } : { outcome: 'accepted', ms };
  }
  const why = badRejection(error, file, text);
  return why ? { outcome: 'crashed', ms, why, error } : { outcome: 'rejected', ms };
}

const bad = new BadOutcomes(tally, HANG_MS, 400);

function record(label: string, kind: string, mutant: Mutant, entry: Entry, verdict: Verdict): void {
  bad.record(label, kind, mutant.input, entry, verdict);
}

function expectNoFailures(): void {
  const { all, message } = bad.take(`SCENARIO_FUZZ_SEED=${seed}`);
  expect(all, message).toEqual([]);
}

const SCENARIO_KINDS = Object.keys(SCENARIO_MUTATIONS);
const TEXT_KINDS = Object.keys(TEXT_MUTATIONS);

/** One random input: a structural mutation (two in three) or a text mutation of a document, sometimes two stacked. */
function mutate(rng: Rng, text: string): Mutant {
  return rng.int(3) < 2 ? applyScenario(rng, rng.pick(SCENARIO_KINDS), text) : TEXT_MUTATIONS[rng.pick(TEXT_KINDS)]!(rng, text);
}

describe(`hostile scenario documents (seed ${seed})`, () => {
  it('the starting documents are the repository scenarios, well-formed', () => {
    expect(starts.length).toBeGreaterThanOrEqual(7);
    for (const { name, text } of starts) expect(invalidities(parseScenario(text, `/docs/${name}`), `/docs/${name}`, text), name).toEqual([]);
  });

  it(`${RANDOM_CASES} seeded mutations: a well-formed document or the scenario error naming file and line, nothing else, none slow`, async () => {
    const rng = new Rng(seed);
    for (let i = 0; i < RANDOM_CASES; i++) {
      const start = rng.pick(starts);
      let mutant = mutate(rng, start.text);
      if (rng.chance(0.2) && typeof mutant.input === 'string') mutant = { kind: 'stacked', input: mutate(rng, mutant.input).input };
      // Bytes are read from a file, as the CLI reads them; one text in four too.
      const entry: Entry = typeof mutant.input !== 'string' || i % 4 === 0 ? 'listScenarios' : 'parseScenario';
      record(`case ${i} of ${start.name}`, mutant.kind, mutant, entry, await judge(mutant.input, entry));
    }
    expect(tally.total()).toBe(RANDOM_CASES);
    expectNoFailures();
  });

  it('front matter that exhausts the YAML reader (alias bomb, self-alias, nesting past the stack) is rejected at its line, fast', async () => {
    const body = '\n# T\n\n```sh\necho\n```\n';
    for (const kind of ['alias-bomb', 'self-alias', 'deep-nesting'] as const) {
      const text = `---\n${hostileFrontMatter(kind)}\n---\n${body}`;
      for (const entry of ['parseScenario', 'listScenarios'] as const) {
        const verdict = await judge(text, entry);
        record(`${kind} front matter`, `${kind} front matter (fixed)`, { kind, input: text }, entry, verdict);
        expect(verdict.outcome, `${kind} via ${entry}`).toBe('rejected');
        expect(verdict.ms, `${kind} via ${entry}`).toBeLessThan(1_000);
      }
    }
    expectNoFailures();
  });

  it('huge lines, NUL bytes and unterminated fences at every size', async () => {
    const base = starts.find((s) => s.name === 'manifestwork.md')!.text;
    const cases: [string, string][] = [];
    for (const n of [1_000, 100_000, 1_000_000]) {
      cases.push([`a prose line of ${n} characters`, base.replace('\n# ', `\n${'p'.repeat(n)}\n# `)]);
      cases.push([`a fence of ${n} backticks, never closed`, `${base}\n${'`'.repeat(n)}sh\necho\n`]);
      cases.push([`a sh line of ${n} characters`, base.replace('export IMAGE=$OCM_LAB_IMAGE', `export IMAGE=${'x'.repeat(n)}`)]);
      cases.push([`${n} NUL bytes in a block`, base.replace('export IMAGE=$OCM_LAB_IMAGE', `echo ${'\u0000'.repeat(n)}`)]);
      cases.push([`${Math.min(n, 20_000)} unterminated fences`, `${base}\n${'```sh\n'.repeat(Math.min(n, 20_000))}`]);
      cases.push([`a front matter line of ${n} stray brackets`, base.replace('summary: ', `summary: ${']'.repeat(n)}`)]);
    }
    for (const [label, text] of cases) record(label, 'huge (fixed)', { kind: 'huge', input: text }, 'parseScenario', await judge(text, 'parseScenario'));
    expectNoFailures();
  });
});

describe('hostile scenario documents: exact messages', () => {
  const F = '```';
  const doc = (body: string, front = 'title: T\nsummary: S\n') => `---\n${front}---\n\n${body}`;
  const messageOf = (text: string) => {
    try {
      parseScenario(text, FILE);
    } catch (err) {
      expect(err).toBeInstanceOf(InvalidInputError);
      return (err as Error).message;
    }
    throw new Error('expected the document to be rejected');
  };

  it('a block whose info word is an Object property (constructor, __proto__, toString) is shown, not run', () => {
    for (const word of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      const s = parseScenario(doc(`${F}${word}\nrm -rf /\n${F}\n\n${F}sh\necho ok\n${F}\n`), FILE);
      expect(
        s.steps.map((step) => [step.language, step.code]),
        word,
      ).toEqual([['sh', 'echo ok']]);
    }
  });

  it('front matter that exhausts the YAML reader is rejected with the line, not a ReferenceError or RangeError', () => {
    expect(messageOf(doc(`${F}sh\necho\n${F}\n`, `${hostileFrontMatter('alias-bomb')}\n`))).toBe(
      `${FILE}:3: cannot read the front matter: its aliases expand to too many values (an "alias bomb"); write the values out instead of nesting aliases`,
    );
    expect(messageOf(doc(`${F}sh\necho\n${F}\n`, `${hostileFrontMatter('self-alias')}\n`))).toBe(
      `${FILE}:2: cannot read the front matter: alias *t is inside the value anchored as &t, so that value would contain itself; write the value out`,
    );
    expect(messageOf(doc(`${F}sh\necho\n${F}\n`, `${hostileFrontMatter('deep-nesting')}\n`))).toBe(
      `${FILE}:6: cannot read the front matter: it nests too deeply (more levels than the reader can follow); look for runaway indentation or unclosed [ or {`,
    );
  });

  it('a YAML error in the front matter names its own line (it named line 2 whatever the line)', () => {
    expect(messageOf(doc(`${F}sh\necho\n${F}\n`, 'title: T\nsummary: S\nrequires: {clusters: [hub}\n'))).toMatch(
      new RegExp(`^${FILE}:4: front matter is not valid YAML: `),
    );
  });

  it('a front matter too long to be one is refused before it is read as YAML: its closing --- is missing', () => {
    const prose = Array.from({ length: 300 }, (_, i) => `Line ${i} of prose that the missing --- left inside the front matter.`).join('\n');
    const text = `---\ntitle: T\nsummary: S\n\n${prose}\n\n---\n\n${F}sh\necho\n${F}\n`;
    expect(messageOf(text)).toMatch(
      new RegExp(
        `^${FILE}:306: the front matter closed here has \\d+ characters, more than the 8192 it may have \\(title, summary and requires take a few hundred\\): is the --- that should close it missing\\?$`,
      ),
    );
  });

  it('a title or summary of the wrong type says so, not that it is missing', () => {
    expect(messageOf(doc(`${F}sh\necho\n${F}\n`, 'title: [a, b]\nsummary: S\n'))).toBe(`${FILE}:2: front matter field 'title' must be text: a one-line title`);
    expect(messageOf(doc(`${F}sh\necho\n${F}\n`, 'title: T\n'))).toBe(
      `${FILE}:2: front matter field 'summary' is required: a sentence or two on what the document shows`,
    );
  });

  it('control characters quoted from the document are escaped', () => {
    expect(messageOf(doc(`${F}sh \u001b[2J\necho\n${F}\n`))).toBe(`${FILE}:6: unknown block attribute '\\u001b[2J'; known: timeout=<seconds>, cleanup, norun`);
    expect(messageOf(doc(`${F}expect \u202econtains\nx\n${F}\n`))).toBe(
      `${FILE}:6: unknown expectation kind '\\u202econtains'; use one of: contains, matches, row, fails`,
    );
  });
});
