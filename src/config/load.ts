import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import YAML, { LineCounter } from 'yaml';
import { InvalidInputError } from '../errors.js';
import { defaultLabConfig } from './defaults.js';
import { closestField, formatPath, lineOf, lineOfKey, type FieldPath, type Problem } from './problems.js';
import { labFileSchema, type LabFile } from './schema.js';
import {
  DEFAULT_ADDONS,
  MAX_CLUSTERS,
  MAX_VPCS,
  SUPPORTED_KUBERNETES_VERSIONS,
  SUPPORTED_OCM_VERSIONS,
  type AddonName,
  type LabConfig,
} from './types.js';

const RESERVED_CLUSTER_NAMES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

function ipv4ToInt(ip: string): number {
  return ip.split('.').reduce((acc, octet) => acc * 256 + Number(octet), 0);
}

function isPrivateIpv4(ip: string): boolean {
  const n = ipv4ToInt(ip);
  const inRange = (base: string, bits: number) => Math.floor(n / 2 ** (32 - bits)) === Math.floor(ipv4ToInt(base) / 2 ** (32 - bits));
  return inRange('10.0.0.0', 8) || inRange('172.16.0.0', 12) || inRange('192.168.0.0', 16);
}

export function checkCidr(cidr: string): string | null {
  const m = /^(\d{1,3}(?:\.\d{1,3}){3})\/(\d{1,2})$/.exec(cidr);
  if (!m || net.isIPv4(m[1] as string) === false) return 'must be an IPv4 CIDR such as 10.213.0.0/16';
  const prefix = Number(m[2]);
  if (prefix < 16 || prefix > 24) return 'must have a prefix length from /16 to /24';
  if (!isPrivateIpv4(m[1] as string)) return 'must be a private range (10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16)';
  if (ipv4ToInt(m[1] as string) % 2 ** (32 - prefix) !== 0) return `has host bits set; did you mean ${networkAddress(m[1] as string, prefix)}/${prefix}?`;
  return null;
}

function networkAddress(ip: string, prefix: number): string {
  const n = ipv4ToInt(ip) - (ipv4ToInt(ip) % 2 ** (32 - prefix));
  return [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');
}

/** Rules that span fields: uniqueness, references, exactly one hub, limits. */
function semanticProblems(file: LabFile): Problem[] {
  const problems: Problem[] = [];
  const vpcNames = file.vpcs.map((v) => v.name);
  file.vpcs.forEach((v, i) => {
    if (vpcNames.indexOf(v.name) !== i) problems.push({ path: ['vpcs', i, 'name'], message: `duplicate VPC name '${v.name}'` });
  });
  const clusterNames = file.clusters.map((c) => c.name);
  file.clusters.forEach((c, i) => {
    if (clusterNames.indexOf(c.name) !== i) problems.push({ path: ['clusters', i, 'name'], message: `duplicate cluster name '${c.name}'` });
    if (RESERVED_CLUSTER_NAMES.includes(c.name) || c.name.startsWith('open-cluster-management')) {
      problems.push({ path: ['clusters', i, 'name'], message: `'${c.name}' is reserved (it is a namespace on every cluster); choose another name` });
    }
    if (!vpcNames.includes(c.vpc)) {
      problems.push({ path: ['clusters', i, 'vpc'], message: `unknown VPC '${c.vpc}'; known VPCs: ${vpcNames.join(', ')}` });
    }
  });
  const hubs = file.clusters.filter((c) => c.hub === true);
  if (hubs.length === 0) problems.push({ path: ['clusters'], message: 'no cluster is the hub; set hub: true on exactly one cluster' });
  if (hubs.length > 1) {
    problems.push({ path: ['clusters'], message: `${hubs.length} clusters are marked hub (${hubs.map((h) => h.name).join(', ')}); exactly one may be` });
  }
  file.vpcs.forEach((v, i) => {
    if (!file.clusters.some((c) => c.vpc === v.name)) problems.push({ path: ['vpcs', i, 'name'], message: `VPC '${v.name}' has no cluster; remove it or put a cluster in it` });
  });
  if (file.clusters.length > MAX_CLUSTERS) {
    problems.push({ path: ['clusters'], message: `${file.clusters.length} clusters is more than the ${MAX_CLUSTERS} a 2-core machine runs well` });
  }
  if (file.vpcs.length > MAX_VPCS) problems.push({ path: ['vpcs'], message: `${file.vpcs.length} VPCs is more than the ${MAX_VPCS} supported` });
  if (file.kubernetesVersion !== undefined && !(SUPPORTED_KUBERNETES_VERSIONS as readonly string[]).includes(file.kubernetesVersion)) {
    problems.push({ path: ['kubernetesVersion'], message: `'${file.kubernetesVersion}' is not supported; supported: ${SUPPORTED_KUBERNETES_VERSIONS.join(', ')}` });
  }
  if (file.ocmVersion !== undefined && !(SUPPORTED_OCM_VERSIONS as readonly string[]).includes(file.ocmVersion)) {
    problems.push({ path: ['ocmVersion'], message: `'${file.ocmVersion}' is not supported; supported: ${SUPPORTED_OCM_VERSIONS.join(', ')}` });
  }
  if (file.network?.cidr !== undefined) {
    const why = checkCidr(file.network.cidr);
    if (why) problems.push({ path: ['network', 'cidr'], message: `'${file.network.cidr}' ${why}` });
  }
  return problems;
}

function valueAt(root: unknown, path: FieldPath): unknown {
  return path.reduce<unknown>((node, key) => (node && typeof node === 'object' ? (node as Record<string | number, unknown>)[key] : undefined), root);
}

function describeValue(v: unknown): string {
  if (v === undefined) return 'nothing';
  const text = JSON.stringify(v);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** Parses and validates a lab file; every problem is reported at once, with its line. */
export function parseLabConfig(text: string, sourceName: string): LabConfig {
  const counter = new LineCounter();
  const doc = YAML.parseDocument(text, { lineCounter: counter, prettyErrors: true, uniqueKeys: true });
  const fail = (lines: string[]) => {
    throw new InvalidInputError(`invalid lab file ${sourceName}:\n${lines.map((l) => `  ${l}`).join('\n')}`, {
      hint: 'fix the lab file (see docs/lab-file.md or examples/default-lab.yaml); nothing was created',
    });
  };
  if (doc.errors.length) {
    fail(doc.errors.map((e) => `${sourceName}:${e.linePos?.[0]?.line ?? '?'}:${e.linePos?.[0]?.col ?? '?'}: YAML syntax: ${e.message.split('\n')[0]}`));
  }
  const raw: unknown = doc.toJS();
  if (raw === null || raw === undefined) fail([`${sourceName}: the file is empty; a lab file needs apiVersion, kind, vpcs and clusters`]);
  if (typeof raw !== 'object' || Array.isArray(raw)) fail([`${sourceName}:1: the file must be a YAML mapping (apiVersion, kind, vpcs, clusters, …)`]);

  const at = (path: FieldPath) => `${sourceName}:${lineOf(doc, counter, path) ?? '?'}`;
  const parsed = labFileSchema.safeParse(raw);
  if (!parsed.success) {
    const lines: string[] = [];
    for (const issue of parsed.error.issues) {
      const path = issue.path as FieldPath;
      if (issue.code === 'unrecognized_keys') {
        for (const key of issue.keys) {
          const suggestion = closestField(path, key);
          const line = lineOfKey(doc, counter, path, key);
          lines.push(`${sourceName}:${line ?? '?'}: ${formatPath([...path, key])}: unknown field${suggestion ? `; did you mean '${suggestion}'?` : ''}`);
        }
      } else {
        lines.push(`${at(path)}: ${formatPath(path) || '(top level)'}: ${issue.message} (got ${describeValue(valueAt(raw, path))})`);
      }
    }
    fail(lines);
  }
  const file = (parsed as { data: LabFile }).data;
  const problems = semanticProblems(file);
  if (problems.length) fail(problems.map((p) => `${at(p.path)}: ${formatPath(p.path)}: ${p.message}`));

  const defaults = defaultLabConfig();
  return {
    name: file.name ?? defaults.name,
    kubernetesVersion: file.kubernetesVersion ?? defaults.kubernetesVersion,
    ocmVersion: file.ocmVersion ?? defaults.ocmVersion,
    network: file.network?.cidr ? { cidr: file.network.cidr } : {},
    vpcs: file.vpcs.map((v) => ({ name: v.name })),
    clusters: file.clusters.map((c) => ({ name: c.name, vpc: c.vpc, hub: c.hub ?? false })),
    addons: (file.addons as AddonName[] | undefined) ?? [...DEFAULT_ADDONS],
    source: path.isAbsolute(sourceName) ? sourceName : null,
  };
}

/** The lab file at `file`, or the default lab when no file is given. */
export async function loadLabConfig(file?: string): Promise<LabConfig> {
  if (file === undefined) return defaultLabConfig();
  const absolute = path.resolve(file);
  let text: string;
  try {
    text = await fs.readFile(absolute, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new InvalidInputError(`cannot read lab file ${absolute}: ${code === 'ENOENT' ? 'no such file' : String((err as Error).message)}`, {
      hint: 'pass --config with the path of a lab file, or omit it for the default lab',
    });
  }
  return parseLabConfig(text, absolute);
}

/** YAML text of a lab, parseable by parseLabConfig. */
export function renderLabConfig(config: LabConfig): string {
  return YAML.stringify({
    apiVersion: 'ocm-lab/v1alpha1',
    kind: 'Lab',
    name: config.name,
    kubernetesVersion: config.kubernetesVersion,
    ocmVersion: config.ocmVersion,
    ...(config.network.cidr ? { network: { cidr: config.network.cidr } } : {}),
    vpcs: config.vpcs.map((v) => ({ name: v.name })),
    clusters: config.clusters.map((c) => (c.hub ? { name: c.name, vpc: c.vpc, hub: true } : { name: c.name, vpc: c.vpc })),
    addons: config.addons,
  });
}
