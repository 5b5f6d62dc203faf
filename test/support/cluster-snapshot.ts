import { kubectl } from './lab.js';

/** What the lab may add to a cluster and must take away again (names only; objects Kubernetes itself makes are not listed here). */
export const CLUSTER_KINDS = [
  'namespaces',
  'customresourcedefinitions',
  'clusterroles',
  'clusterrolebindings',
  'apiservices',
  'validatingwebhookconfigurations',
  'mutatingwebhookconfigurations',
  'roles',
  'rolebindings',
  'managedclusters',
];

/** What one cluster holds of `kinds`, by kind, as `namespace/name` (cluster-scoped: `name`), sorted. */
export type ClusterSnapshot = Record<string, string[]>;

/** The kinds of `wanted` the cluster serves (OCM's kinds only where OCM is installed). */
async function servedKinds(kubeconfig: string, context: string, wanted: readonly string[]): Promise<string[]> {
  const r = await kubectl(kubeconfig, ['--context', context, 'api-resources', '--verbs=list', '-o', 'name']);
  // An aggregated API not answering for a moment (cluster-gateway's, while a test restarts it) makes kubectl exit 1
  // after listing the rest; the list is still what the cluster serves.
  if (r.exitCode !== 0 && !r.stdout.trim()) throw new Error(`kubectl api-resources on ${context} exited ${r.exitCode}: ${r.stderr}`);
  const served = new Set(r.stdout.split('\n').map((line) => line.split('.')[0]));
  return wanted.filter((kind) => served.has(kind));
}

/**
 * `kinds` on one cluster in one `kubectl get` (a call per kind made a three-cluster snapshot take tens of seconds on
 * two loaded cores). Kubernetes' own per-namespace copies (`kube-root-ca.crt`, the `default` ServiceAccount) come with
 * namespaces, which are listed already.
 */
export async function kindsSnapshot(kubeconfig: string, context: string, kinds: readonly string[]): Promise<ClusterSnapshot> {
  const served = await servedKinds(kubeconfig, context, kinds);
  const r = await kubectl(kubeconfig, [
    '--context',
    context,
    'get',
    served.join(','),
    '-A',
    '-o',
    'jsonpath={range .items[*]}{.kind}{"\\t"}{.metadata.namespace}{"\\t"}{.metadata.name}{"\\n"}{end}',
  ]);
  if (r.exitCode !== 0) throw new Error(`kubectl get ${served.join(',')} -A on ${context} exited ${r.exitCode}: ${r.stderr}`);
  const out: ClusterSnapshot = {};
  for (const line of r.stdout.split('\n')) {
    if (!line) continue;
    const [kind = '', namespace = '', name = ''] = line.split('\t');
    if ((kind === 'ConfigMap' && name === 'kube-root-ca.crt') || (kind === 'ServiceAccount' && name === 'default')) continue;
    (out[kind] ??= []).push(namespace ? `${namespace}/${name}` : name);
  }
  for (const names of Object.values(out)) names.sort();
  return out;
}

/** What the lab may have added to one cluster, by name: equal before a lab and after its `down` when `down` took everything away. */
export function clusterSnapshot(kubeconfig: string, context: string): Promise<ClusterSnapshot> {
  return kindsSnapshot(kubeconfig, context, CLUSTER_KINDS);
}
