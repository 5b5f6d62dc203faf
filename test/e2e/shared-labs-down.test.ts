import { describe, expect, it } from 'vitest';
import { stopRotationTraffic } from '../support/msa-rotation.js';
import { cmdline } from '../support/process.js';
import { containerPids, downLeavesNothing, MSA_NS, PROXY_NS } from '../support/shared-lab-down.js';
import { useSharedLab } from '../support/test-lab.js';

/**
 * The shared default lab's last user (test/support/shared-lab-sequencer.ts puts this file last): every file
 * before it left the lab as it came up (useSharedLab checks), and `down` takes all of it away.
 */
describe('the shared default lab comes down clean', () => {
  const lab = useSharedLab('default', 'test/e2e/shared-labs-down.test.ts', { last: true });

  it('down stops every addon process and leaves nothing behind', async () => {
    const pids = await containerPids(lab, [
      ['hub', ['open-cluster-management-addon', PROXY_NS, 'open-cluster-management-cluster-gateway']],
      ['cluster1', [PROXY_NS, MSA_NS]],
      ['cluster2', [PROXY_NS, MSA_NS]],
    ]);
    // Hub: three addon managers, the proxy-server, cluster-proxy's user server and the gateway; each spoke:
    // proxy-agent and its service-proxy container, and the managed-serviceaccount agent.
    expect(pids).toHaveLength(12);
    for (const pid of pids)
      expect(await cmdline(pid)).toMatch(
        /internal (addon-manager|proxy-server|user-server|cluster-gateway|proxy-agent|service-proxy|managed-serviceaccount-agent)/,
      );
    // The rotation traffic stops by itself after the rotation; here it is stopped in any case (its process names the lab home).
    await stopRotationTraffic(lab);
    await downLeavesNothing(lab, pids);
  });
});
