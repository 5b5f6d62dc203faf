import { describe, expect, it } from 'vitest';
import type { KubeClient } from '../../src/kube/client.js';
import { releaseLeasesOfDeadPods } from '../../src/kube/leader-leases.js';

/** A client that answers the two lists and records the deletes (with their preconditions). */
function fakeClient(pods: string[], leases: { name: string; holder: string; renewTime: string }[]) {
  const deleted: string[] = [];
  const client = {
    request: async (method: string, path: string, options?: { body?: { preconditions?: { resourceVersion?: string } } }) => {
      if (method === 'GET' && path === '/api/v1/pods') return { items: pods.map((name) => ({ metadata: { name } })) };
      if (method === 'GET') {
        return {
          items: leases.map((l, i) => ({
            metadata: { name: l.name, namespace: 'ns', resourceVersion: String(i + 1) },
            spec: { holderIdentity: l.holder, renewTime: l.renewTime },
          })),
        };
      }
      deleted.push(`${path.split('/').pop()}@${options?.body?.preconditions?.resourceVersion}`);
      return {};
    },
  } as unknown as KubeClient;
  return { client, deleted };
}

describe('releaseLeasesOfDeadPods', () => {
  const leases = [
    { name: 'agent-lock', holder: 'agent-7f9_1a2b', renewTime: '2026-11-26T15:00:00.000000Z' },
    { name: 'renewed-since', holder: 'agent-7f9_3c4d', renewTime: '2026-11-26T15:10:00.000000Z' },
    { name: 'kube-controller-manager', holder: 'lab-hub-control-plane_5e6f', renewTime: '2026-11-26T15:00:00.000000Z' },
    { name: 'other-node', holder: 'elsewhere_7a8b', renewTime: '2026-11-26T15:00:00.000000Z' },
  ];

  it('after a node start: frees the leases its pods and the node itself last renewed before it, on their resourceVersion', async () => {
    const { client, deleted } = fakeClient(['agent-7f9'], leases);
    const released = await releaseLeasesOfDeadPods(client, 'lab-hub-control-plane', new Date('2026-11-26T15:05:00Z'));
    expect(released).toEqual(['ns/agent-lock', 'ns/kube-controller-manager']);
    expect(deleted).toEqual(['agent-lock@1', 'kube-controller-manager@3']);
  });

  it('without a start time (every container known dead): every lease a pod of the node holds, none the node name holds', async () => {
    const { client } = fakeClient(['agent-7f9'], leases);
    expect(await releaseLeasesOfDeadPods(client, 'lab-hub-control-plane')).toEqual(['ns/agent-lock', 'ns/renewed-since']);
  });
});
