// A lab of its own, not the shared hub + cluster1 one: it SIGKILLs the proxy-server and times the restarts (faults run alone, before any e2e lab).
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { proxyHealth } from '../../src/addons/cluster-proxy/health.js';
import { hubTunnel } from '../../src/addons/cluster-proxy/hub-tunnel.js';
import { PROXY_NAMESPACE } from '../../src/addons/cluster-proxy/constants.js';
import { hubClientFor } from '../../src/addons/hub-client.js';
import type { LabConfig } from '../../src/config/index.js';
import type { KubeClient } from '../../src/kube/client.js';
import { downLab } from '../../src/lab/lifecycle.js';
import { DEFAULT_BACKOFF } from '../../src/nodelet/backoff.js';
import { labDir } from '../../src/paths.js';
import { cli, isolatedLabHome, kubectl, machineSnapshot, hubAndCluster1Config } from '../support/lab.js';
import { upLabIn } from '../support/test-lab.js';
import { alive, processStartMs } from '../support/process.js';
import { waitUntil } from '../support/wait.js';

/**
 * Issue 32, item 4: a crashed container comes back as a kubelet brings it back. The hub's
 * proxy-server is SIGKILLed once: the nodelet restarts it at once (no back-off
 * for a first crash) and every tunnel is healthy again (`ocm-lab proxy health` all True). Killed a
 * second time within the minute, it waits out the back-off (10 s, `CrashLoopBackOff` meanwhile)
 * before it runs again. Times are printed for docs/reliability.md, not asserted; what is asserted
 * is the order: the first restart before the back-off would have ended, the second after it.
 */

const LAB = 'faults-crashloop';
/**
 * The pod's age before the first kill. A first crash has no back-off at any age, so the suite waits
 * only 20 s; docs/reliability.md's figure is issue 32's setting, a pod three minutes old
 * (OCM_LAB_FAULT_POD_AGE_S=180).
 */
const POD_AGE_MS = Number(process.env.OCM_LAB_FAULT_POD_AGE_S ?? 20) * 1000;
const HEALTH_POLL_MS = 100;
const RECOVERY_BOUND_MS = 60_000;

interface ContainerStatus {
  name: string;
  restartCount: number;
  ready: boolean;
  containerID?: string;
  state: { running?: { startedAt: string }; waiting?: { reason?: string; message?: string } };
  lastState: { terminated?: { exitCode: number; signal?: number; finishedAt: string } };
}
interface PodJson {
  metadata: { name: string; uid: string };
  status: { containerStatuses?: ContainerStatus[] };
}

interface KillResult {
  kill: string;
  restartCount: string;
  /** Kill → the new proxy-server process started. */
  processBackMs: number;
  /** Kill → `proxy health` all True. */
  healthyMs: number;
}

const seconds = (n: number) => `${(n / 1000).toFixed(1)} s`;

describe('faults: a crashed container restarts as a kubelet restarts it (hub proxy-server SIGKILLed twice)', () => {
  let home: Awaited<ReturnType<typeof isolatedLabHome>>;
  let config: LabConfig;
  let kubeconfig: string;
  let labFile: string;
  let hub: KubeClient | undefined;
  const results: KillResult[] = [];

  const proxyServer = async (): Promise<{ pod: PodJson; status: ContainerStatus; pid: number }> => {
    const r = await kubectl(kubeconfig, ['--context', 'hub', '-n', PROXY_NAMESPACE, 'get', 'pods', '-o', 'json']);
    if (r.exitCode !== 0) throw new Error(`kubectl get pods: ${r.stderr}`);
    for (const pod of (JSON.parse(r.stdout) as { items: PodJson[] }).items) {
      const status = pod.status.containerStatuses?.find((c) => c.name === 'proxy-server');
      if (status) return { pod, status, pid: Number(status.containerID?.replace('ocm-lab://', '') || 0) };
    }
    throw new Error(`no proxy-server pod in hub/${PROXY_NAMESPACE}`);
  };

  /** What `ocm-lab proxy health` does (a fresh tunnel client, every row): null when every row is all True, else why not. */
  const unhealthy = async (): Promise<string | null> => {
    let tunnel: Awaited<ReturnType<typeof hubTunnel>> | undefined;
    try {
      tunnel = await hubTunnel(hub!);
      const rows = await proxyHealth(hub!, tunnel.client, ['cluster1']);
      const bad = rows.find((r) => !(r.installed && r.available && r.probedHealth));
      if (rows.length !== 1) return `${rows.length} rows`;
      return bad ? `installed ${bad.installed}, available ${bad.available}, probe: ${bad.error ?? 'ok'}` : null;
    } catch (err) {
      return (err as Error).message;
    } finally {
      tunnel?.client.close();
    }
  };
  const allHealthy = async () => (await unhealthy()) === null;

  const nodeletLog = () => fs.readFile(path.join(labDir(LAB), 'clusters', 'hub', 'logs', 'nodelet.log'), 'utf8');

  beforeAll(async () => {
    home = await isolatedLabHome(LAB);
    ({ config, kubeconfig, labFile } = await upLabIn(home.home, hubAndCluster1Config(LAB, ['cluster-proxy'])));
    hub = await hubClientFor(config);
    await waitUntil(async () => ((await allHealthy()) ? true : undefined), 'proxy health all True after up', 120_000);
  });

  afterAll(async () => {
    hub?.close();
    if (results.length) {
      const rows = results.map((r) => `| ${r.kill} | ${r.restartCount} | ${seconds(r.processBackMs)} | ${seconds(r.healthyMs)} |`);
      console.log(
        `\nFaults: container restarts (${new Date().toISOString()})\n| kill | restartCount | process back | proxy health all True |\n|---|---|---:|---:|\n${rows.join('\n')}\n`,
      );
    }
    if (config) await downLab(config).catch(() => undefined);
    await home?.cleanup();
  });

  /** SIGKILLs the proxy-server; resolves once it runs again and `proxy health` is all True. */
  const killAndRecover = async (kill: string): Promise<{ before: ContainerStatus; after: ContainerStatus; killedAt: number; startedAt: number }> => {
    const before = await proxyServer();
    expect(alive(before.pid), `proxy-server pid ${before.pid}`).toBe(true);
    const killedAt = Date.now();
    process.kill(before.pid, 'SIGKILL');
    // Why it is not healthy yet, each reason from when it was first seen: where the time goes.
    const timeline: string[] = [];
    let last = '';
    await waitUntil(
      async () => {
        const why = await unhealthy();
        const reason = (why ?? 'all True').replace(/\d+(\.\d+)*(:\d+)?/g, 'N');
        if (reason !== last) timeline.push(`  +${seconds(Date.now() - killedAt)} ${(last = reason)}`);
        return why === null ? true : undefined;
      },
      `${kill}: proxy health all True`,
      RECOVERY_BOUND_MS,
      HEALTH_POLL_MS,
    );
    const healthyMs = Date.now() - killedAt;
    console.log(`${kill}: proxy health after the kill\n${timeline.join('\n')}`);
    const after = await waitUntil(
      async () => {
        const now = await proxyServer();
        return now.status.restartCount > before.status.restartCount && now.status.state.running ? now : undefined;
      },
      `${kill}: restartCount of proxy-server to rise`,
      30_000,
      200,
    );
    expect(after.pod.metadata.uid, 'the same pod').toBe(before.pod.metadata.uid);
    expect(after.status.restartCount).toBe(before.status.restartCount + 1);
    expect(after.pid).not.toBe(before.pid);
    expect(after.status.lastState.terminated?.exitCode, 'lastState: the killed run').toBe(137);
    const startedAt = await processStartMs(after.pid);
    results.push({
      kill,
      restartCount: `${before.status.restartCount} → ${after.status.restartCount}`,
      processBackMs: startedAt - killedAt,
      healthyMs,
    });
    console.log(`${kill}: process back after ${seconds(startedAt - killedAt)}, proxy health all True after ${seconds(healthyMs)}`);
    return { before: before.status, after: after.status, killedAt, startedAt };
  };

  it('first SIGKILL of a running proxy-server: restarted at once, no back-off; proxy health all True again', async () => {
    const { pid } = await proxyServer();
    const age = Date.now() - (await processStartMs(pid));
    if (age < POD_AGE_MS) await new Promise((r) => setTimeout(r, POD_AGE_MS - age));
    const { killedAt, startedAt } = await killAndRecover(`first SIGKILL (container ${Math.round(Math.max(age, POD_AGE_MS) / 1000)} s old)`);
    // Order, not speed: the new run started before a 10 s back-off would have let it.
    expect(startedAt - killedAt, 'the first restart is not backed off').toBeLessThan(DEFAULT_BACKOFF.initialMs);
    expect(await nodeletLog()).toMatch(/\/proxy-server: exited with 137; restarting now/);
    // What the user runs: exit 0, one row, all True.
    const r = await cli(['proxy', 'health', '--config', labFile]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/cluster1\s+True\s+True\s+True/);
  }, 600_000);

  it('second SIGKILL within a minute: CrashLoopBackOff, the restart waits out the 10 s back-off', async () => {
    const kill = killAndRecover('second SIGKILL (within a minute)');
    // Meanwhile the container is reported waiting in CrashLoopBackOff, its killed run as lastState.
    const waiting = await waitUntil(
      async () => {
        const { status } = await proxyServer();
        return status.state.waiting?.reason === 'CrashLoopBackOff' ? status : undefined;
      },
      'proxy-server in CrashLoopBackOff',
      DEFAULT_BACKOFF.initialMs,
      200,
    );
    expect(waiting.state.waiting?.message).toMatch(/^back-off 10s restarting failed container=proxy-server /);
    expect(waiting.lastState.terminated?.exitCode).toBe(137);
    const { killedAt, startedAt } = await kill;
    expect(startedAt - killedAt, 'the second restart waited out the back-off').toBeGreaterThanOrEqual(DEFAULT_BACKOFF.initialMs);
    expect(await nodeletLog()).toMatch(/\/proxy-server: exited with 137; restarting in 10000 ms/);
  }, 120_000);

  it('down leaves no process or namespace of the lab behind', async () => {
    hub?.close();
    hub = undefined;
    await downLab(config);
    const left = await machineSnapshot(home.home);
    expect(left.processes).toEqual([]);
    expect(left.netns.filter((n) => n.includes(LAB))).toEqual([]);
  }, 300_000);
});
