import { kubectl } from './lab.js';

interface NodeJson {
  status?: { conditions?: { type: string; status: string }[] };
}
interface LeaseJson {
  spec?: { renewTime?: string };
}

/**
 * Whether node `node` of `context` is Ready as reported by a nodelet that ran after `since` (ms since the
 * epoch): the Ready condition True and the node's Lease renewed after `since`. The Lease, not the
 * condition's lastHeartbeatTime: that is in whole seconds, so a nodelet that restarts and reports within
 * the second of `since` looks like the old one, and it reports the full status only once a minute.
 */
export async function nodeReadySince(kubeconfig: string, context: string, node: string, since: number): Promise<boolean> {
  const [n, lease] = await Promise.all([
    kubectl(kubeconfig, ['--context', context, 'get', 'node', node, '-o', 'json']),
    kubectl(kubeconfig, ['--context', context, '-n', 'kube-node-lease', 'get', 'lease', node, '-o', 'json']),
  ]);
  if (n.exitCode !== 0 || lease.exitCode !== 0) return false;
  const ready = (JSON.parse(n.stdout) as NodeJson).status?.conditions?.find((c) => c.type === 'Ready');
  const renewed = Date.parse((JSON.parse(lease.stdout) as LeaseJson).spec?.renewTime ?? '');
  return ready?.status === 'True' && renewed > since;
}
