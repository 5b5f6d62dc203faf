import { kubectl } from './lab.js';

interface Conditioned {
  metadata: { name: string; namespace?: string };
  status?: { conditions?: { type: string; status: string }[] };
}
const isTrue = (o: Conditioned, type: string) => o.status?.conditions?.some((c) => c.type === type && c.status === 'True') ?? false;

/** What the hub (context `hub` of `kubeconfig`) says: each ManagedCluster and whether it is Available; the Available addons as `cluster/addon`. */
export async function hubAvailability(kubeconfig: string): Promise<{ clusters: [string, boolean][]; availableAddons: string[] }> {
  const get = async (what: string[]) => {
    const r = await kubectl(kubeconfig, ['--context', 'hub', 'get', ...what, '-o', 'json']);
    if (r.exitCode !== 0) throw new Error(`kubectl get ${what.join(' ')} on the hub: ${r.stderr}`);
    return (JSON.parse(r.stdout) as { items: Conditioned[] }).items;
  };
  const clusters = (await get(['managedclusters'])).map((m): [string, boolean] => [m.metadata.name, isTrue(m, 'ManagedClusterConditionAvailable')]);
  const addons = (await get(['managedclusteraddons', '-A'])).filter((m) => isTrue(m, 'Available')).map((m) => `${m.metadata.namespace}/${m.metadata.name}`);
  return { clusters: clusters.sort(), availableAddons: addons.sort() };
}
