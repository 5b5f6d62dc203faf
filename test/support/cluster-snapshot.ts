import { kubectl } from './lab.js';

/** What the lab may add to a cluster and must take away again (names only; objects Kubernetes itself makes are not listed here). */
const KINDS = [
  'namespaces',
  'customresourcedefinitions',
  'clusterroles',
  'clusterrolebindings',
  'apiservices',
  'validatingwebhookconfigurations',
  'mutatingwebhookconfigurations',
];

/** What the lab may have added to one cluster, by name: equal before a lab and after its `down` when `down` took everything away. */
export async function clusterSnapshot(kubeconfig: string, context: string): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const kind of KINDS) {
    const r = await kubectl(kubeconfig, ['--context', context, 'get', kind, '-o', 'name']);
    if (r.exitCode !== 0) throw new Error(`kubectl get ${kind} on ${context}: ${r.stderr}`);
    out[kind] = r.stdout.split('\n').filter(Boolean).sort();
  }
  const rb = await kubectl(kubeconfig, [
    '--context',
    context,
    'get',
    'rolebindings,roles',
    '-A',
    '-o',
    'jsonpath={range .items[*]}{.kind}/{.metadata.namespace}/{.metadata.name}{"\\n"}{end}',
  ]);
  out.rolebindings = rb.stdout.split('\n').filter(Boolean).sort();
  // Without the ManagedCluster API there are none.
  const mc = await kubectl(kubeconfig, ['--context', context, 'get', 'managedclusters', '-o', 'name']);
  out.managedclusters = mc.exitCode === 0 ? mc.stdout.split('\n').filter(Boolean).sort() : [];
  return out;
}
