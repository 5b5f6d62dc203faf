import type { Pod } from '../types.js';
import type { PodNetwork } from './pod-network.js';

/**
 * The pod worker's network hooks (PodNetworkHooks in pod-worker.ts) backed by a
 * PodNetwork: a pod gets its own namespace and address, a hostNetwork pod keeps the
 * node's (an empty answer: containers join the nodelet's namespace).
 */
export function podNetworkHooks(network: Pick<PodNetwork, 'setup' | 'teardown'>): {
  attach(pod: Pod): Promise<{ netnsPath?: string; podIP?: string }>;
  detach(pod: Pod): Promise<void>;
} {
  const uidOf = (pod: Pod): string => {
    if (!pod.metadata.uid) throw new Error(`pod ${pod.metadata.namespace ?? 'default'}/${pod.metadata.name} has no UID`);
    return pod.metadata.uid;
  };
  return {
    async attach(pod) {
      if (pod.spec?.hostNetwork) return {};
      const { netnsPath, podIP } = await network.setup(uidOf(pod), `${pod.metadata.namespace ?? 'default'}/${pod.metadata.name}`);
      return { netnsPath, podIP };
    },
    async detach(pod) {
      if (pod.spec?.hostNetwork || !pod.metadata.uid) return;
      await network.teardown(pod.metadata.uid);
    },
  };
}
