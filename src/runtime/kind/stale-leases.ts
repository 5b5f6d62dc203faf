import { dockerInspect } from '../../images/docker.js';
import { KubeClient } from '../../kube/client.js';
import { releaseLeasesOfDeadPods } from '../../kube/leader-leases.js';
import { waitUntil } from '../../kube/wait.js';

/** When the node container last started: every process of its cluster (control plane and pods) started after it. */
async function nodeStartedAt(container: string): Promise<Date | null> {
  const [node] = await dockerInspect<{ State?: { StartedAt?: string } }>('container', [container]);
  const started = Date.parse(node?.State?.StartedAt ?? '');
  return Number.isNaN(started) ? null : new Date(started);
}

/**
 * After a node container restarted (a Docker engine restart, a reboot: Docker starts it again by its
 * restart policy), the leader leases its pods held before are held by dead processes, and each
 * restarted controller would wait out its predecessor's lease (up to 2m43s for OCM's agents) before
 * it works. The leases last renewed before the node started are freed; on a node that did not
 * restart none is that old. Waits for the cluster's API server, which the node's restart took away too.
 */
export async function releaseLeasesFromBeforeNodeStart(kubeconfig: string, node: string, timeoutMs: number): Promise<string[]> {
  const started = await nodeStartedAt(node);
  if (!started) return [];
  const client = await KubeClient.fromKubeconfig(kubeconfig);
  try {
    await waitUntil(async () => ((await client.getText('/readyz')).trim() === 'ok' ? true : undefined), {
      what: `the API server of ${node} to be ready`,
      timeoutMs,
      intervalMs: 1_000,
    });
    return await releaseLeasesOfDeadPods(client, node, started);
  } finally {
    client.close();
  }
}
