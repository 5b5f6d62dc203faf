import { clusterSnapshot } from './cluster-snapshot.js';
import { kubectl } from './lab.js';

/** What a test file may add to a lab's clusters, by cluster and kind: names only, sorted. */
export type LabSnapshot = Record<string, Record<string, string[]>>;

/**
 * Namespaced kinds a test file adds to and must take away again, beside cluster-snapshot.ts's cluster-wide ones:
 * workloads on every cluster; OCM's and the addons' objects where the API serves them (the hub).
 */
const NAMESPACED = [
  'deployments',
  'services',
  'serviceaccounts',
  'configmaps',
  'managedclusteraddons',
  'clustermanagementaddons',
  'placements',
  'manifestworks',
  'managedserviceaccounts',
  'addondeploymentconfigs',
  'managedclustersetbindings',
  'clustergateways',
];

async function names(kubeconfig: string, context: string, kind: string): Promise<string[] | undefined> {
  const r = await kubectl(kubeconfig, [
    '--context',
    context,
    'get',
    kind,
    '-A',
    '-o',
    'jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name}{"\\n"}{end}',
  ]);
  // A kind this cluster does not serve (OCM's on a spoke) has nothing to leave behind.
  if (r.exitCode !== 0) {
    if (/the server doesn't have a resource type/.test(r.stderr)) return undefined;
    throw new Error(`kubectl --context ${context} get ${kind} -A exited ${r.exitCode}: ${r.stderr}`);
  }
  // Pods' own kube-root-ca.crt copies and token-less defaults come with namespaces, which are compared already.
  return r.stdout
    .split('\n')
    .filter((l) => l && !l.endsWith('/kube-root-ca.crt') && !l.endsWith('/default'))
    .sort();
}

export async function labSnapshot(kubeconfig: string, contexts: readonly string[]): Promise<LabSnapshot> {
  const out: LabSnapshot = {};
  for (const context of contexts) {
    const cluster = await clusterSnapshot(kubeconfig, context);
    for (const kind of NAMESPACED) {
      const found = await names(kubeconfig, context, kind);
      if (found) cluster[kind] = found;
    }
    out[context] = cluster;
  }
  return out;
}

/** What `after` has that `before` has not, and the other way round, one line per object: "+ hub deployments ns/name". */
export function snapshotDifference(before: LabSnapshot, after: LabSnapshot): string[] {
  const lines: string[] = [];
  for (const context of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const [b, a] = [before[context] ?? {}, after[context] ?? {}];
    for (const kind of new Set([...Object.keys(b), ...Object.keys(a)])) {
      const [was, is] = [new Set(b[kind] ?? []), new Set(a[kind] ?? [])];
      for (const n of is) if (!was.has(n)) lines.push(`+ ${context} ${kind} ${n}`);
      for (const n of was) if (!is.has(n)) lines.push(`- ${context} ${kind} ${n}`);
    }
  }
  return lines;
}
