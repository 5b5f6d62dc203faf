import fs from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LabConfig } from '../../src/config/index.js';
import { downLab, upLab } from '../../src/lab/lifecycle.js';
import { findLeftovers, teardownNetwork } from '../../src/runtime/local/network/index.js';
import { isolatedLabHome, kubectl, machineSnapshot, upHubAndCluster1 } from '../support/lab.js';
import { waitUntil } from '../support/wait.js';

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
  const json = async <T>(context: string, args: string[]) => JSON.parse(await k(context, [...args, '-o', 'json'])) as T;
  interface Meta {
    metadata: { uid: string; resourceVersion: string; generation?: number; creationTimestamp: string };
  }
  const csrNames = async () =>
    (await json<{ items: { metadata: { name: string; labels?: Record<string, string> } }[] }>('hub', ['get', 'csr'])).items
      .filter((c) => c.metadata.labels?.['open-cluster-management.io/cluster-name'] === 'cluster1')
      .map((c) => c.metadata.name)
      .sort();
  const tokenAuthenticates = async (token: string) => {
    const review = await k(
      'cluster1',
      ['create', '-f', '-', '-o', 'json'],
      JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } }),
    );
    return (JSON.parse(review) as { status?: { authenticated?: boolean } }).status?.authenticated === true;
  };
  const condition = async (context: string, args: string[], type: string) =>
    (await json<{ status?: { conditions?: { type: string; status: string }[] } }>(context, args)).status?.conditions?.find((c) => c.type === type)?.status;

  beforeAll(async () => {
    home = await isolatedLabHome(LAB);
    ({ config, kubeconfig } = await upHubAndCluster1(home.home, LAB, ['managed-serviceaccount']));
  }, 600_000);

  afterAll(async () => {
    if (config) await downLab(config).catch(() => undefined);
    await home?.cleanup();
  });

  it('keeps the ManagedCluster, the ManifestWork, the MSA token and the addon across a simulated reboot', async () => {
    await k(
      'hub',
      ['apply', '-f', '-'],
      `apiVersion: authentication.open-cluster-management.io/v1beta1
kind: ManagedServiceAccount
metadata: {name: reboot, namespace: cluster1}
spec: {rotation: {enabled: true}}
---
apiVersion: work.open-cluster-management.io/v1
kind: ManifestWork
metadata: {name: before-reboot, namespace: cluster1}
spec:
  workload:
    manifests:
    - {apiVersion: v1, kind: ConfigMap, metadata: {name: before-reboot, namespace: default}, data: {at: before}}
`,
    );
    const token = await waitUntil(
      async () => {
        const r = await kubectl(kubeconfig, ['--context', 'hub', '-n', 'cluster1', 'get', 'secret', 'reboot', '-o', 'jsonpath={.data.token}']);
        return r.exitCode === 0 && r.stdout ? Buffer.from(r.stdout, 'base64').toString('utf8') : undefined;
      },
      'the token Secret of MSA reboot',
      120_000,
    );
    await waitUntil(
      async () => ((await condition('hub', ['-n', 'cluster1', 'get', 'manifestwork', 'before-reboot'], 'Applied')) === 'True' ? true : undefined),
      'before-reboot Applied',
      120_000,
    );
    expect(await tokenAuthenticates(token)).toBe(true);
    const clusterBefore = await json<Meta>('hub', ['get', 'managedcluster', 'cluster1']);
    const csrsBefore = await csrNames();

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
    console.log(`reboot: up took ${(upMs / 1000).toFixed(1)} s\n${r.steps.map((s) => `  ${s.title}: ${s.result}`).join('\n')}`);
    expect(r.status.clusters.every((c) => c.ready)).toBe(true);
    // Every container died with the machine: the leader leases their pods held are freed, so cluster1's
    // work agent leads at once instead of after its lease ran out (137 s).
    expect(r.steps.find((s) => s.title.startsWith('cluster1: nodelet'))?.result ?? '', 'cluster1 nodelet step').toMatch(/released \d+ leader leases/);

    const clusterAfter = await json<Meta>('hub', ['get', 'managedcluster', 'cluster1']);
    expect(clusterAfter.metadata.uid, 'the same ManagedCluster').toBe(clusterBefore.metadata.uid);
    expect(clusterAfter.metadata.creationTimestamp).toBe(clusterBefore.metadata.creationTimestamp);
    expect(clusterAfter.metadata.generation, 'its spec untouched (not accepted again)').toBe(clusterBefore.metadata.generation);
    console.log(
      `reboot: ManagedCluster cluster1 resourceVersion ${clusterBefore.metadata.resourceVersion} → ${clusterAfter.metadata.resourceVersion} (status updates)`,
    );
    await waitUntil(
      async () => ((await condition('hub', ['get', 'managedcluster', 'cluster1'], 'ManagedClusterConditionAvailable')) === 'True' ? true : undefined),
      'cluster1 Available',
      180_000,
    );
    expect(await csrNames(), 'no new CSR: cluster1 kept its hub credentials').toEqual(csrsBefore);

    expect(await condition('hub', ['-n', 'cluster1', 'get', 'manifestwork', 'before-reboot'], 'Applied')).toBe('True');
    expect(await k('cluster1', ['-n', 'default', 'get', 'configmap', 'before-reboot', '-o', 'jsonpath={.data.at}'])).toBe('before');
    // The hub's work webhook is a pod: right after `up` its Deployment may still read Ready from before the reboot
    // while the nodelet starts its container again, so the hub refuses ManifestWorks until it is back (a clear error).
    const refusals: string[] = [];
    await waitUntil(
      async () => {
        const r = await kubectl(
          kubeconfig,
          ['--context', 'hub', 'apply', '-f', '-'],
          `apiVersion: work.open-cluster-management.io/v1
kind: ManifestWork
metadata: {name: after-reboot, namespace: cluster1}
spec:
  workload:
    manifests:
    - {apiVersion: v1, kind: ConfigMap, metadata: {name: after-reboot, namespace: default}, data: {at: after}}
`,
        );
        if (r.exitCode !== 0) refusals.push(r.stderr.trim().split('\n')[0] ?? '');
        return r.exitCode === 0 ? true : undefined;
      },
      'the hub to accept a ManifestWork after the reboot',
      180_000,
      1_000,
    );
    const acceptedMs = Date.now() - t0;
    console.log(
      `reboot: the hub accepted a new ManifestWork ${(acceptedMs / 1000).toFixed(1)} s after up began (${refusals.length} refusals first${refusals.length ? `: ${refusals[0]}` : ''})`,
    );
    await waitUntil(
      async () =>
        (await kubectl(kubeconfig, ['--context', 'cluster1', '-n', 'default', 'get', 'configmap', 'after-reboot'])).exitCode === 0 ? true : undefined,
      'a ManifestWork created after the reboot applied on cluster1',
      240_000,
    );
    console.log(`reboot: the new ManifestWork applied on cluster1 ${((Date.now() - t0) / 1000).toFixed(1)} s after up began`);

    expect(await tokenAuthenticates(token), 'the MSA token from before the reboot').toBe(true);
    await waitUntil(
      async () =>
        (await condition('hub', ['-n', 'cluster1', 'get', 'managedclusteraddon', 'managed-serviceaccount'], 'Available')) === 'True' ? true : undefined,
      'managed-serviceaccount Available on cluster1',
      180_000,
    );
    const readyMs = Date.now() - t0;
    console.log(`reboot: up ${(upMs / 1000).toFixed(1)} s; everything checked ${(readyMs / 1000).toFixed(1)} s after up began`);
    expect(r.status.supervisor?.running).toBe(true);
  }, 900_000);
});
