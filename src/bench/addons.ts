import { execa } from 'execa';
import fs from 'node:fs/promises';
import path from 'node:path';
import { hubTunnel } from '../addons/cluster-proxy/hub-tunnel.js';
import { probeCluster } from '../addons/cluster-proxy/health.js';
import { hubClientFor } from '../addons/hub-client.js';
import { openProxySession } from '../addons/proxy-kubectl.js';
import { defaultLabConfig, DEFAULT_ADDONS, renderLabConfig } from '../config/index.js';
import { downLab, upLab } from '../lab/lifecycle.js';
import { ensureBinaries } from '../provision/index.js';
import { withBenchLabHome } from './home.js';
import type { Benchmark } from './types.js';
import { CLI_MAIN } from '../paths.js';

const ROUNDS = 15;

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
};

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t) / 1e6;
}

/**
 * `npm run bench -- addons`: cluster-proxy's probe latency per cluster, and
 * `kubectl get deployments -A` on cluster1 directly from the host vs through
 * the tunnel (the whole `ocm-lab proxy kubectl` command, and kubectl alone over
 * an open tunnel session), interleaved round by round in one run.
 */
export const addonsBenchmark: Benchmark = {
  name: 'addons',
  describe: 'proxy health latency per cluster; kubectl get deployments -A directly vs through cluster-proxy with an MSA token',
  options: [],
  run: () =>
    withBenchLabHome(async (home) => {
      const labFile = path.join(home, 'lab.yaml');
      const config = { ...defaultLabConfig(), name: 'bench-addons', addons: [...DEFAULT_ADDONS], source: labFile };
      await fs.writeFile(labFile, renderLabConfig(config));
      const env = { ...process.env, OCM_LAB_HOME: home, OCM_LAB_CONFIG: labFile, CI: 'true' };
      try {
        const up = await upLab(config, { renderer: 'silent' });
        const kubeconfig = up.status.kubeconfig ?? '';
        const { kubectl } = await ensureBinaries(['kubectl']);
        const k = (args: string[], input?: string) => execa(kubectl, ['--kubeconfig', kubeconfig, ...args], { input });
        await k(
          ['--context', 'hub', 'apply', '-f', '-'],
          'apiVersion: authentication.open-cluster-management.io/v1beta1\n' +
            'kind: ManagedServiceAccount\n' +
            'metadata: {name: bench, namespace: cluster1}\n' +
            'spec: {rotation: {}}\n',
        );
        await k([
          '--context',
          'cluster1',
          'create',
          'clusterrolebinding',
          'bench-view',
          '--clusterrole=view',
          '--serviceaccount=open-cluster-management-managed-serviceaccount:bench',
        ]);
        await k(['--context', 'hub', '-n', 'cluster1', 'wait', 'managedserviceaccount/bench', '--for=condition=TokenReported', '--timeout=60s']);

        const hub = await hubClientFor(config);
        const { client } = await hubTunnel(hub);
        const probes: Record<string, number[]> = { cluster1: [], cluster2: [] };
        for (let i = 0; i < 20; i++) {
          for (const c of Object.keys(probes)) {
            const p = await probeCluster(client, c);
            if (!p.ok) throw new Error(`probe of ${c} failed: ${p.error}`);
            probes[c]!.push(p.latencyMs);
          }
        }
        const healthCli: number[] = [];
        for (let i = 0; i < 5; i++) healthCli.push(await timed(() => execa(process.execPath, [CLI_MAIN, 'proxy', 'health'], { env })));
        client.close();

        const session = await openProxySession(hub, 'cluster1', 'bench');
        const direct: number[] = [];
        const tunnelled: number[] = [];
        const command: number[] = [];
        try {
          for (let i = 0; i < ROUNDS; i++) {
            direct.push(await timed(() => k(['--context', 'cluster1', 'get', 'deployments', '-A'])));
            tunnelled.push(await timed(() => execa(kubectl, [...session.kubectlFlags, 'get', 'deployments', '-A'])));
            command.push(
              await timed(() =>
                execa(process.execPath, [CLI_MAIN, 'proxy', 'kubectl', '--cluster', 'cluster1', '--sa', 'bench', '--', 'get', 'deployments', '-A'], { env }),
              ),
            );
          }
        } finally {
          await session.close();
          hub.close();
        }
        const row = (label: string, xs: number[], base?: number[]) =>
          `${label.padEnd(58)} p50 ${quantile(xs, 0.5).toFixed(1).padStart(7)} ms   p90 ${quantile(xs, 0.9).toFixed(1).padStart(7)} ms` +
          `${base ? `   ×${(quantile(xs, 0.5) / quantile(base, 0.5)).toFixed(2)} of direct` : ''}`;
        process.stdout.write(`proxy health probe (GET /healthz through a fresh tunnel connection, 20 each):\n`);
        for (const [c, xs] of Object.entries(probes)) process.stdout.write(`  ${row(c, xs)}\n`);
        process.stdout.write(`  ${row('`ocm-lab proxy health` (whole command, 5 runs)', healthCli)}\n`);
        process.stdout.write(`kubectl get deployments -A on cluster1 (${ROUNDS} rounds, interleaved):\n`);
        process.stdout.write(`  ${row('direct from the host (admin kubeconfig)', direct)}\n`);
        process.stdout.write(`  ${row('kubectl through an open tunnel session (MSA token)', tunnelled, direct)}\n`);
        process.stdout.write(`  ${row('`ocm-lab proxy kubectl` (whole command)', command, direct)}\n`);
      } finally {
        await downLab(config).catch(() => undefined);
      }
    }),
};
