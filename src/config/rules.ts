import os from 'node:os';
import type { Problem } from './problems.js';
import { CLUSTER_PROFILE_GATE, unknownGateMessage, unknownGates, type GateSide } from './feature-gates.js';
import { resolveOcmVersion } from './ocm-version.js';
import {
  LOCAL_CLUSTER_NAME,
  MAX_CLUSTERS,
  MAX_VPCS,
  RESERVED_CLUSTER_NAMES,
  RESERVED_CLUSTER_PREFIX,
  UPSTREAM_ADDONS,
  isUpstreamAddon,
  type AddonVocabulary,
} from './types.js';

type Entry = Record<string, unknown>;

/** The entries of a list field that are mappings, with their index; nothing when the field is not a list. */
function entries(root: Entry, field: string): { entry: Entry; index: number }[] {
  const list = root[field];
  if (!Array.isArray(list)) return [];
  return list.flatMap((entry: unknown, index) =>
    entry !== null && typeof entry === 'object' && !Array.isArray(entry) ? [{ entry: entry as Entry, index }] : [],
  );
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

function coreCount(): number {
  return typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
}

/** The index of each name's first entry (entries without a string name are left out). */
function firstIndexByName(list: { entry: Entry; index: number }[]): Map<string, number> {
  const first = new Map<string, number>();
  for (const { entry, index } of list) {
    const name = str(entry.name);
    if (name !== undefined && !first.has(name)) first.set(name, index);
  }
  return first;
}

/**
 * Rules that span fields: unique names, clusters in declared VPCs, exactly one
 * hub, no empty VPC, reserved names, size limits, addons listed once.
 * Works on the file as parsed (possibly with wrongly shaped fields, which are
 * skipped here and reported by the schema) so all problems come out together.
 */
export function crossFieldProblems(root: Entry, vocabulary: AddonVocabulary): Problem[] {
  const vpcs = entries(root, 'vpcs');
  const clusters = entries(root, 'clusters');
  const firstVpc = firstIndexByName(vpcs);
  const firstCluster = firstIndexByName(clusters);
  return [
    ...duplicateVpcNames(vpcs, firstVpc),
    ...clusters.flatMap((c) => [...clusterNameProblems(c, firstCluster), ...unknownVpc(root, c, firstVpc)]),
    ...hubCount(clusters),
    ...emptyVpcs(vpcs, clusters, firstVpc),
    ...sizeLimits(root),
    ...addonProblems(root, vocabulary),
    ...clusterProxyProblems(root),
    ...featureGateProblems(root),
  ];
}

/**
 * `featureGates:`: every gate one the file's ocmVersion knows on that side (a file that names none may be brought
 * up with --ocm-version: `up` checks its gates against the line it runs), and ClusterProfile not set against
 * `clusterProfile:`, the same switch.
 */
function featureGateProblems(root: Entry): Problem[] {
  const section = root.featureGates;
  if (section === null || typeof section !== 'object' || Array.isArray(section)) return [];
  const given = str(root.ocmVersion);
  // The schema reports a version it does not know.
  const ocmVersion = given === undefined ? undefined : resolveOcmVersion(given);
  const problems: Problem[] = [];
  for (const side of ocmVersion === undefined ? [] : (['hub', 'klusterlet'] as GateSide[])) {
    const settings = (section as Entry)[side];
    if (settings === null || typeof settings !== 'object' || Array.isArray(settings)) continue;
    for (const gate of unknownGates(ocmVersion!, side, settings as Record<string, boolean>))
      problems.push({ path: ['featureGates', side, gate], value: (settings as Entry)[gate], message: unknownGateMessage(ocmVersion!, side, [gate]) });
  }
  const hub = (section as Entry).hub as Entry | undefined;
  const profileGate = hub && typeof hub === 'object' ? hub[CLUSTER_PROFILE_GATE] : undefined;
  if (typeof profileGate === 'boolean' && typeof root.clusterProfile === 'boolean' && profileGate !== root.clusterProfile)
    problems.push({
      path: ['featureGates', 'hub', CLUSTER_PROFILE_GATE],
      value: profileGate,
      message: `is the gate clusterProfile: ${String(root.clusterProfile)} sets; remove one of the two or make them agree`,
    });
  return problems;
}

/** `clusterProxy:` configures ocm-lab's cluster-proxy: the lab must run it (upstream's build reads its own chart values). */
function clusterProxyProblems(root: Entry): Problem[] {
  const section = root.clusterProxy;
  if (section === undefined || section === null || !Array.isArray(root.addons)) return [];
  const entry = root.addons.find((a: unknown) => a === 'cluster-proxy' || (typeof a === 'object' && a !== null && (a as Entry).name === 'cluster-proxy'));
  const why =
    entry === undefined
      ? 'the lab does not run cluster-proxy; add it to addons or remove clusterProxy'
      : typeof entry === 'object' && (entry as Entry).implementation === 'upstream'
        ? "applies to ocm-lab's cluster-proxy only; upstream's build keeps its own entrypoint (edit its ManagedProxyConfiguration) or remove clusterProxy"
        : undefined;
  return why ? [{ path: ['clusterProxy'], value: section, message: why }] : [];
}

function duplicateVpcNames(vpcs: { entry: Entry; index: number }[], firstVpc: Map<string, number>): Problem[] {
  const problems: Problem[] = [];
  for (const { entry, index } of vpcs) {
    const name = str(entry.name);
    if (name === undefined) continue;
    const first = firstVpc.get(name)!;
    if (first !== index)
      problems.push({ path: ['vpcs', index, 'name'], value: name, message: `duplicate VPC name (also vpcs[${first}]); give each VPC its own name` });
  }
  return problems;
}

/** A cluster's name: unique, and not a name every cluster already has a namespace of. */
function clusterNameProblems({ entry, index }: { entry: Entry; index: number }, firstCluster: Map<string, number>): Problem[] {
  const problems: Problem[] = [];
  const name = str(entry.name);
  if (name === undefined) return problems;
  const first = firstCluster.get(name)!;
  if (first !== index)
    problems.push({
      path: ['clusters', index, 'name'],
      value: name,
      message: `duplicate cluster name (also clusters[${first}]); give each cluster its own name`,
    });
  if (name === LOCAL_CLUSTER_NAME) {
    problems.push({
      path: ['clusters', index, 'name'],
      value: name,
      message: 'is the ManagedCluster name of the hub joined to itself (localCluster, on by default for OCM v1.3.x); choose another name',
    });
  }
  if ((RESERVED_CLUSTER_NAMES as readonly string[]).includes(name) || name.startsWith(RESERVED_CLUSTER_PREFIX)) {
    problems.push({
      path: ['clusters', index, 'name'],
      value: name,
      message:
        'is reserved: cluster names become kubeconfig contexts and hub namespaces, ' +
        `and ${RESERVED_CLUSTER_NAMES.join(', ')} and ${RESERVED_CLUSTER_PREFIX}* are namespaces every cluster has; choose another name`,
    });
  }
  return problems;
}

/** A cluster's VPC is one listed under vpcs (when vpcs is a list at all). */
function unknownVpc(root: Entry, { entry, index }: { entry: Entry; index: number }, firstVpc: Map<string, number>): Problem[] {
  const vpc = str(entry.vpc);
  if (vpc === undefined || !Array.isArray(root.vpcs) || firstVpc.has(vpc)) return [];
  const vpcNames = [...firstVpc.keys()];
  return [
    {
      path: ['clusters', index, 'vpc'],
      value: vpc,
      message: vpcNames.length ? `unknown VPC; use one of the VPCs listed under vpcs: ${vpcNames.join(', ')}` : 'unknown VPC; list it under vpcs',
    },
  ];
}

/** Exactly one hub (when there are clusters at all). */
function hubCount(clusters: { entry: Entry; index: number }[]): Problem[] {
  if (clusters.length === 0) return [];
  const hubs = clusters.filter(({ entry }) => entry.hub === true);
  if (hubs.length === 0) return [{ path: ['clusters'], message: 'no cluster is the hub; add hub: true to exactly one cluster' }];
  if (hubs.length === 1) return [];
  const names = hubs.map(({ entry, index }) => str(entry.name) ?? `clusters[${index}]`);
  return [
    {
      path: ['clusters', hubs[1]!.index, 'hub'],
      value: true,
      message: `${hubs.length} clusters are marked hub (${names.join(', ')}); exactly one may be: remove hub: true from all but one`,
    },
  ];
}

/** Every VPC (its first entry, when named twice) holds a cluster. */
function emptyVpcs(vpcs: { entry: Entry; index: number }[], clusters: { entry: Entry; index: number }[], firstVpc: Map<string, number>): Problem[] {
  const problems: Problem[] = [];
  for (const { entry, index } of vpcs) {
    const name = str(entry.name);
    if (name === undefined || firstVpc.get(name) !== index) continue;
    if (!clusters.some(({ entry: c }) => c.vpc === name)) {
      problems.push({ path: ['vpcs', index, 'name'], value: name, message: `VPC has no cluster (a typo?); remove it or set vpc: ${name} on a cluster` });
    }
  }
  return problems;
}

function sizeLimits(root: Entry): Problem[] {
  const problems: Problem[] = [];
  const cores = coreCount();
  if (Array.isArray(root.clusters) && root.clusters.length > MAX_CLUSTERS) {
    problems.push({
      path: ['clusters'],
      message:
        `${root.clusters.length} clusters are more than the ${MAX_CLUSTERS} a lab may have ` +
        `(${MAX_VPCS} VPCs of 15 clusters, the lab range's layout); remove ${root.clusters.length - MAX_CLUSTERS}`,
    });
  }
  if (Array.isArray(root.vpcs) && root.vpcs.length > MAX_VPCS) {
    problems.push({
      path: ['vpcs'],
      message:
        `${root.vpcs.length} VPCs are more than the ${MAX_VPCS} a lab may have (this machine has ${cores} CPU cores); ` +
        `remove ${root.vpcs.length - MAX_VPCS} or put more clusters in one VPC`,
    });
  }
  return problems;
}

/** Addons: each listed once, with the addons it needs, and upstream's implementation only where there is one. */
function addonProblems(root: Entry, vocabulary: AddonVocabulary): Problem[] {
  if (!Array.isArray(root.addons)) return [];
  const problems: Problem[] = [];
  // An entry is a name or {name, implementation}; the schema reports other shapes.
  const nameOf = (entry: unknown): string | undefined =>
    typeof entry === 'string' ? entry : entry !== null && typeof entry === 'object' ? str((entry as Entry).name) : undefined;
  const names = root.addons.map(nameOf);
  const seen = new Map<string, number>();
  root.addons.forEach((entry: unknown, index) => {
    const addon = names[index];
    if (addon === undefined) return;
    const at = typeof entry === 'string' ? ['addons', index] : ['addons', index, 'name'];
    const first = seen.get(addon);
    if (first === undefined) seen.set(addon, index);
    else problems.push({ path: at, value: addon, message: `listed twice (also addons[${first}]); list each addon once` });
    if (first === undefined) problems.push(...missingRequirements(vocabulary, addon, names, at));
    const implementation = typeof entry === 'object' && entry !== null ? (entry as Entry).implementation : undefined;
    if (implementation === 'upstream' && !isUpstreamAddon(addon)) {
      problems.push({
        path: ['addons', index, 'implementation'],
        value: implementation,
        message: `${addon} runs only ocm-lab's implementation; upstream's can stand in for ${UPSTREAM_ADDONS.join(' and ')} only`,
      });
    }
  });
  return problems;
}

function missingRequirements(vocabulary: AddonVocabulary, addon: string, names: (string | undefined)[], at: (string | number)[]): Problem[] {
  // Only known addons have requirements: a lookup by any name would find Object's own properties ('constructor').
  const requirement = vocabulary.names.includes(addon) ? vocabulary.requires(addon) : undefined;
  const missing = (requirement?.addons ?? []).filter((n) => !names.includes(n));
  if (!requirement || !missing.length) return [];
  return [{ path: at, value: addon, message: `needs ${missing.join(' and ')} in the same lab (${requirement.why}); add ${missing.join(', ')}` }];
}
