import path from 'node:path';
import type { core } from 'zod';
import { InvalidInputError } from '../errors.js';
import { printable } from '../util/printable.js';
import { readYaml, type YamlProblem } from '../util/yaml-read.js';
import { SourcePositions } from './positions.js';
import { describeProblem, describeValue, unknownFieldMessage, type FieldPath, type Problem } from './problems.js';
import { crossFieldProblems } from './rules.js';
import { kubernetesFields } from './kubernetes-version.js';
import { resolveOcmVersion } from './ocm-version.js';
import { labFileSchema, type LabFile } from './schema.js';
import { CLUSTER_PROFILE_GATE } from './feature-gates.js';
import { DEFAULT_ADDONS, KIND, API_VERSION, DEFAULT_OCM_VERSION, type AddonName, type AddonVocabulary, type LabConfig, type RuntimeSection } from './types.js';

/** A lab file is a few thousand characters at most; past this it is not one, and reading it would only take time. */
const MAX_LAB_FILE_CHARS = 32_768;

const HINT = 'fix the lines above (every field is described in docs/lab-file.md; examples/default-lab.yaml is the default lab); nothing was created';

const TYPE_WORDS: Record<string, string> = {
  string: 'a string (quote it if it looks like a number or a boolean)',
  boolean: 'true or false',
  array: "a list ('- item' lines or [a, b])",
  object: "a mapping ('field: value' lines indented under it)",
  record: "a mapping ('field: value' lines indented under it)",
  number: 'a number',
};

/** A problem of the YAML reader as a problem line: `<file>:<line>[:<col>]: …`. */
function yamlProblemLine(sourceName: string, problem: YamlProblem): string {
  const where = [sourceName, problem.line, problem.col].filter((part) => part !== null).join(':');
  if (problem.kind === 'unreadable') return `${where}: cannot read the YAML: ${problem.message}`;
  // yaml's advice for multiple documents is meant for programmers.
  const text = /multiple documents/i.test(problem.message)
    ? "the file holds more than one YAML document ('---'); a lab file is a single document"
    : problem.message;
  return `${where}: YAML syntax error: ${text}`;
}

/** What to write when a required field is missing. */
function requiredMessage(path: FieldPath, expected: string): string {
  const field = path.filter((p) => typeof p === 'string').join('.');
  switch (field) {
    case 'apiVersion':
      return `is required: write apiVersion: ${API_VERSION}`;
    case 'kind':
      return `is required: write kind: ${KIND}`;
    case 'vpcs':
      return 'is required: list the VPCs, e.g. "vpcs: [{name: vpc-1}]"';
    case 'clusters':
      return 'is required: list the clusters, each with name and vpc, one with hub: true';
    case 'clusters.vpc':
      return 'is required: name the VPC (from vpcs) this cluster runs in';
    case 'clusters.name':
      return 'is required: give the cluster a name (a DNS-1123 label such as cluster1)';
    case 'vpcs.name':
      return 'is required: give the VPC a name (a DNS-1123 label such as vpc-1)';
    default:
      return `is required: it must be ${expected}`;
  }
}

function valueAt(root: unknown, at: FieldPath): unknown {
  return at.reduce<unknown>((node, key) => (node !== null && typeof node === 'object' ? (node as Record<string | number, unknown>)[key] : undefined), root);
}

function hasValueAt(root: unknown, at: FieldPath): boolean {
  if (at.length === 0) return true;
  const parent = valueAt(root, at.slice(0, -1));
  return parent !== null && typeof parent === 'object' && Object.prototype.hasOwnProperty.call(parent, at[at.length - 1]!);
}

/** One schema issue as the problems a person can act on. */
function problemsOfIssue(issue: core.$ZodIssue, raw: unknown): Problem[] {
  const at = issue.path as FieldPath;
  if (issue.code === 'invalid_union') {
    // A field of several shapes (an addon: a name or {name, implementation}): report the shape the value has.
    const branch =
      issue.errors.find((issues) => issues.every((i) => i.path.length > 0)) ??
      issue.errors.find((issues) => !issues.some((i) => i.code === 'invalid_type' && i.path.length === 0));
    if (branch) return branch.flatMap((inner) => problemsOfIssue({ ...inner, path: [...at, ...inner.path] } as core.$ZodIssue, raw));
  }
  // A record's key of the wrong form (a feature gate name): its own check's message, at the key.
  if (issue.code === 'invalid_key' && issue.issues[0]) return [{ path: at, value: valueAt(raw, at), message: issue.issues[0].message }];
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => ({ path: [...at, key], message: unknownFieldMessage(at, key) }));
  }
  if (!hasValueAt(raw, at)) {
    const expected = issue.code === 'invalid_type' ? (TYPE_WORDS[issue.expected] ?? issue.expected) : issue.message;
    return [{ path: at, message: requiredMessage(at, expected) }];
  }
  const value = valueAt(raw, at);
  if (issue.code === 'invalid_type') return [{ path: at, value, message: `must be ${TYPE_WORDS[issue.expected] ?? issue.expected}` }];
  return [{ path: at, value, message: issue.message }];
}

function fail(sourceName: string, lines: string[]): never {
  const count = lines.length === 1 ? '1 problem' : `${lines.length} problems`;
  throw new InvalidInputError(`invalid lab file ${printable(sourceName)} (${count}):\n${lines.map((l) => `  ${printable(l)}`).join('\n')}`, { hint: HINT });
}

function addonNameOf(entry: NonNullable<LabFile['addons']>[number]): AddonName {
  return typeof entry === 'string' ? entry : entry.name;
}

/** The normalised lab: defaults filled in, nothing but the public fields. */
function normalise(file: LabFile, source: string | null): LabConfig {
  return {
    name: file.name ?? 'default',
    ...kubernetesFields(file.kubernetesVersion),
    ocmVersion: (file.ocmVersion === undefined ? undefined : resolveOcmVersion(file.ocmVersion)) ?? DEFAULT_OCM_VERSION,
    network: file.network?.cidr === undefined ? {} : { cidr: file.network.cidr },
    vpcs: file.vpcs.map((v) => ({ name: v.name })),
    clusters: file.clusters.map((c) => ({ name: c.name, vpc: c.vpc, hub: c.hub ?? false })),
    addons: file.addons ? file.addons.map(addonNameOf) : [...DEFAULT_ADDONS],
    addonImplementations: Object.fromEntries(
      (file.addons ?? []).flatMap((a) => (typeof a === 'object' && a.implementation === 'upstream' ? [[a.name, a.implementation]] : [])),
    ),
    source,
    clusterProfile: file.clusterProfile ?? file.featureGates?.hub?.[CLUSTER_PROFILE_GATE] ?? true,
    ...featureGatesOf(file.featureGates),
    ...(file.localCluster === undefined ? {} : { localCluster: file.localCluster }),
    ...(file.clusterProxy ? { clusterProxy: { entrypoint: file.clusterProxy.entrypoint } } : {}),
    ...(file.runtime ? { runtime: runtimeSection(file.runtime) } : {}),
    ...(file.artifacts ? { artifacts: file.artifacts } : {}),
    ...(file.mirrors ? { mirrorsFile: source ? path.resolve(path.dirname(source), file.mirrors) : file.mirrors } : {}),
    ...(file.ocmSource ? { ocmSource: source ? path.resolve(path.dirname(source), file.ocmSource) : file.ocmSource } : {}),
  };
}

/** The lab's gates, without ClusterProfile (the `clusterProfile` switch carries it) and without empty sides. */
function featureGatesOf(section: LabFile['featureGates']): Pick<LabConfig, 'featureGates'> {
  const { [CLUSTER_PROFILE_GATE]: _clusterProfile, ...hub } = section?.hub ?? {};
  const klusterlet = section?.klusterlet ?? {};
  const gates = {
    ...(Object.keys(hub).length ? { hub } : {}),
    ...(Object.keys(klusterlet).length ? { klusterlet } : {}),
  };
  return Object.keys(gates).length ? { featureGates: gates } : {};
}

function runtimeSection(section: NonNullable<LabFile['runtime']>): RuntimeSection {
  const { name, ...options } = section;
  return { ...(name === undefined ? {} : { name }), options: options as Record<string, Record<string, unknown>> };
}

/**
 * Parses and validates lab file text. Every problem (YAML syntax, shape, rules
 * across fields) is collected and reported in one InvalidInputError, one line
 * each, as `<sourceName>:<line>: <field path> = <value>: <what is wrong; what to do>`.
 * `source` of the result is `sourceName` when it is an absolute path, else null.
 * `addons` says which addons it may name and what each needs (the registry's; addon-vocabulary.ts).
 */
export function parseLabConfig(text: string, sourceName: string, addons: AddonVocabulary): LabConfig {
  if (text.length > MAX_LAB_FILE_CHARS) {
    fail(sourceName, [
      `${sourceName}: the file has ${text.length} characters, more than the ${MAX_LAB_FILE_CHARS} a lab file may have ` +
        '(the largest lab takes a few thousand); is it the right file?',
    ]);
  }
  const read = readYaml(text);
  if (!read.ok)
    fail(
      sourceName,
      read.problems.map((problem) => yamlProblemLine(sourceName, problem)),
    );
  const { doc, counter, value: raw } = read;
  if (raw === null || raw === undefined) {
    fail(sourceName, [`${sourceName}: the file is empty; a lab file needs at least apiVersion, kind, vpcs and clusters (see examples/default-lab.yaml)`]);
  }
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    fail(sourceName, [
      `${sourceName}:1: the file must be a YAML mapping with apiVersion, kind, vpcs and clusters, ` +
        `not ${Array.isArray(raw) ? 'a list' : `the value ${describeValue(raw)}`}`,
    ]);
  }

  const parsed = labFileSchema(addons).safeParse(raw);
  const problems = [
    ...(parsed.success ? [] : parsed.error.issues.flatMap((issue) => problemsOfIssue(issue, raw))),
    ...crossFieldProblems(raw as Record<string, unknown>, addons),
  ];
  if (problems.length || !parsed.success) {
    const positions = new SourcePositions(doc, counter);
    const located = problems.map((problem, order) => ({ problem, order, line: positions.lineOf(problem.path) }));
    located.sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || a.order - b.order);
    const lines = [...new Set(located.map(({ problem, line }) => `${sourceName}:${line ?? '?'}: ${describeProblem(problem)}`))];
    fail(sourceName, lines);
  }
  return normalise(parsed.data, path.isAbsolute(sourceName) ? sourceName : null);
}
