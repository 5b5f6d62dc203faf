// A lab of its own, not the shared hub + cluster1 one: it SIGKILLs control planes, nodelets and OCM's pods, delivery held to timed bounds (faults run alone).
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hubClientFor } from '../../src/addons/hub-client.js';
import type { LabConfig } from '../../src/config/index.js';
import { KubeClient } from '../../src/kube/client.js';
import { downLab, upLab } from '../../src/lab/lifecycle.js';
import { clusterKubeconfigFile, labDir } from '../../src/paths.js';
import { isolatedLabHome, kubectl, machineSnapshot, hubAndCluster1Config } from '../support/lab.js';
import { upLabIn } from '../support/test-lab.js';
import { alive } from '../support/process.js';
import { waitUntil } from '../support/wait.js';

/**
 * Issue 16, ManifestWork delivery and the control planes: while ManifestWorks are created on the hub
 * every 400 ms (each a ConfigMap for cluster1) and cluster1's API is read every 250 ms, each
 * component is SIGKILLed in turn: cluster1's etcd, kube-apiserver and kube-controller-manager
 * (host processes: the lab's supervisor restarts them, nobody runs `up`), the hub's kube-apiserver, both nodelets, every OCM pod of both
 * clusters, managed-serviceaccount's agent and manager (pods: the nodelet restarts them). For each:
 * who restored it, how long delivery stalled, requests failed, and what was lost. Goals: every
 * ManifestWork the hub accepted reaches cluster1, nothing fails once recovered, and the lab's
 * ManagedServiceAccount token stays valid. The nodelets of both clusters too: a restarted nodelet adopts the
 * containers its predecessor started (their shims outlive it), so none of them restarts.
 */

const LAB = 'faults-cp';
const CREATE_EVERY_MS = 400;
const READ_EVERY_MS = 250;
const REQUEST_TIMEOUT_MS = 3_000;
/** How long after the restore every accepted ManifestWork must have arrived. */
const DELIVERY_BOUND_MS = 90_000;
/** The same for a restarted work agent: upstream's worst case to take over its own lease (2m43s) and some. */
const LEASE_BOUND_MS = 240_000;
/** Traffic kept up after recovery, all of which must be ok. */
const AFTER_RECOVERY_MS = 2_000;
const NS = 'faults';
const WORK_API = '/apis/work.open-cluster-management.io/v1';

interface Attempt {
  start: number;
  end: number;
  ok: boolean;
  error?: string;
}
interface FaultResult {
  fault: string;
  restoredBy: string;
  /** Longest stretch after the kill in which no ManifestWork arrived although some were waiting. */
  stallMs: number;
  maxDeliveryMs: number;
  works: number;
  failed: number;
  requests: number;
  lost: string;
}

const withTimeout = async <T>(p: Promise<T>): Promise<T> => {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, rej) => (timer = setTimeout(() => rej(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)), REQUEST_TIMEOUT_MS))),
    ]);
  } finally {
    clearTimeout(timer);
  }
};

const s = (n: number) => `${(n / 1000).toFixed(1)} s`;
function table(results: FaultResult[]): string {
  return [
    '| fault | restored by | delivery stalled | slowest delivery | works | requests failed | lost |',
    '|---|---|---:|---:|---:|---:|---|',
    ...results.map((r) => `| ${r.fault} | ${r.restoredBy} | ${s(r.stallMs)} | ${s(r.maxDeliveryMs)} | ${r.works} | ${r.failed} of ${r.requests} | ${r.lost} |`),
  ].join('\n');
}

/**
 * The traffic of one fault: ManifestWorks `<tag>-<n>` created on the hub, and cluster1's ConfigMaps
 * listed; `arrived` is when each work's ConfigMap was first seen on cluster1.
 */
function workTraffic(hub: KubeClient, spoke: KubeClient, tag: string) {
  const created = new Map<string, number>();
  const arrived = new Map<string, number>();
  const attempts: Attempt[] = [];
  let n = 0;
  let running = true;
  const record = async (fn: () => Promise<unknown>) => {
    const start = Date.now();
    try {
      await withTimeout(fn());
      attempts.push({ start, end: Date.now(), ok: true });
      return true;
    } catch (err) {
      attempts.push({ start, end: Date.now(), ok: false, error: (err as Error).message.slice(0, 160) });
      return false;
    }
  };
  const creating = (async () => {
    while (running) {
      const name = `${tag}-${++n}`;
      const body = {
        apiVersion: 'work.open-cluster-management.io/v1',
        kind: 'ManifestWork',
        metadata: { name, namespace: 'cluster1', labels: { 'faults.ocm-lab.io/tag': tag } },
        spec: {
          workload: {
            manifests: [
              { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS, labels: { 'faults.ocm-lab.io/tag': tag } }, data: { n: String(n) } },
            ],
          },
        },
      };
      const at = Date.now();
      if (await record(() => hub.post(`${WORK_API}/namespaces/cluster1/manifestworks`, body))) created.set(name, at);
      await new Promise((r) => setTimeout(r, CREATE_EVERY_MS));
    }
  })();
  const reading = (async () => {
    while (running) {
      await record(async () => {
        const list = await spoke.get<{ items: { metadata: { name: string } }[] }>(`/api/v1/namespaces/${NS}/configmaps`, {
          labelSelector: `faults.ocm-lab.io/tag=${tag}`,
        });
        const now = Date.now();
        for (const cm of list.items) if (!arrived.has(cm.metadata.name)) arrived.set(cm.metadata.name, now);
      });
      await new Promise((r) => setTimeout(r, READ_EVERY_MS));
    }
  })();
  return {
    created,
    arrived,
    attempts,
    stopCreating: async () => {
      running = false;
      await Promise.all([creating, reading]);
    },
    /** Keeps listing (without creating) until every created work arrived or the bound passes. */
    drain: async (bound: number) => {
      const deadline = Date.now() + bound;
      while (Date.now() < deadline && [...created.keys()].some((k) => !arrived.has(k))) {
        const list = await withTimeout(
          spoke.get<{ items: { metadata: { name: string } }[] }>(`/api/v1/namespaces/${NS}/configmaps`, { labelSelector: `faults.ocm-lab.io/tag=${tag}` }),
        ).catch(() => null);
        const now = Date.now();
        for (const cm of list?.items ?? []) if (!arrived.has(cm.metadata.name)) arrived.set(cm.metadata.name, now);
        await new Promise((r) => setTimeout(r, READ_EVERY_MS));
      }
    },
  };
}

/** The longest time after `from` during which some created work was waiting and none arrived. */
function longestStall(created: Map<string, number>, arrived: Map<string, number>, from: number): number {
  const events = [...arrived.values()].filter((t) => t >= from).sort((a, b) => a - b);
  let longest = 0;
  let last = from;
  for (const t of events) {
    const waiting = [...created].some(([name, c]) => c <= t && (arrived.get(name) ?? Infinity) >= t);
    if (waiting) longest = Math.max(longest, t - last);
    last = t;
  }
  return longest;
}

describe('faults: ManifestWork delivery while control planes, OCM and managed-serviceaccount are SIGKILLed', () => {
  let home: Awaited<ReturnType<typeof isolatedLabHome>>;
  let config: LabConfig;
  let kubeconfig: string;
  let hub: KubeClient;
  let spoke: KubeClient;
  const results: FaultResult[] = [];

  const k = async (context: string, args: string[], input?: string) => {
    const r = await kubectl(kubeconfig, ['--context', context, ...args], input);
    if (r.exitCode !== 0) throw new Error(`kubectl --context ${context} ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };

  interface ContainerStatus {
    name: string;
    restartCount: number;
    ready: boolean;
    containerID?: string;
  }
  interface PodJson {
    metadata: { name: string; uid: string };
    status: { containerStatuses?: ContainerStatus[] };
  }
  const podOf = async (context: string, namespace: string, prefix: string) => {
    const items = (JSON.parse(await k(context, ['-n', namespace, 'get', 'pods', '-o', 'json'])) as { items: PodJson[] }).items;
    const pod = items.find((p) => p.metadata.name.startsWith(`${prefix}-`) && p.status.containerStatuses?.length);
    if (!pod) throw new Error(`no pod ${prefix}-… in ${context}/${namespace}: ${items.map((p) => p.metadata.name).join(', ')}`);
    const status = pod.status.containerStatuses![0]!;
    return { pod, status, pid: Number(status.containerID?.replace('ocm-lab://', '')) };
  };
  const hostPid = async (cluster: string, component: string) =>
    Number((await fs.readFile(path.join(labDir(LAB), 'clusters', cluster, 'run', `${component}.pid`), 'utf8')).trim());

  beforeAll(async () => {
    home = await isolatedLabHome(LAB);
    ({ config, kubeconfig } = await upLabIn(home.home, hubAndCluster1Config(LAB, ['managed-serviceaccount'])));
    hub = await hubClientFor(config);
    spoke = await KubeClient.fromKubeconfig(clusterKubeconfigFile(LAB, 'cluster1'));
    await k('cluster1', ['create', 'namespace', NS]);
    // A ManagedServiceAccount whose token must still work after every fault.
    await k(
      'hub',
      ['apply', '-f', '-'],
      `apiVersion: authentication.open-cluster-management.io/v1beta1
kind: ManagedServiceAccount
metadata: {name: faults, namespace: cluster1}
spec: {rotation: {enabled: true}}
`,
    );
    await waitUntil(
      async () => ((await kubectl(kubeconfig, ['--context', 'hub', '-n', 'cluster1', 'get', 'secret', 'faults'])).exitCode === 0 ? true : undefined),
      'the token Secret of MSA faults',
      60_000,
    );
  });

  afterAll(async () => {
    if (results.length) console.log(`\nFaults: ManifestWork delivery and the control planes (${new Date().toISOString()})\n${table(results)}\n`);
    hub?.close();
    spoke?.close();
    if (config) await downLab(config).catch(() => undefined);
    await home?.cleanup();
  });

  /** Kills `pid`, lets `restore` bring it back, and checks delivery around it. */
  const inject = async (fault: string, pid: number, restore: () => Promise<string>, bound = DELIVERY_BOUND_MS): Promise<FaultResult> => {
    expect(alive(pid), `${fault}: pid ${pid} alive before`).toBe(true);
    const tag = `f${results.length + 1}`;
    const traffic = workTraffic(hub, spoke, tag);
    await new Promise((r) => setTimeout(r, 1_500));
    const killedAt = Date.now();
    process.kill(pid, 'SIGKILL');
    await waitUntil(async () => (!alive(pid) ? true : undefined), `${fault}: pid ${pid} gone`, 10_000, 20);
    let restoredBy = '';
    try {
      restoredBy = await restore();
      // Recovered: a work created after the restore arrived; then some more traffic, all of which must be ok.
      const restoredAt = Date.now();
      await waitUntil(
        async () => ([...traffic.created].some(([name, c]) => c >= restoredAt && traffic.arrived.has(name)) ? true : undefined),
        `${fault}: a ManifestWork created after the restore to reach cluster1`,
        bound,
        100,
      );
      const recoveredAt = Date.now();
      await new Promise((r) => setTimeout(r, AFTER_RECOVERY_MS));
      await traffic.stopCreating();
      await traffic.drain(bound);
      const missing = [...traffic.created.keys()].filter((name) => !traffic.arrived.has(name));
      const delivery = [...traffic.created].filter(([name]) => traffic.arrived.has(name)).map(([name, c]) => traffic.arrived.get(name)! - c);
      const afterRecovery = traffic.attempts.filter((a) => a.start > recoveredAt && !a.ok);
      const result: FaultResult = {
        fault,
        restoredBy,
        stallMs: longestStall(traffic.created, traffic.arrived, killedAt),
        maxDeliveryMs: Math.max(0, ...delivery),
        works: traffic.created.size,
        failed: traffic.attempts.filter((a) => !a.ok).length,
        requests: traffic.attempts.length,
        lost: missing.length ? `${missing.length} ManifestWorks never applied` : 'nothing',
      };
      results.push(result);
      console.log(`${fault}:\n${table([result])}`);
      expect(missing, `${fault}: ManifestWorks the hub accepted but cluster1 never got`).toEqual([]);
      expect(
        afterRecovery.map((a) => a.error),
        `${fault}: failures after recovery`,
      ).toEqual([]);
      expect(traffic.created.size, `${fault}: works created`).toBeGreaterThan(3);
      return result;
    } finally {
      await traffic.stopCreating();
      await k('hub', ['-n', 'cluster1', 'delete', 'manifestworks', '-l', `faults.ocm-lab.io/tag=${tag}`, '--wait=false']).catch(() => undefined);
    }
  };

  /** The lab's supervisor restores a host process by itself: waits for its new pid (no `up` is run). */
  const bySupervisor = (cluster: string, component: string, killed: number) => async () => {
    const t0 = Date.now();
    const pid = await waitUntil(
      async () => {
        const now = await hostPid(cluster, component).catch(() => 0);
        return now !== killed && now > 0 && alive(now) ? now : undefined;
      },
      `${cluster} ${component}: the supervisor's new process`,
      60_000,
      50,
    );
    return `supervisor (new pid ${pid} ${s(Date.now() - t0)} after the kill was seen)`;
  };
  const byNodelet = (context: string, namespace: string, prefix: string, before: { status: ContainerStatus; pod: PodJson }) => async () => {
    const after = await waitUntil(
      async () => {
        const now = await podOf(context, namespace, prefix);
        return now.status.restartCount > before.status.restartCount && now.status.ready ? now : undefined;
      },
      `${prefix}: restartCount to rise`,
      60_000,
    );
    expect(after.pod.metadata.uid).toBe(before.pod.metadata.uid);
    return `nodelet restart (restartCount ${before.status.restartCount} → ${after.status.restartCount})`;
  };

  it.each([
    ['cluster1', 'etcd'],
    ['cluster1', 'kube-apiserver'],
    ['cluster1', 'kube-controller-manager'],
    ['hub', 'kube-apiserver'],
  ])(
    'SIGKILL of %s %s (a host process): the supervisor restores it, every accepted ManifestWork arrives',
    async (cluster, component) => {
      const pid = await hostPid(cluster, component);
      await inject(`${cluster} ${component} SIGKILL`, pid, bySupervisor(cluster, component, pid));
    },
    300_000,
  );

  it.each(['cluster1', 'hub'])(
    'SIGKILL of the %s nodelet (a host process): the supervisor restores it, it adopts every running container (none restarted), every accepted ManifestWork arrives',
    async (cluster) => {
      const containers = async () => {
        const items = (JSON.parse(await k(cluster, ['get', 'pods', '-A', '-o', 'json'])) as { items: PodJson[] }).items;
        return Object.fromEntries(
          items.flatMap((p) =>
            (p.status.containerStatuses ?? []).map((c) => [
              `${p.metadata.name}/${c.name}`,
              `${p.metadata.uid} ${c.containerID ?? ''} restarts ${c.restartCount}`,
            ]),
          ),
        );
      };
      const before = await containers();
      expect(Object.keys(before).length, `${cluster}: containers`).toBeGreaterThan(2);
      const pid = await hostPid(cluster, 'nodelet');
      await inject(`${cluster} nodelet SIGKILL`, pid, bySupervisor(cluster, 'nodelet', pid));
      expect(await containers(), `${cluster}: every container the same run as before the nodelet's death`).toEqual(before);
    },
    300_000,
  );

  it.each([
    ['cluster1', 'open-cluster-management', 'klusterlet'],
    ['cluster1', 'open-cluster-management-agent', 'klusterlet-registration-agent'],
    ['hub', 'open-cluster-management', 'cluster-manager'],
    ['hub', 'open-cluster-management-hub', 'cluster-manager-registration-controller'],
    ['hub', 'open-cluster-management-hub', 'cluster-manager-registration-webhook'],
    ['hub', 'open-cluster-management-hub', 'cluster-manager-work-webhook'],
    ['hub', 'open-cluster-management-hub', 'cluster-manager-placement-controller'],
    ['hub', 'open-cluster-management-hub', 'cluster-manager-addon-manager-controller'],
    ['cluster1', 'open-cluster-management-managed-serviceaccount', 'managed-serviceaccount-addon-agent'],
    ['hub', 'open-cluster-management-addon', 'managed-serviceaccount-addon-manager'],
  ])(
    'SIGKILL of %s pod %s/%s: the nodelet restarts it, every accepted ManifestWork arrives',
    async (context, namespace, prefix) => {
      const before = await podOf(context, namespace, prefix);
      await inject(`${context} ${prefix} SIGKILL`, before.pid, byNodelet(context, namespace, prefix, before));
    },
    300_000,
  );

  // Last, as its outage outlasts the others: upstream's work agent takes its leader lease only once the
  // killed process's lease has run out (its log: "Worst non-graceful lease acquisition is 2m43s").
  it('SIGKILL of cluster1 pod open-cluster-management-agent/klusterlet-work-agent: the nodelet restarts it; once its leader lease is free again every accepted ManifestWork arrives', async () => {
    const before = await podOf('cluster1', 'open-cluster-management-agent', 'klusterlet-work-agent');
    await inject(
      'cluster1 klusterlet-work-agent SIGKILL',
      before.pid,
      byNodelet('cluster1', 'open-cluster-management-agent', 'klusterlet-work-agent', before),
      LEASE_BOUND_MS,
    );
  }, 420_000);

  it('after every fault: a second up finds every control plane running, and the ManagedServiceAccount token on the hub works on cluster1', async () => {
    await upLab(config, { renderer: 'silent' });
    for (const cluster of ['hub', 'cluster1']) {
      for (const component of ['etcd', 'kube-apiserver', 'kube-controller-manager', 'nodelet'])
        expect(alive(await hostPid(cluster, component)), `${cluster} ${component}`).toBe(true);
    }
    const token = Buffer.from(await k('hub', ['-n', 'cluster1', 'get', 'secret', 'faults', '-o', 'jsonpath={.data.token}']), 'base64').toString('utf8');
    const review = await spoke.post<{ status?: { authenticated?: boolean; user?: { username?: string } } }>('/apis/authentication.k8s.io/v1/tokenreviews', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token },
    });
    expect(review.status?.authenticated).toBe(true);
    expect(review.status?.user?.username).toBe('system:serviceaccount:open-cluster-management-managed-serviceaccount:faults');
  }, 300_000);

  it('down leaves no process, namespace or link of the lab behind', async () => {
    await downLab(config);
    const left = await machineSnapshot(home.home);
    expect(left.processes).toEqual([]);
    expect(left.netns.filter((n) => n.includes(LAB))).toEqual([]);
  }, 300_000);
});
