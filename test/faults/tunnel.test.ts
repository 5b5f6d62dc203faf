// A lab of its own, not the shared hub + cluster1 one: it SIGKILLs the tunnel's and the gateway's processes under traffic, 2 s to recover (faults run alone).
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeCluster } from '../../src/addons/cluster-proxy/health.js';
import { hubTunnel } from '../../src/addons/cluster-proxy/hub-tunnel.js';
import { PROXY_NAMESPACE, PROXY_PORTS } from '../../src/addons/cluster-proxy/constants.js';
import { GATEWAY_API, GATEWAY_NAMESPACE, GATEWAY_RESOURCE } from '../../src/addons/cluster-gateway/constants.js';
import { ADDON_MANAGER_NAMESPACE } from '../../src/addons/framework/names.js';
import { hubClientFor } from '../../src/addons/hub-client.js';
import { managerName } from '../../src/addons/install.js';
import type { LabConfig } from '../../src/config/index.js';
import type { KubeClient } from '../../src/kube/client.js';
import { downLab } from '../../src/lab/lifecycle.js';
import type { TunnelClient } from '../../src/tunnel/index.js';
import { isolatedLabHome, kubectl, machineSnapshot, hubAndCluster1Config } from '../support/lab.js';
import { upLabIn } from '../support/test-lab.js';
import { alive, processStartMs } from '../support/process.js';
import { steadyTraffic, type Probe, type Sample } from '../support/steady-traffic.js';
import { waitUntil } from '../support/wait.js';

/**
 * Issue 16, the tunnel and gateway paths: steady `GET /healthz` traffic to cluster1's API server,
 * from the host through the hub's proxy-server and cluster1's proxy-agent (the tunnel), or
 * through the hub API server's aggregation to cluster-gateway and on through the tunnel (the
 * gateway), while one process is SIGKILLed at a time: the proxy-server, the proxy-agent,
 * cluster-gateway, and the addon managers of cluster-proxy and cluster-gateway. Goals: the
 * nodelet restarts it, no request fails outside the outage, every request after recovery is
 * ok, the tunnel carries requests again within 2 s of the proxy-server being back (its own
 * downtime is the nodelet's restart, at once for a first crash: test/faults/container-restart.test.ts), and a manager's death
 * (off the data path) fails no request at all.
 */

const LAB = 'faults-tunnel';
const GATEWAY_PATH = `/apis/${GATEWAY_API}/${GATEWAY_RESOURCE}/cluster1/proxy`;
const INTERVAL_MS = 50;
const REQUEST_TIMEOUT_MS = 2_000;
const BACK_AFTER_SERVER_GOAL_MS = 2_000;
const RECOVERY_BOUND_MS = 30_000;
/** Traffic kept up after recovery, all of which must be ok. */
const AFTER_RECOVERY_MS = 3_000;

interface ContainerStatus {
  name: string;
  restartCount: number;
  ready: boolean;
  containerID?: string;
}
interface PodJson {
  metadata: { name: string; uid: string };
  status: { podIP?: string; containerStatuses?: ContainerStatus[] };
}

interface FaultResult {
  fault: string;
  restoredBy: string;
  outageMs: number;
  requests: number;
  failed: number;
  /** The reference point "back": the server listening again, or (agent) its new process started. */
  backLabel: string;
  backAfterMs: number;
  lost: number;
}

function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host, port, timeout: 500 });
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
    s.once('timeout', () => (s.destroy(), resolve(false)));
  });
}

/** The first moment after the ports stopped accepting that every one accepts again. */
async function listeningAgain(host: string, ports: number[], deadline: number): Promise<number> {
  const all = async () => (await Promise.all(ports.map((p) => accepts(host, p)))).every(Boolean);
  while ((await all()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  while (Date.now() < deadline) {
    if (await all()) return Date.now();
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`proxy-server ports ${ports.join(', ')} on ${host} not listening again by the deadline`);
}

/**
 * Outage: from the first request that failed after the kill to the end of the first ok one
 * after it. Lost: failures outside that window (ended before the kill, or started after recovery).
 */
function analyse(samples: Sample[], killedAt: number): { first?: Sample; recovered?: Sample; failed: Sample[]; lost: Sample[] } {
  const byStart = [...samples].sort((a, b) => a.start - b.start);
  const failed = byStart.filter((s) => !s.ok);
  const first = failed.find((s) => s.end >= killedAt);
  const recovered = first ? [...byStart].filter((s) => s.ok && s.start >= first.start).sort((a, b) => a.end - b.end)[0] : undefined;
  const lost = failed.filter((s) => s.end < killedAt || (recovered !== undefined && s.start > recovered.end));
  return { first, recovered, failed, lost };
}

const ms = (n: number) => `${(n / 1000).toFixed(2)} s`;

function table(results: FaultResult[]): string {
  const rows = results.map(
    (r) => `| ${r.fault} | ${r.restoredBy} | ${ms(r.outageMs)} | ${r.failed} of ${r.requests} | ${ms(r.backAfterMs)} (${r.backLabel}) | ${r.lost} |`,
  );
  return ['| fault | restored by | outage | requests failed | back after server back | lost |', '|---|---|---:|---:|---:|---:|', ...rows].join('\n');
}

describe('faults: the tunnel and gateway paths under steady traffic (proxy-server, proxy-agent, cluster-gateway and addon managers SIGKILLed)', () => {
  let home: Awaited<ReturnType<typeof isolatedLabHome>>;
  let config: LabConfig;
  let kubeconfig: string;
  let hub: KubeClient | undefined;
  let client: TunnelClient | undefined;
  let serverHost: string;
  const results: FaultResult[] = [];

  const pod = async (
    context: string,
    namespace: string,
    container: string,
    podPrefix = '',
  ): Promise<{ pod: PodJson; status: ContainerStatus; pid: number }> => {
    const r = await kubectl(kubeconfig, ['--context', context, '-n', namespace, 'get', 'pods', '-o', 'json']);
    if (r.exitCode !== 0) throw new Error(`kubectl get pods: ${r.stderr}`);
    const items = (JSON.parse(r.stdout) as { items: PodJson[] }).items;
    for (const p of items.filter((i) => i.metadata.name.startsWith(podPrefix))) {
      const status = p.status.containerStatuses?.find((c) => c.name === container);
      if (status) return { pod: p, status, pid: Number(status.containerID?.replace('ocm-lab://', '')) };
    }
    throw new Error(`no pod with a container ${container} in ${context}/${namespace}`);
  };

  beforeAll(async () => {
    home = await isolatedLabHome(LAB);
    ({ config, kubeconfig } = await upLabIn(home.home, hubAndCluster1Config(LAB, ['cluster-proxy', 'managed-serviceaccount', 'cluster-gateway'])));
    hub = await hubClientFor(config);
    // One long-lived client, as a hub component (cluster-gateway) keeps it: it must ride out the faults.
    const tunnel = await hubTunnel(hub);
    client = tunnel.client;
    serverHost = tunnel.address.slice(0, tunnel.address.lastIndexOf(':'));
    await waitUntil(
      async () => ((await probeCluster(client!, 'cluster1', REQUEST_TIMEOUT_MS)).ok ? true : undefined),
      'a first probe of cluster1 through the tunnel',
      60_000,
    );
    await waitUntil(async () => ((await gatewayProbe()).ok ? true : undefined), 'a first request to cluster1 through cluster-gateway', 60_000);
    // The gateway's answers are cluster1's: it calls there as its ManagedServiceAccount, a user only cluster1 knows.
    const refused = await hub.getText(`${GATEWAY_PATH}/api/v1/namespaces/kube-system`).then(
      () => '',
      (err: Error) => err.message,
    );
    expect(refused).toMatch(/403 Forbidden: .*User "system:serviceaccount:open-cluster-management-managed-serviceaccount:cluster-gateway"/);
  });

  const tunnelProbe: Probe = () => probeCluster(client!, 'cluster1', REQUEST_TIMEOUT_MS);
  const gatewayProbe: Probe = async () => {
    const text = await hub!.getText(`${GATEWAY_PATH}/healthz`);
    return text === 'ok' ? { ok: true } : { ok: false, error: `answered ${text.slice(0, 80)}` };
  };

  afterAll(async () => {
    client?.close();
    hub?.close();
    if (results.length) console.log(`\nFaults: the tunnel path (${new Date().toISOString()})\n${table(results)}\n`);
    if (config) await downLab(config).catch(() => undefined);
    await home?.cleanup();
  });

  interface Fault {
    fault: string;
    context: string;
    namespace: string;
    container: string;
    probe: Probe;
    /** The proxy-server: "back" is its ports listening again; else the new process's start. */
    isServer?: boolean;
    /** Off the data path: not one request may fail. */
    offPath?: boolean;
    /** Which pod, where several have a container of that name. */
    podPrefix?: string;
  }

  const inject = async ({ fault, context, namespace, container, probe, isServer = false, offPath = false, podPrefix = '' }: Fault): Promise<FaultResult> => {
    const before = await pod(context, namespace, container, podPrefix);
    expect(alive(before.pid), `pid ${before.pid} of ${container}`).toBe(true);
    const traffic = steadyTraffic(probe, INTERVAL_MS, REQUEST_TIMEOUT_MS);
    let killedAt = 0;
    let back: Promise<number> | undefined;
    try {
      await new Promise((r) => setTimeout(r, 1_000));
      const deadline = Date.now() + RECOVERY_BOUND_MS;
      if (isServer) back = listeningAgain(serverHost, [PROXY_PORTS.frontend, PROXY_PORTS.agent], deadline);
      killedAt = Date.now();
      process.kill(before.pid, 'SIGKILL');
      if (offPath) {
        // Traffic until the manager is back and ready, and some more: none of it may fail.
        await waitUntil(
          async () => {
            const now = await pod(context, namespace, container, podPrefix);
            return now.status.restartCount > before.status.restartCount && now.status.ready ? true : undefined;
          },
          `${fault}: ${container} restarted and ready`,
          RECOVERY_BOUND_MS,
          100,
        );
        await new Promise((r) => setTimeout(r, AFTER_RECOVERY_MS));
      } else {
        await waitUntil(
          async () => {
            const a = analyse(traffic.samples, killedAt);
            return a.recovered && Date.now() > a.recovered.end + AFTER_RECOVERY_MS ? true : undefined;
          },
          `${fault}: a request to succeed again, then ${AFTER_RECOVERY_MS} ms more traffic`,
          RECOVERY_BOUND_MS + AFTER_RECOVERY_MS,
          100,
        );
      }
    } finally {
      await traffic.stop();
    }
    // Restored by the nodelet: the same pod, its container restarted once, under a new process.
    const after = await waitUntil(
      async () => {
        const now = await pod(context, namespace, container, podPrefix);
        return now.status.restartCount > before.status.restartCount && now.status.ready ? now : undefined;
      },
      `${fault}: restartCount of ${container} to rise`,
      30_000,
    );
    expect(after.pod.metadata.uid).toBe(before.pod.metadata.uid);
    expect(after.status.restartCount).toBe(before.status.restartCount + 1);
    expect(after.pid).not.toBe(before.pid);
    const backAt = back ? await back : await processStartMs(after.pid);

    const a = analyse(traffic.samples, killedAt);
    if (offPath) {
      const result: FaultResult = {
        fault,
        restoredBy: `nodelet restart (restartCount ${before.status.restartCount} → ${after.status.restartCount})`,
        outageMs: 0,
        requests: traffic.samples.length,
        failed: a.failed.length,
        backLabel: 'off the data path',
        backAfterMs: 0,
        lost: a.failed.length,
      };
      results.push(result);
      console.log(`${fault}:\n${table([result])}`);
      expect(
        a.failed.map((s) => `${new Date(s.start).toISOString()} +${s.end - s.start} ms: ${s.error}`),
        `${fault}: requests failed although the manager is off the data path`,
      ).toEqual([]);
      expect(traffic.samples.length, 'requests during the fault').toBeGreaterThan(AFTER_RECOVERY_MS / INTERVAL_MS / 2);
      return result;
    }
    const result: FaultResult = {
      fault,
      restoredBy: `nodelet restart (restartCount ${before.status.restartCount} → ${after.status.restartCount})`,
      outageMs: a.recovered!.end - a.first!.start,
      requests: traffic.samples.length,
      failed: a.failed.length,
      backLabel: isServer ? 'server listening' : `${container} process started`,
      backAfterMs: a.recovered!.end - backAt,
      lost: a.lost.length,
    };
    results.push(result);
    const reasons = (from: number, to: number) => {
      const counts = new Map<string, number>();
      for (const s of a.failed.filter((x) => x.start >= from && x.start < to)) {
        const why = (s.error ?? '?').replace(/\d+(\.\d+)*(:\d+)?/g, 'N');
        counts.set(why, (counts.get(why) ?? 0) + 1);
      }
      return [...counts].map(([why, n]) => `  ${n} × ${why}`).join('\n') || '  none';
    };
    console.log(`${fault}: failures before back:\n${reasons(0, backAt)}\nfailures after back:\n${reasons(backAt, Infinity)}`);
    console.log(
      `${fault}: killed at ${new Date(killedAt).toISOString()}, first failure +${a.first!.start - killedAt} ms (${a.first!.error}), back +${backAt - killedAt} ms, first ok +${a.recovered!.end - killedAt} ms\n${table([result])}`,
    );
    // Structural goals, strictly.
    expect(a.failed.length, 'the kill interrupted the traffic').toBeGreaterThan(0);
    expect(
      a.lost.map((s) => `${new Date(s.start).toISOString()} +${s.end - s.start} ms: ${s.error}`),
      'failures outside the outage window',
    ).toEqual([]);
    expect(traffic.samples.filter((s) => s.start > a.recovered!.end).length, 'requests after recovery').toBeGreaterThan(AFTER_RECOVERY_MS / INTERVAL_MS / 2);
    return result;
  };

  it('SIGKILL of the hub proxy-server: restarted by the nodelet, tunnel back within 2 s of the server listening, nothing lost outside the outage', async () => {
    const r = await inject({
      fault: 'hub proxy-server SIGKILL',
      context: 'hub',
      namespace: PROXY_NAMESPACE,
      container: 'proxy-server',
      probe: tunnelProbe,
      isServer: true,
    });
    expect(r.backAfterMs, 'tunnel back after the proxy-server listens again').toBeLessThanOrEqual(BACK_AFTER_SERVER_GOAL_MS);
  }, 120_000);

  it('SIGKILL of cluster1 proxy-agent: restarted by the nodelet, tunnel back, nothing lost outside the outage', async () => {
    await inject({ fault: 'cluster1 proxy-agent SIGKILL', context: 'cluster1', namespace: PROXY_NAMESPACE, container: 'proxy-agent', probe: tunnelProbe });
  }, 120_000);

  it('SIGKILL of cluster-gateway under gateway traffic: restarted by the nodelet, requests through the hub API server back, nothing lost outside the outage', async () => {
    await inject({
      fault: 'hub cluster-gateway SIGKILL (gateway traffic)',
      context: 'hub',
      namespace: GATEWAY_NAMESPACE,
      container: 'gateway',
      probe: gatewayProbe,
    });
  }, 120_000);

  it.each(['cluster-proxy', 'cluster-gateway'] as const)(
    'SIGKILL of the %s addon manager under gateway traffic (tunnel and gateway): restarted by the nodelet, not one request fails',
    async (addon) => {
      await inject({
        fault: `hub ${managerName(addon)} SIGKILL (gateway traffic)`,
        context: 'hub',
        namespace: ADDON_MANAGER_NAMESPACE,
        container: 'manager',
        podPrefix: `${managerName(addon)}-`,
        probe: gatewayProbe,
        offPath: true,
      });
    },
    120_000,
  );

  it('down leaves no process, namespace or link of the lab behind', async () => {
    client?.close();
    client = undefined;
    await downLab(config);
    const left = await machineSnapshot(home.home);
    expect(left.processes).toEqual([]);
    expect(left.netns.filter((n) => n.includes(LAB))).toEqual([]);
  }, 300_000);
});
