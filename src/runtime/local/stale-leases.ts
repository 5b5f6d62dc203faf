import path from 'node:path';
import { isStatus, type KubeClient } from '../../kube/client.js';
import { listContainers, runcAt } from '../../nodelet/oci/index.js';

interface LeaseJson {
  metadata: { name: string; namespace: string; resourceVersion: string };
  spec?: { holderIdentity?: string };
}

/** True when no container of the node runs: every pod process of it is gone (a reboot), not only its nodelet. */
export async function nodeHasNoLiveContainers(nodeletWorkDir: string): Promise<boolean> {
  const states = await listContainers(runcAt(path.join(nodeletWorkDir, 'runc')));
  return !states.some((s) => s.status === 'running' || s.status === 'paused');
}

/**
 * Deletes the leader leases held by the node's pods, when every one of their processes is gone.
 * Controllers name themselves `<hostname>_<uuid>` (client-go and library-go alike), the hostname
 * being the pod's name; a holder that died with its machine renews nothing, and its restarted
 * container would wait out the whole lease (OCM's agents: 137 s, "Worst non-graceful lease
 * acquisition is 2m43s") before it works again. A kubelet's machine after a reboot waits so too;
 * the lab knows the holders are dead, so it frees the leases. The delete is conditional on the
 * lease's resourceVersion: one a new holder took meanwhile is left alone. Returns namespace/name of each.
 */
export async function releaseLeasesOfDeadPods(client: KubeClient, node: string): Promise<string[]> {
  const pods = await client.request<{ items: { metadata: { name: string } }[] }>('GET', '/api/v1/pods', {
    query: { fieldSelector: `spec.nodeName=${node}` },
  });
  const podNames = new Set(pods.items.map((p) => p.metadata.name));
  const leases = await client.request<{ items: LeaseJson[] }>('GET', '/apis/coordination.k8s.io/v1/leases');
  const released: string[] = [];
  for (const lease of leases.items) {
    const holder = lease.spec?.holderIdentity ?? '';
    const separator = holder.lastIndexOf('_');
    if (separator <= 0 || !podNames.has(holder.slice(0, separator))) continue;
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
