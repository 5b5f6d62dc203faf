import { NotReadyError } from '../../errors.js';
import { KubeClient } from '../../kube/client.js';
import { getOrNull, type KubeObject } from '../../kube/objects.js';
import type { LabCluster } from '../../runtime/types.js';
import { UPSTREAM_AGENT_DEPLOYMENT, type UpstreamAddon } from './names.js';
import { sleep } from '../../kube/wait.js';

type Deployment = KubeObject & {
  spec?: { replicas?: number };
  status?: { readyReplicas?: number; updatedReplicas?: number; observedGeneration?: number };
  metadata: { generation?: number };
};

/**
 * Waits until upstream's agent Deployment is ready on every spoke. Upstream's
 * ManagedClusterAddOn turns Available from the agent's lease, before its
 * proxy-agent container is ready: a tunnel asked for then finds no agent.
 */
export async function waitForUpstreamAgents(
  addon: UpstreamAddon,
  spokes: readonly LabCluster[],
  timeoutMs: number,
  progress: (line: string) => void,
): Promise<void> {
  const { namespace, name } = UPSTREAM_AGENT_DEPLOYMENT[addon];
  const deadline = Date.now() + timeoutMs;
  for (const spoke of spokes) {
    const client = await KubeClient.fromKubeconfig(spoke.kubeconfig);
    try {
      for (;;) {
        const d = await getOrNull<Deployment>(client, `/apis/apps/v1/namespaces/${namespace}/deployments/${name}`);
        const want = d?.spec?.replicas ?? 1;
        const current = d && (d.status?.observedGeneration ?? 0) >= (d.metadata.generation ?? 0);
        if (current && (d.status?.readyReplicas ?? 0) >= want && (d.status?.updatedReplicas ?? 0) >= want) break;
        const state = d ? `${d.status?.readyReplicas ?? 0}/${want} ready` : 'not created yet';
        if (Date.now() > deadline)
          throw new NotReadyError(`upstream ${addon}: Deployment ${namespace}/${name} on ${spoke.name} is ${state} after ${Math.round(timeoutMs / 1000)} s`);
        progress(`waiting for ${name} on ${spoke.name} (${state})`);
        await sleep(500);
      }
    } finally {
      client.close();
    }
  }
}
