import { isStatus, type KubeClient } from './client.js';

interface LeaseJson {
  metadata: { name: string; namespace: string; resourceVersion: string };
  spec?: { holderIdentity?: string; renewTime?: string };
}

/**
 * Deletes the leader leases held by processes of one node that are known to be dead. Controllers
 * name themselves `<hostname>_<uuid>` (client-go and library-go alike), the hostname being the pod's
 * name (or the node's, for host-network static pods); a holder that died with its machine renews
 * nothing, and its restarted container would wait out the whole lease (OCM's agents: 137 s, "Worst
 * non-graceful lease acquisition is 2m43s") before it works again. `renewedBefore`: only leases last
 * renewed before that moment (the node's boot: every process of the node renewing after it is alive).
 * The delete is conditional on the lease's resourceVersion: one a new holder took meanwhile is left
 * alone. Returns namespace/name of each lease deleted.
 */
export async function releaseLeasesOfDeadPods(client: KubeClient, node: string, renewedBefore?: Date): Promise<string[]> {
  const pods = await client.request<{ items: { metadata: { name: string } }[] }>('GET', '/api/v1/pods', {
    query: { fieldSelector: `spec.nodeName=${node}` },
  });
  // The node's own name holds leases for its host-network static pods (kube-controller-manager, kube-scheduler): dead too when renewed before its boot.
  const holders = new Set([...(renewedBefore ? [node] : []), ...pods.items.map((p) => p.metadata.name)]);
  const leases = await client.request<{ items: LeaseJson[] }>('GET', '/apis/coordination.k8s.io/v1/leases');
  const released: string[] = [];
  for (const lease of leases.items) {
    const holder = lease.spec?.holderIdentity ?? '';
    const separator = holder.lastIndexOf('_');
    if (separator <= 0 || !holders.has(holder.slice(0, separator))) continue;
    const renewed = Date.parse(lease.spec?.renewTime ?? '');
    if (renewedBefore && !(renewed < renewedBefore.getTime())) continue;
    const { name, namespace, resourceVersion } = lease.metadata;
    try {
      await client.request('DELETE', `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/${name}`, {
        body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { resourceVersion } },
      });
      released.push(`${namespace}/${name}`);
    } catch (err) {
      if (!isStatus(err, 404) && !isStatus(err, 409)) throw err;
    }
  }
  return released;
}
