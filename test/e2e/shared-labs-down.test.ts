import fs from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { downLab } from '../../src/lab/lifecycle.js';
import { kubectl, machineSnapshot } from '../support/lab.js';
import { stopRotationTraffic } from '../support/msa-rotation.js';
import { alive, cmdline } from '../support/process.js';
import { useSharedLab } from '../support/test-lab.js';

const MSA_NS = 'open-cluster-management-managed-serviceaccount';
const PROXY_NS = 'open-cluster-management-cluster-proxy';

interface PodJson {
  status: { containerStatuses?: { containerID?: string }[] };
}

/**
 * The shared default lab's last user (test/support/shared-lab-sequencer.ts puts this file last): every file
 * before it left the lab as it came up (useSharedLab checks), and `down` takes all of it away.
 */
describe('the shared default lab comes down clean', () => {
  const lab = useSharedLab('default', 'test/e2e/shared-labs-down.test.ts', { last: true });

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
      ['cluster1', [PROXY_NS, MSA_NS]],
      ['cluster2', [PROXY_NS, MSA_NS]],
    ] as const) {
      for (const ns of namespaces) {
        const pods = JSON.parse(await ok(context, ['-n', ns, 'get', 'pods', '-o', 'json'])) as { items: PodJson[] };
        for (const p of pods.items) for (const c of p.status.containerStatuses ?? []) pids.push(Number(c.containerID?.replace('ocm-lab://', '')));
      }
    }
    // Hub: three addon managers, the proxy-server, cluster-proxy's user server and the gateway; each spoke:
    // proxy-agent and its service-proxy container, and the managed-serviceaccount agent.
    expect(pids).toHaveLength(12);
    for (const pid of pids)
      expect(await cmdline(pid)).toMatch(
        /internal (addon-manager|proxy-server|user-server|cluster-gateway|proxy-agent|service-proxy|managed-serviceaccount-agent)/,
      );
    // The rotation traffic stops by itself after the rotation; here it is stopped in any case (its process names the lab home).
    await stopRotationTraffic(lab);
    await downLab(lab.config);
    for (const pid of pids) expect(alive(pid), `pid ${pid}`).toBe(false);
    expect((await machineSnapshot(lab.home)).processes).toEqual([]);
    // Down: the run's teardown has nothing left to do for this shape.
    await fs.rm(lab.home, { recursive: true, force: true });
  });
});
