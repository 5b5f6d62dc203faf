import { isStatus, type KubeClient } from '../../kube/client.js';
import { LEASE_DURATION_SECONDS, LEASE_RENEW_MS } from './names.js';

/** MicroTime as the API server expects it in a Lease: RFC 3339 with microseconds. */
export function microTime(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/**
 * Renews the Lease named after the addon in its install namespace on the managed
 * cluster; the cluster's registration agent turns a fresh Lease into the addon's
 * Available condition on the hub (lease health mode).
 */
export async function renewAddonLease(spoke: KubeClient, namespace: string, addon: string, holder: string, now = new Date()): Promise<void> {
  const path = `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/${addon}`;
  try {
    const lease = await spoke.get<{ metadata: Record<string, unknown>; spec: Record<string, unknown> }>(path);
    await spoke.put(path, { ...lease, spec: { ...lease.spec, holderIdentity: holder, leaseDurationSeconds: LEASE_DURATION_SECONDS, renewTime: microTime(now) } });
  } catch (err) {
    if (!isStatus(err, 404)) throw err;
    await spoke.post(`/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`, {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: addon, namespace },
      spec: { holderIdentity: holder, leaseDurationSeconds: LEASE_DURATION_SECONDS, acquireTime: microTime(now), renewTime: microTime(now) },
    });
  }
}

/** Renews the addon Lease now and every LEASE_RENEW_MS until stopped; failures are logged and retried. */
export function startLeaseRenewal(spoke: KubeClient, namespace: string, addon: string, holder: string, log: (line: string) => void): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const tick = async (): Promise<void> => {
    try {
      await renewAddonLease(spoke, namespace, addon, holder);
    } catch (err) {
      log(`lease ${namespace}/${addon}: ${(err as Error).message}`);
    }
    if (!stopped) timer = setTimeout(() => void tick(), LEASE_RENEW_MS);
  };
  void tick();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
