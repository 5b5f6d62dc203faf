import { describe, expect, it } from 'vitest';
import { cmdline } from '../support/process.js';
import { containerPids, downLeavesNothing, MSA_NS, PROXY_NS } from '../support/shared-lab-down.js';
import { useSharedLab } from '../support/test-lab.js';

/**
 * The shared hub + cluster1 lab's last user (test/support/shared-lab-sequencer.ts puts this file after the shape's
 * other users): every file before it left the lab as it came up (useSharedLab checks), and `down` takes all of it away.
 */
describe('the shared hub + cluster1 lab comes down clean', () => {
  const lab = useSharedLab('hub-cluster1', 'test/e2e/shared-hub-down.test.ts', { last: true });

  it('down stops every addon process and leaves nothing behind', async () => {
    const pids = await containerPids(lab, [
      ['hub', ['open-cluster-management-addon', PROXY_NS, 'open-cluster-management-cluster-gateway']],
      ['cluster1', [PROXY_NS, MSA_NS, 'open-cluster-management-agent-addon']],
    ]);
    // Hub: four addon managers, the proxy-server, cluster-proxy's user server and the gateway; cluster1: proxy-agent
    // and its service-proxy container, the managed-serviceaccount agent and helloworld's agent.
    expect(pids).toHaveLength(11);
    for (const pid of pids)
      expect(await cmdline(pid)).toMatch(
        /internal (addon-manager|proxy-server|user-server|cluster-gateway|proxy-agent|service-proxy|managed-serviceaccount-agent|helloworld-agent)/,
      );
    await downLeavesNothing(lab, pids);
  });
});
