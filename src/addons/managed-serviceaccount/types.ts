import type { Condition, KubeObject } from '../../kube/objects.js';

export interface ManagedServiceAccount extends KubeObject {
  spec?: { rotation?: { enabled?: boolean; validity?: string }; ttlSecondsAfterCreation?: number };
  status?: {
    conditions?: Condition[];
    expirationTimestamp?: string;
    tokenSecretRef?: { name: string; lastRefreshTimestamp: string };
  };
}
