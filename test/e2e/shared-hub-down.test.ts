import fs from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { downLab } from '../../src/lab/lifecycle.js';
import { kubectl, machineSnapshot } from '../support/lab.js';
import { alive, cmdline } from '../support/process.js';
import { useSharedLab } from '../support/test-lab.js';

const MSA_NS = 'open-cluster-management-managed-serviceaccount';
const PROXY_NS = 'open-cluster-management-cluster-proxy';

interface PodJson {
  status: { containerStatuses?: { containerID?: string }[] };
}

/**
 * The shared hub + cluster1 lab's last user (test/support/shared-lab-sequencer.ts puts this file after the shape's
 * other users): every file before it left the lab as it came up (useSharedLab checks), and `down` takes all of it away.
 */
describe('the shared hub + cluster1 lab comes down clean', () => {
  const lab = useSharedLab('hub-cluster1', 'test/e2e/shared-hub-down.test.ts', { last: true });

  it('down stops every addon process and leaves nothing behind', async () => {
    const ok = async (context: string, args: string[]) => {
      const r = await kubectl(lab.kubeconfig, ['--context', context, ...args]);
      if (r.exitCode !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
      return r.stdout;
    };
    // Container processes do not name the lab home in their arguments: find them by their pods.
    const pids: number[] = [];
    for (const [context, namespaces] of [
      ['hub', ['open-cluster-management-addon', PROXY_NS, 'open-cluster-management-cluster-gateway']],
      ['cluster1', [PROXY_NS, MSA_NS, 'open-cluster-management-agent-addon']],
    ] as const) {
      for (const ns of namespaces) {
        const pods = JSON.parse(await ok(context, ['-n', ns, 'get', 'pods', '-o', 'json'])) as { items: PodJson[] };
        for (const p of pods.items) for (const c of p.status.containerStatuses ?? []) pids.push(Number(c.containerID?.replace('ocm-lab://', '')));
      }
    }
    // Hub: four addon managers, the proxy-server, cluster-proxy's user server and the gateway; cluster1: proxy-agent
    // and its service-proxy container, the managed-serviceaccount agent and helloworld's agent.
    expect(pids).toHaveLength(11);
    for (const pid of pids)
      expect(await cmdline(pid)).toMatch(
        /internal (addon-manager|proxy-server|user-server|cluster-gateway|proxy-agent|service-proxy|managed-serviceaccount-agent|helloworld-agent)/,
      );
    await downLab(lab.config);
    for (const pid of pids) expect(alive(pid), `pid ${pid}`).toBe(false);
    expect((await machineSnapshot(lab.home)).processes).toEqual([]);
    // Down: the run's teardown has nothing left to do for this shape.
    await fs.rm(lab.home, { recursive: true, force: true });
  });
});
