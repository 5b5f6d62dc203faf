import type { KubeObject } from 'ocm-lab/addon-framework';

/** Bump it, save, and watch `addon dev` put it on every cluster. */
export const VERSION = 'v1';

/** The ConfigMap the agent keeps in its cluster's namespace on the hub: which code runs there. */
export function reportConfigMap(cluster: string, version: string, codeHash: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: '__NAME__-report', namespace: cluster },
    data: { cluster, version, codeHash },
  };
}
