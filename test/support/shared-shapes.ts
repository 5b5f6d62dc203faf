import { DEFAULT_ADDONS, type LabConfig } from '../../src/config/index.js';
import { hubAndCluster1Config, testLabConfig } from './lab.js';
import type { TestLab } from './test-lab.js';
import { startRotationTraffic } from './msa-rotation.js';

/** A lab several test files share, read from and add to (test/support/test-lab.ts, `useSharedLab`). */
export interface SharedShapeDefinition {
  config(): LabConfig;
  /** The kube contexts whose objects are compared before and after each file. */
  contexts: readonly string[];
  /** Run once, right after the lab came up, before its snapshot is taken. */
  afterUp?(lab: TestLab): Promise<void>;
}

export const SHARED_SHAPES = {
  /**
   * The default lab as `up` makes it: hub, cluster1 and cluster2 in two VPCs with the default addons. A
   * ManagedServiceAccount with a 10-minute token and steady `proxy kubectl` traffic on it start with the
   * lab, so the 8 minutes until its rotation pass while the other files run (test/e2e/msa-rotation.test.ts).
   */
  default: {
    config: () => testLabConfig('e2e-shared-default', { addons: [...DEFAULT_ADDONS] }),
    contexts: ['hub', 'cluster1', 'cluster2'],
    afterUp: startRotationTraffic,
  },
  /**
   * The smallest addon lab: hub and cluster1 in two VPCs with the four addons its users need between them
   * (clusterprofile, cluster-gateway, shared-namespace, addon-parity; its last user is shared-hub-down). Each user
   * undoes what it changes lab-wide (an `ocm-tls-profile`, the ManagedProxyConfiguration, an addon's manager or
   * Deployment) in its afterAll; what would not come back (a ManagedCluster deleted, a cluster added and removed)
   * stays in a file with a lab of its own.
   */
  'hub-cluster1': {
    config: () => hubAndCluster1Config('e2e-shared-hub', ['cluster-proxy', 'managed-serviceaccount', 'cluster-gateway', 'helloworld']),
    contexts: ['hub', 'cluster1'],
  },
} satisfies Record<string, SharedShapeDefinition>;

export type SharedShape = keyof typeof SHARED_SHAPES;
