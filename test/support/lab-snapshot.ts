import { CLUSTER_KINDS, kindsSnapshot, type ClusterSnapshot } from './cluster-snapshot.js';

/** What a test file may add to a lab's clusters, by cluster and kind: names only, sorted. */
export type LabSnapshot = Record<string, ClusterSnapshot>;

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

/** Each context's snapshot, taken side by side (one `kubectl get` each). */
export async function labSnapshot(kubeconfig: string, contexts: readonly string[]): Promise<LabSnapshot> {
  const taken = await Promise.all(contexts.map((context) => kindsSnapshot(kubeconfig, context, [...CLUSTER_KINDS, ...NAMESPACED])));
  // Every cluster has namespaces: a snapshot without them read nothing, and would find nothing left behind.
  const empty = contexts.filter((_, i) => !taken[i]?.Namespace?.length);
  if (empty.length) throw new Error(`the lab snapshot listed no Namespace on ${empty.join(', ')}: kubectl's list output was not read`);
  return Object.fromEntries(contexts.map((context, i) => [context, taken[i] as ClusterSnapshot]));
}

/** What `after` has that `before` has not, and the other way round, one line per object: "+ hub Deployment ns/name". */
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
