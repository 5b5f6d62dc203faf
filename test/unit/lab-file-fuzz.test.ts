import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MAX_CLUSTERS,
  MAX_LAB_NAME,
  MAX_VPCS,
  SUPPORTED_KUBERNETES_VERSIONS,
  SUPPORTED_OCM_VERSIONS,
  defaultLabConfig,
  loadLabConfig,
  parseLabConfig,
  renderLabConfig,
  validateLabFile,
  type LabConfig,
} from '../../src/config/index.js';
import { ExitCode, InvalidInputError } from '../../src/errors.js';
import '../support/addon-vocabulary.js';
import { Rng, fuzzSeed } from '../support/fuzz/rng.js';
import { BadOutcomes, Tally, type Verdict } from '../support/fuzz/tally.js';
import { TEXT_MUTATIONS, type Mutant } from '../support/fuzz/text-mutations.js';
import {
  DATA_MUTATIONS,
  YAML_TEXT_MUTATIONS,
  aliasBomb,
  applyData,
  applyYamlText,
  deepBlock,
  deepCompactSeq,
  deepFlow,
} from '../support/fuzz/yaml-mutations.js';
import { MINIMAL_LAB_FILE } from '../support/lab-file.js';
import { useTempDir } from '../support/temp-dir.js';
import { addonVocabulary, isBuiltinAddon } from '../../src/addons/registry.js';

// Hostile lab files (docs/reliability.md, "Hostile input: lab files and
// scenario documents"): valid files mutated at the YAML level and as text or
// bytes, fed to parseLabConfig, validateLabFile and loadLabConfig as the CLI
// calls them. Each must give a valid lab or the config error (exit 2) whose
// every line names the file and a line in it; nothing else may come out.

const seed = fuzzSeed('LAB_FILE_FUZZ_SEED');
const tally = new Tally();
/** Random cases per run, spread over the mutation kinds. */
const RANDOM_CASES = 2_000;
/** Far above any case's time (the median is under 1 ms, the slowest tens of ms), and high enough that a machine at load 100 does not reach it (525 ms was seen under a 500 ms bound): a case this slow is a hang. */
const HANG_MS = 5_000;

const EXAMPLES = ['default-lab.yaml', 'three-spokes.yaml', 'upstream-addons.yaml'];
const tmp = useTempDir('ocm-lab-lab-fuzz-');
let labPath: string;
const starts: { name: string; text: string }[] = [];

beforeAll(async () => {
  console.log(`lab-file fuzz seed ${seed}; replay with LAB_FILE_FUZZ_SEED=${seed}`);
  labPath = path.join(tmp.path, 'lab.yaml');
  starts.push({ name: 'renderLabConfig(defaultLabConfig())', text: renderLabConfig(defaultLabConfig()) });
  starts.push({
    name: 'rendered, with network and upstream',
    text: renderLabConfig({ ...defaultLabConfig(), network: { cidr: '10.213.0.0/16' }, addonImplementations: { 'cluster-proxy': 'upstream' } }),
  });
  for (const file of EXAMPLES) starts.push({ name: `examples/${file}`, text: await fs.readFile(path.join('examples', file), 'utf8') });
  starts.push({ name: 'MINIMAL_LAB_FILE (test/support/lab-file.ts)', text: MINIMAL_LAB_FILE });
});

afterAll(async () => {
  console.log(tally.render(`lab-file fuzz, seed ${seed}`));
});

/** What a valid lab must be; an accepted input that breaks one of these is a bug as much as a crash. */
function invalidities(lab: LabConfig, source: string | null): string[] {
  const dns = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
  const out: string[] = [];
  const vpcs = lab.vpcs.map((v) => v.name);
  const clusters = lab.clusters.map((c) => c.name);
  if (!dns.test(lab.name) || lab.name.length > MAX_LAB_NAME) out.push(`lab name ${JSON.stringify(lab.name)}`);
  if (!SUPPORTED_KUBERNETES_VERSIONS.includes(lab.kubernetesVersion)) out.push(`kubernetesVersion ${lab.kubernetesVersion}`);
  if (!(SUPPORTED_OCM_VERSIONS as readonly string[]).includes(lab.ocmVersion)) out.push(`ocmVersion ${lab.ocmVersion}`);
  if (vpcs.length < 1 || vpcs.length > MAX_VPCS || new Set(vpcs).size !== vpcs.length) out.push(`vpcs ${JSON.stringify(vpcs)}`);
  if (clusters.length < 1 || clusters.length > MAX_CLUSTERS || new Set(clusters).size !== clusters.length) out.push(`clusters ${JSON.stringify(clusters)}`);
  if ([...vpcs, ...clusters].some((n) => typeof n !== 'string' || !dns.test(n) || n.length > 63)) out.push('a name is not a DNS-1123 label');
  if (lab.clusters.filter((c) => c.hub === true).length !== 1 || lab.clusters.some((c) => typeof c.hub !== 'boolean')) out.push('not exactly one hub');
  if (lab.clusters.some((c) => !vpcs.includes(c.vpc)) || vpcs.some((v) => !lab.clusters.some((c) => c.vpc === v))) out.push('clusters and VPCs do not match');
  if (lab.addons.some((a) => !isBuiltinAddon(a)) || new Set(lab.addons).size !== lab.addons.length) out.push(`addons ${JSON.stringify(lab.addons)}`);
  if (lab.source !== source) out.push(`source ${lab.source}`);
  if (!out.length) {
    const again = parseLabConfig(renderLabConfig(lab), source ?? 'rendered', addonVocabulary());
    if (JSON.stringify({ ...again, source: lab.source }) !== JSON.stringify(lab)) out.push('does not render back to an equal lab');
  }
  return out;
}

/** Line breaks as YAML counts them. */
const lineCount = (text: string) => text.split(/\r\n|\r|\n/).length;

/** File-level problems: the only lines that may name no line of the file. */
const FILE_LEVEL = [/^the file is empty; /, /^the file has \d+ characters, more than the \d+ a lab file may have /];

/** Why a rejection is not the config error it must be: exit 2, the file's path, every problem at a line of the file. */
function badRejection(err: unknown, source: string, text: string): string | null {
  if (!(err instanceof InvalidInputError)) return `threw ${err instanceof Error ? err.name : typeof err}, not InvalidInputError`;
  if (err.exitCode !== ExitCode.invalidInput) return `exit code ${err.exitCode}, not 2`;
  if (!err.hint?.includes('docs/lab-file.md')) return `hint ${JSON.stringify(err.hint)}`;
  const [head, ...problems] = err.message.split('\n');
  const m = /^invalid lab file (.+) \((\d+) problems?\):$/.exec(head ?? '');
  if (!m || m[1] !== source) return `first line ${JSON.stringify(head)}`;
  if (Number(m[2]) !== problems.length || !problems.length) return `counts ${m[2]} problems, lists ${problems.length}`;
  // Anything from the input must come out escaped: no control character may reach the terminal.
  if (/(?![\n])[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u.test(err.message)) return 'the message holds a raw control or invisible character';
  if (err.message.includes('[object Object]')) return 'the message holds [object Object]';
  const prefix = `  ${source}`;
  for (const problem of problems) {
    if (!problem.startsWith(prefix)) return `problem line without the path: ${JSON.stringify(problem.slice(0, 200))}`;
    const rest = problem.slice(prefix.length);
    const at = /^:(\d+)(?::(\d+))?: ./.exec(rest);
    if (at) {
      const line = Number(at[1]);
      if (line < 1 || line > lineCount(text)) return `line ${line} is outside the file (${lineCount(text)} lines): ${JSON.stringify(problem.slice(0, 200))}`;
    } else if (!rest.startsWith(': ') || !FILE_LEVEL.some((re) => re.test(rest.slice(2)))) {
      return `problem names no line: ${JSON.stringify(problem.slice(0, 200))}`;
    }
  }
  return null;
}

type Entry = 'parseLabConfig' | 'validateLabFile' | 'loadLabConfig';

/** Feeds one input to one entry point and judges what came out. */
async function judge(input: string | Buffer, entry: Entry): Promise<Verdict> {
  const text = typeof input === 'string' ? input : input.toString('utf8');
  if (entry !== 'parseLabConfig') await fs.writeFile(labPath, input);
  const source = entry === 'parseLabConfig' ? '/labs/lab.yaml' : labPath;
  const start = performance.now();
  let lab: LabConfig | undefined;
  let error: unknown;
  try {
    lab =
      entry === 'parseLabConfig'
        ? parseLabConfig(text, source, addonVocabulary())
        : entry === 'validateLabFile'
          ? await validateLabFile(labPath)
          : await loadLabConfig(labPath);
  } catch (err) {
    error = err;
  }
  const ms = performance.now() - start;
  if (lab) {
    const wrong = invalidities(lab, source);
    return wrong.length ? { outcome: 'crashed', ms, why: `accepted an invalid lab: ${wrong.join('; ')}` } : { outcome: 'accepted', ms };
  }
  const why = badRejection(error, source, text);
  return why ? { outcome: 'crashed', ms, why, error } : { outcome: 'rejected', ms };
}

const bad = new BadOutcomes(tally, HANG_MS, 600);

function record(label: string, kind: string, mutant: Mutant, entry: Entry, verdict: Verdict): void {
  bad.record(label, kind, mutant.input, entry, verdict);
}

function expectNoFailures(): void {
  const { all, message } = bad.take(`LAB_FILE_FUZZ_SEED=${seed}`);
  expect(all, message).toEqual([]);
}

const DATA_KINDS = Object.keys(DATA_MUTATIONS);
const YAML_TEXT_KINDS = Object.keys(YAML_TEXT_MUTATIONS);
const TEXT_KINDS = Object.keys(TEXT_MUTATIONS);

/** One random input: a data, YAML-text or text mutation of a starting file, or two stacked. */
function mutate(rng: Rng, text: string): Mutant {
  const family = rng.int(3);
  if (family === 0) {
    try {
      return applyData(rng, rng.pick(DATA_KINDS), text);
    } catch {
      // Text an earlier mutation left unreadable as data (an alias bomb): mutate it as text instead.
    }
  }
  if (family === 1) return applyYamlText(rng, rng.pick(YAML_TEXT_KINDS), text);
  return TEXT_MUTATIONS[rng.pick(TEXT_KINDS)]!(rng, text);
}

describe(`hostile lab files (seed ${seed})`, () => {
  it('the starting files are valid lab files', () => {
    for (const { name, text } of starts) expect(invalidities(parseLabConfig(text, '/labs/lab.yaml', addonVocabulary()), '/labs/lab.yaml'), name).toEqual([]);
  });

  it(`${RANDOM_CASES} seeded mutations: a valid lab or the config error naming file and line, nothing else, none slow`, async () => {
    const rng = new Rng(seed);
    const entries: Entry[] = ['parseLabConfig', 'validateLabFile', 'loadLabConfig'];
    for (let i = 0; i < RANDOM_CASES; i++) {
      const start = rng.pick(starts);
      let mutant = mutate(rng, start.text);
      if (rng.chance(0.15) && typeof mutant.input === 'string') {
        const second = mutate(rng, mutant.input);
        mutant = { kind: 'stacked', input: second.input };
      }
      // Bytes are read from a file, as the CLI reads them; text goes to all three entry points in turn.
      const entry = typeof mutant.input === 'string' ? entries[i % 3]! : rng.pick(entries.slice(1));
      record(`case ${i} of ${start.name}`, mutant.kind, mutant, entry, await judge(mutant.input, entry));
    }
    expect(tally.total()).toBe(RANDOM_CASES);
    expectNoFailures();
  });

  it('alias bombs (billion laughs) are refused, each within 1 s', async () => {
    const base = renderLabConfig(defaultLabConfig());
    const bombs: [string, string][] = [
      ['10 × 10 levels, unused', [...aliasBomb(10, 10), base].join('\n')],
      ['9 × 9 levels, used as name', [...aliasBomb(9, 9), base.replace('name: default', 'name: *lol8')].join('\n')],
      ['used as clusters', [...aliasBomb(9, 10), base.replace(/clusters:\n(  - .*\n|    .*\n)*/, 'clusters: *lol8\n')].join('\n')],
      [
        'inside a cluster',
        base
          .replace('  - name: cluster2', `  - name: cluster2\n    extra: [${'*lol7, '.repeat(9)}*lol7]`)
          .replace('apiVersion', `${aliasBomb(8, 10).join('\n')}\napiVersion`),
      ],
      ['in flow style', `{${aliasBomb(10, 10).join(', ')}, apiVersion: ocm-lab/v1alpha1}`],
    ];
    for (const [label, text] of bombs) {
      const verdict = await judge(text, 'parseLabConfig');
      record(`alias bomb ${label}`, 'alias-bomb (fixed)', { kind: 'alias-bomb', input: text }, 'parseLabConfig', verdict);
      expect(verdict.outcome, label).toBe('rejected');
      expect(verdict.ms, label).toBeLessThan(1_000);
    }
    expectNoFailures();
  });

  it('deep nesting, flow, block and compact, up to what the YAML reader overflows on', async () => {
    const base = renderLabConfig(defaultLabConfig());
    for (const depth of [10, 100, 500, 1_000, 2_000, 5_000]) {
      for (const [label, value] of [
        ['flow lists', deepFlow(depth, false)],
        ['flow maps', deepFlow(depth, true)],
        ['compact lists', `\n  ${deepCompactSeq(depth)}`],
      ] as const) {
        const text = base.replace('name: default', `name: ${value}`);
        record(`${label}, depth ${depth}`, 'deep-nesting (fixed)', { kind: 'deep', input: text }, 'parseLabConfig', await judge(text, 'parseLabConfig'));
      }
      // Block mappings indented one space per level: past ~250 levels the file is over the size limit.
      const block = base.replace('name: default', ['name:', ...deepBlock(Math.min(depth, 250), '')].join('\n'));
      record(
        `block maps, depth ${Math.min(depth, 250)}`,
        'deep-nesting (fixed)',
        { kind: 'deep', input: block },
        'parseLabConfig',
        await judge(block, 'parseLabConfig'),
      );
    }
    expect(tally.count('deep-nesting (fixed)', 'accepted')).toBe(0);
    expectNoFailures();
  });

  it('long lists: 10 000 clusters are refused by size, 1 000 under the size limit by the cluster limit', async () => {
    const base = renderLabConfig(defaultLabConfig());
    const clusters = (n: number, flow: boolean) =>
      flow
        ? `clusters: [${Array.from({ length: n }, (_, i) => `{name: c${i}, vpc: vpc-2}`).join(', ')}]\n`
        : `clusters:\n${Array.from({ length: n }, (_, i) => `  - name: c${i}\n    vpc: vpc-2\n`).join('')}`;
    const withClusters = (n: number, flow: boolean) =>
      base.replace(
        /clusters:\n(  - .*\n|    .*\n)*/,
        `${clusters(n, flow).replace('{name: c0, vpc: vpc-2}', '{name: c0, vpc: vpc-1, hub: true}').replace('  - name: c0\n    vpc: vpc-2\n', '  - name: c0\n    vpc: vpc-1\n    hub: true\n')}`,
      );
    const cases: [string, string, RegExp][] = [
      ['10 000 clusters, block', withClusters(10_000, false), /^ {2}\/labs\/lab\.yaml: the file has \d+ characters, more than the 32768 a lab file may have /m],
      ['10 000 clusters, flow', withClusters(10_000, true), /the file has \d+ characters/],
      [
        '1 000 clusters, flow',
        withClusters(1_000, true),
        new RegExp(`/labs/lab\\.yaml:\\d+: clusters: 1000 clusters are more than the ${MAX_CLUSTERS} a lab may have`),
      ],
      ['1 000 addons', base.replace(/addons:.*/s, `addons: [${Array(1_000).fill('helloworld').join(', ')}]\n`), /addons\[999\] = "helloworld": listed twice/],
      [
        '1 000 VPCs',
        base.replace(/vpcs:\n(  - .*\n)*/, `vpcs: [${Array.from({ length: 1_000 }, (_, i) => `{name: v${i}}`).join(', ')}]\n`),
        new RegExp(`vpcs: 1000 VPCs are more than the ${MAX_VPCS}`),
      ],
    ];
    for (const [label, text, expected] of cases) {
      const verdict = await judge(text, 'parseLabConfig');
      record(label, 'long-list (fixed)', { kind: 'long-list', input: text }, 'parseLabConfig', verdict);
      expect(verdict.outcome, label).toBe('rejected');
      expect(() => parseLabConfig(text, '/labs/lab.yaml', addonVocabulary()), label).toThrow(expected);
    }
    expectNoFailures();
  });
});

describe('hostile lab files: exact messages', () => {
  const FILE = '/labs/lab.yaml';
  const base = renderLabConfig(defaultLabConfig());
  const problems = (text: string) => {
    try {
      parseLabConfig(text, FILE, addonVocabulary());
    } catch (err) {
      expect(err).toBeInstanceOf(InvalidInputError);
      return (err as Error).message
        .split('\n')
        .slice(1)
        .map((l) => l.trim());
    }
    throw new Error('expected the lab file to be rejected');
  };
  const lineOf = (text: string, fragment: string) => text.split('\n').findIndex((l) => l.includes(fragment)) + 1;

  it('an addon named after an Object property (constructor, __proto__, toString) is an unknown addon', () => {
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      const text = base.replace(/addons:.*/s, `addons: [cluster-proxy, ${name}]\n`);
      expect(problems(text)).toEqual([
        `${FILE}:${lineOf(text, 'addons:')}: addons[1] = "${name}": is not an addon ocm-lab knows; use one of: cluster-proxy, managed-serviceaccount, cluster-gateway, helloworld`,
      ]);
    }
  });

  it('an alias inside the value its anchor names is refused at the alias', () => {
    const text = base.replace('name: default', 'name: &a [x, *a]');
    expect(problems(text)).toEqual([
      `${FILE}:3:14: cannot read the YAML: alias *a is inside the value anchored as &a, so that value would contain itself; write the value out`,
    ]);
    const block = base.replace('vpcs:\n', 'vpcs: &v\n  - *v\n');
    expect(problems(block)).toEqual([
      `${FILE}:7:5: cannot read the YAML: alias *v is inside the value anchored as &v, so that value would contain itself; write the value out`,
    ]);
  });

  it('an alias bomb is refused at its first alias', () => {
    const text = [...aliasBomb(9, 10), base].join('\n');
    expect(problems(text)).toEqual([
      `${FILE}:2:14: cannot read the YAML: its aliases expand to too many values (an "alias bomb"); write the values out instead of nesting aliases`,
    ]);
  });

  it('nesting too deep for the YAML reader is refused with the line it starts on', () => {
    const compact = base.replace('name: default', `name:\n  ${deepCompactSeq(15_000)}`);
    expect(problems(compact)).toEqual([
      `${FILE}:4: cannot read the YAML: it nests too deeply (more levels than the reader can follow); look for runaway indentation or unclosed [ or {`,
    ]);
    const flow = problems(base.replace('name: default', `name: ${deepFlow(5_000, false)}`));
    expect(flow).toEqual([expect.stringMatching(new RegExp(`^${FILE}:3: cannot read the YAML: it nests too deeply `))]);
  });

  it('a file over 32 KiB is refused before it is parsed', () => {
    const text = `${base}# ${'x'.repeat(40_000)}\n`;
    expect(problems(text)).toEqual([
      `${FILE}: the file has ${text.length} characters, more than the 32768 a lab file may have (the largest lab takes a few thousand); is it the right file?`,
    ]);
  });

  it('control characters from the file are escaped in the message', () => {
    const text = `${base}"evil\\e[2Jkey\\u0007": 1\n`;
    expect(problems(text)).toEqual([
      `${FILE}:${lineCount(base)}: evil\\u001b[2Jkey\\u0007: unknown field; fields allowed here: apiVersion, kind, name, kubernetesVersion, ocmVersion, network, vpcs, clusters, addons, artifacts, clusterProfile, localCluster, featureGates, clusterProxy, mirrors, ocmSource, runtime`,
    ]);
  });

  it('a BOM and CRLF line endings read as the same lab; tabs as indentation are a syntax error at their line', () => {
    expect(parseLabConfig(`\ufeff${base.replace(/\n/g, '\r\n')}`, FILE, addonVocabulary())).toEqual({ ...defaultLabConfig(), source: FILE });
    expect(problems(base.replace('  - name: cluster1', '\t- name: cluster1'))[0]).toBe(
      `${FILE}:${lineOf(base, 'name: cluster1')}:1: YAML syntax error: Tabs are not allowed as indentation`,
    );
  });
});
