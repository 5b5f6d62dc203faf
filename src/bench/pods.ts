import fs from 'node:fs/promises';
import path from 'node:path';
import { defaultLabConfig, type LabConfig } from '../config/index.js';
import { downLab, upLab } from '../lab/lifecycle.js';
import { KubeClient } from '../kube/client.js';
import { OCM_LAB_IMAGE } from '../images/catalogue.js';
import { labDir } from '../paths.js';
import { OCM_API_MODULE, OCM_API_VERSION } from '../ocm/api-module.js';
import { ensureGoModuleSource } from '../provision/index.js';
import { OCM_VERSION } from '../provision/versions.js';
import YAML from 'yaml';
import { withBenchLabHome } from './home.js';
import type { Benchmark } from './types.js';
import { sleep } from '../kube/wait.js';
import { clusterRoleBinding, namespace, serviceAccount, serviceAccountSubject } from '../kube/builders.js';

const NS = 'bench-pods';
const ROUNDS = 5;
const MEMORY_PODS = 10;

interface PodJson {
  status?: { conditions?: { type: string; status: string }[] };
}

/** A bare pod of one image; `ready` decides how Ready is reached (no probe: when running; tcp probe: when it listens). */
function podOf(name: string, image: 'ours' | 'upstream', probe = true): Record<string, unknown> {
  const port = image === 'ours' ? 8080 : 8443;
  const container = {
    name: 'main',
    ...(image === 'ours'
      ? { image: OCM_LAB_IMAGE, args: ['internal', 'test-workload', '--port', String(port)] }
      : {
          image: `quay.io/open-cluster-management/registration-operator:${OCM_VERSION}`,
          args: ['/registration-operator', 'klusterlet', '--disable-leader-election'],
        }),
    ...(probe ? { readinessProbe: { tcpSocket: { port }, periodSeconds: 1 } } : {}),
  };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS },
    spec: { terminationGracePeriodSeconds: 1, serviceAccountName: 'bench', containers: [container] },
  };
}

async function waitReady(client: KubeClient, name: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const pod = await client.get<PodJson>(`/api/v1/namespaces/${NS}/pods/${name}`).catch(() => null);
    if (pod?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) return;
    await sleep(25);
  }
  throw new Error(`pod ${NS}/${name} was not Ready within ${timeoutMs / 1000} s`);
}

async function waitGone(client: KubeClient, name: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (
      !(await client.get(`/api/v1/namespaces/${NS}/pods/${name}`).then(
        () => true,
        () => false,
      ))
    )
      return;
    await sleep(50);
  }
}

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? NaN;

async function rssKb(pid: number): Promise<number> {
  const m = /VmRSS:\s+(\d+) kB/.exec(await fs.readFile(`/proc/${pid}/status`, 'utf8').catch(() => ''));
  return m ? Number(m[1]) : 0;
}

/** Resident memory of processes whose command line matches: runc parents, containers of the lab. */
async function rssOfMatching(test: (cmdline: string) => boolean): Promise<{ count: number; kb: number }> {
  let count = 0;
  let kb = 0;
  for (const p of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    const cmd = (await fs.readFile(`/proc/${p}/cmdline`, 'utf8').catch(() => '')).split('\0').join(' ');
    if (cmd && test(cmd)) {
      count++;
      kb += await rssKb(Number(p));
    }
  }
  return { count, kb };
}

const ms = (x: number) => `${x.toFixed(0)} ms`;

async function measure(config: LabConfig): Promise<string[][]> {
  await upLab(config, { renderer: 'silent' });
  const dir = labDir(config.name);
  const client = await KubeClient.fromKubeconfig(path.join(dir, 'clusters', 'cluster1', 'kubeconfigs', 'admin.kubeconfig'));
  try {
    await client.post('/api/v1/namespaces', namespace(NS));
    await client.post(`/api/v1/namespaces/${NS}/serviceaccounts`, serviceAccount({ name: 'bench', namespace: NS }));
    // The klusterlet operator as upstream deploys it: its CRD, and (here, simply) cluster-admin.
    await client.post(
      '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
      clusterRoleBinding('bench-pods', [serviceAccountSubject('bench', NS)], 'cluster-admin'),
    );
    const apiModule = await ensureGoModuleSource(OCM_API_MODULE, OCM_API_VERSION);
    const crd = YAML.parse(
      await fs.readFile(path.join(apiModule, 'operator/v1/0000_00_operator.open-cluster-management.io_klusterlets.crd.yaml'), 'utf8'),
    ) as object;
    await client.post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
    // The first pod of a namespace waits for kube-root-ca.crt: warm up once, unmeasured.
    await client.post(`/api/v1/namespaces/${NS}/pods`, podOf('warm-up', 'ours'));
    await waitReady(client, 'warm-up');
    const times: Record<string, number[]> = {};
    for (let round = 0; round < ROUNDS; round++) {
      for (const probe of [false, true]) {
        for (const image of ['ours', 'upstream'] as const) {
          const name = `${image}-${probe ? 'probed' : 'bare'}-${round}`;
          const t0 = performance.now();
          await client.post(`/api/v1/namespaces/${NS}/pods`, podOf(name, image, probe));
          await waitReady(client, name);
          (times[`${image}/${probe}`] ??= []).push(performance.now() - t0);
          await client.delete(`/api/v1/namespaces/${NS}/pods/${name}`);
          await waitGone(client, name);
        }
      }
    }
    const row = (label: string, key: string) => [label, ms(percentile(times[key]!, 50)), ms(Math.max(...times[key]!)), String(ROUNDS)];
    const nodeletPid = Number.parseInt(await fs.readFile(path.join(dir, 'clusters', 'cluster1', 'run', 'nodelet.pid'), 'utf8'), 10);
    const idleKb = await rssKb(nodeletPid);
    for (let i = 0; i < MEMORY_PODS; i++) await client.post(`/api/v1/namespaces/${NS}/pods`, podOf(`mem-${i}`, 'ours'));
    for (let i = 0; i < MEMORY_PODS; i++) await waitReady(client, `mem-${i}`);
    await sleep(5_000);
    const busyKb = await rssKb(nodeletPid);
    const runcRoot = path.join(dir, 'clusters', 'cluster1', 'nodelet', 'runc');
    const runcParents = await rssOfMatching((c) => /(^|\/)runc /.test(c) && c.includes(runcRoot));
    const workloads = await rssOfMatching((c) => c.includes('internal test-workload --port 8080'));
    return [
      ['pod created → Ready, no probe (Ready once running)', 'p50', 'max', 'n'],
      row('  ocm-lab:<version> (node, test-workload)', 'ours/false'),
      row(`  registration-operator:${OCM_VERSION} (klusterlet)`, 'upstream/false'),
      ['  ratio upstream / ours (p50)', (percentile(times['upstream/false']!, 50) / percentile(times['ours/false']!, 50)).toFixed(2), '', ''],
      ['pod created → Ready, tcp readiness probe (period 1 s)', '', '', ''],
      row('  ocm-lab:<version> (node, test-workload)', 'ours/true'),
      row(`  registration-operator:${OCM_VERSION} (klusterlet)`, 'upstream/true'),
      ['nodelet RSS, warm-up pod only', `${(idleKb / 1024).toFixed(0)} MiB`, '', ''],
      [`nodelet RSS with ${MEMORY_PODS + 1} pods`, `${(busyKb / 1024).toFixed(0)} MiB`, '', ''],
      ['runc parents (one per running container)', `${(runcParents.kb / 1024).toFixed(0)} MiB`, '', String(runcParents.count)],
      ['test-workload containers', `${(workloads.kb / 1024).toFixed(0)} MiB`, '', String(workloads.count)],
    ];
  } finally {
    client.close();
    await downLab(config).catch(() => undefined);
  }
}

export const podsBenchmark: Benchmark = {
  name: 'pods',
  describe: 'pod start (created → Ready) of our image and of an upstream OCM image, interleaved; nodelet memory with 10 pods',
  options: [],
  async run() {
    await withBenchLabHome(async () => {
      const config: LabConfig = {
        ...defaultLabConfig(),
        name: 'bench-pods',
        addons: [],
        clusters: [
          { name: 'hub', vpc: 'vpc-1', hub: true },
          { name: 'cluster1', vpc: 'vpc-2', hub: false },
        ],
      };
      const rows = await measure(config);
      const widths = [0, 1, 2, 3].map((i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
      for (const r of rows) process.stdout.write(`${r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')}\n`);
    });
  },
};
