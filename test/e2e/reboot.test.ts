// A lab of its own, not the shared hub + cluster1 one: it SIGKILLs every process of its lab and removes its network, then checks what `up` brings back.
import fs from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LabConfig } from '../../src/config/index.js';
import { downLab, upLab } from '../../src/lab/lifecycle.js';
import { findLeftovers, teardownNetwork } from '../../src/runtime/local/network/index.js';
import { isolatedLabHome, kubectl, machineSnapshot, hubAndCluster1Config } from '../support/lab.js';
import { upLabIn } from '../support/test-lab.js';
import { checkStateAfter, makeStateBefore } from '../support/lab-survival.js';

/**
 * Issue 32, item 3 for the local runtime: a host reboot, simulated. Every process of the lab is
 * SIGKILLed at once (supervisor, control planes, nodelets, container shims and containers) and the
 * lab's network namespaces (VPCs and pods), host links and iptables chains are removed, as a reboot
 * removes them; the lab directory (etcd data, PKI, state) stays, as a disk does. Then `up` must bring
 * the same lab back: cluster1 not registered again (same ManagedCluster, no new CSR), the ManifestWork
 * applied, the ManagedServiceAccount's token still valid, the addon Available. The time `up` took is
 * printed (docs/reliability.md).
 */

const LAB = 'reboot';
const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** Alive and not a zombie (a killed process whose parent has not reaped it yet is gone for this test's purpose). */
async function running(pid: number): Promise<boolean> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  return stat !== '' && !/^[ZX]$/.test(stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3));
}

/**
 * Every process that belongs to the lab: it names the lab home, runs inside it (a container's root or
 * working directory), is a container runc knows in the lab, or descends from any of these.
 */
async function labProcesses(home: string): Promise<number[]> {
  const own = new Set<number>();
  const parents = new Map<number, number>();
  for (const entry of await fs.readdir('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid || !(await running(pid))) continue;
    const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    parents.set(pid, Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    const cmdline = await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes('vitest')) continue;
    const root = await fs.readlink(`/proc/${pid}/root`).catch(() => '');
    const cwd = await fs.readlink(`/proc/${pid}/cwd`).catch(() => '');
    if (cmdline.includes(home) || root.startsWith(home) || cwd.startsWith(home)) own.add(pid);
  }
  const clusters = await fs.readdir(path.join(home, LAB, 'clusters')).catch(() => [] as string[]);
  for (const cluster of clusters) {
    const listed = await execa('runc', ['--root', path.join(home, LAB, 'clusters', cluster, 'nodelet', 'runc'), 'list', '--format', 'json'], { reject: false });
    for (const c of (JSON.parse(String(listed.stdout) || 'null') as { pid: number }[] | null) ?? []) if (c.pid && parents.has(c.pid)) own.add(c.pid);
  }
  for (let grew = true; grew;) {
    grew = false;
    for (const [pid, parent] of parents) {
      if (!own.has(pid) && own.has(parent)) {
        own.add(pid);
        grew = true;
      }
    }
  }
  return [...own];
}

describe('reboot (local): every lab process killed at once and its network gone; up brings the same lab back', () => {
  let home: Awaited<ReturnType<typeof isolatedLabHome>>;
  let config: LabConfig;
  let kubeconfig = '';
  const k = async (context: string, args: string[], input?: string) => {
    const r = await kubectl(kubeconfig, ['--context', context, ...args], input);
    if (r.exitCode !== 0) throw new Error(`kubectl --context ${context} ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };

  beforeAll(async () => {
    home = await isolatedLabHome(LAB);
    ({ config, kubeconfig } = await upLabIn(home.home, hubAndCluster1Config(LAB, ['managed-serviceaccount'])));
  }, 600_000);

  afterAll(async () => {
    if (config) await downLab(config).catch(() => undefined);
    await home?.cleanup();
  });

  it('keeps the ManagedCluster, the ManifestWork, the MSA token and the addon across a simulated reboot', async () => {
    const before = await makeStateBefore(k, 'reboot');
    const clusterBefore = before.managedClusters.find((m) => m.metadata.name === 'cluster1')!;

    // The reboot: everything at once, nothing told first.
    const pids = await labProcesses(home.home);
    expect(pids.length, 'lab processes found').toBeGreaterThan(10);
    for (let round = 0; round < 10; round++) {
      const left = round === 0 ? pids : await labProcesses(home.home);
      if (!left.length) break;
      for (const pid of left) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone already
        }
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    const survivors: number[] = [];
    for (const pid of pids) if (await running(pid)) survivors.push(pid);
    expect(survivors, 'every lab process gone').toEqual([]);
    expect(await labProcesses(home.home)).toEqual([]);
    const network = await findLeftovers(LAB);
    const podNamespaces = (await machineSnapshot(home.home)).netns.map((l) => l.split(' ')[0]!).filter((n) => n.startsWith(`ocmlab.${LAB}.`));
    await teardownNetwork([...network, ...podNamespaces.map((name) => ({ kind: 'netns' as const, name }))]);
    const after = await machineSnapshot(home.home);
    expect(
      after.netns.filter((n) => n.startsWith(`ocmlab.${LAB}.`)),
      'no namespace of the lab left',
    ).toEqual([]);
    expect(await findLeftovers(LAB), 'no link or chain of the lab left').toEqual([]);

    const t0 = Date.now();
    const r = await upLab(config, { renderer: 'silent' });
    const upMs = Date.now() - t0;
    console.log(`reboot: up took ${s(upMs)}\n${r.steps.map((step) => `  ${step.title}: ${step.result}`).join('\n')}`);
    expect(r.status.clusters.every((c) => c.ready)).toBe(true);
    // Every container died with the machine: the leader leases their pods held are freed, so cluster1's
    // work agent leads at once instead of after its lease ran out (137 s).
    expect(r.steps.find((s) => s.title.startsWith('cluster1: nodelet'))?.result ?? '', 'cluster1 nodelet step').toMatch(/released \d+ leader leases/);

    const kept = await checkStateAfter(k, before, t0);
    const clusterAfter = kept.managedClusters.find((m) => m.metadata.name === 'cluster1')!;
    expect(clusterAfter.metadata.generation, 'its spec untouched (not accepted again)').toBe(clusterBefore.metadata.generation);
    console.log(
      [
        `reboot: ManagedCluster cluster1 resourceVersion ${clusterBefore.metadata.resourceVersion} → ${clusterAfter.metadata.resourceVersion} (status updates)`,
        `reboot: the hub accepted a new ManifestWork ${s(kept.workAcceptedMs)} after up began (${kept.refusals.length} refusals first` +
          `${kept.refusals.length ? `: ${kept.refusals[0]}` : ''}); it applied on cluster1 after ${s(kept.workAppliedMs)}`,
        `reboot: up ${s(upMs)}; everything checked (${kept.addons.join(', ')} Available) ${s(kept.readyMs)} after up began`,
      ].join('\n'),
    );
    expect(r.status.supervisor?.running).toBe(true);
  }, 900_000);
});
