import { describe, expect, it } from 'vitest';
import { podNetworkHooks } from '../../src/nodelet/pod-network/index.js';
import type { Pod } from '../../src/nodelet/types.js';

describe('pod worker network hooks', () => {
  const calls: string[] = [];
  const hooks = podNetworkHooks({
    setup: async (uid, key) => {
      calls.push(`setup ${uid} ${key}`);
      return { netns: 'ocmlab.x.p-c-1', netnsPath: '/var/run/netns/ocmlab.x.p-c-1', podIP: '10.213.33.1' };
    },
    teardown: async (uid) => void calls.push(`teardown ${uid}`),
  });
  const pod = (hostNetwork: boolean): Pod =>
    ({ metadata: { namespace: 'demo', name: 'web', uid: 'u-1' }, spec: { containers: [], hostNetwork } }) as unknown as Pod;

  it('gives a pod its namespace and address, and a hostNetwork pod the node’s', async () => {
    expect(await hooks.attach(pod(false))).toEqual({ netnsPath: '/var/run/netns/ocmlab.x.p-c-1', podIP: '10.213.33.1' });
    expect(await hooks.attach(pod(true))).toEqual({});
    await hooks.detach(pod(false));
    await hooks.detach(pod(true));
    expect(calls).toEqual(['setup u-1 demo/web', 'teardown u-1']);
  });
});
