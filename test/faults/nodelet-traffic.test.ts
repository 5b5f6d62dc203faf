// A lab of its own, not the shared hub + cluster1 one: it SIGKILLs cluster1's nodelet under traffic and asserts no container restarted (faults run alone).
import fs from 'node:fs/promises';
import path from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeCluster } from '../../src/addons/cluster-proxy/health.js';
import { hubTunnel } from '../../src/addons/cluster-proxy/hub-tunnel.js';
import { PROXY_NAMESPACE } from '../../src/addons/cluster-proxy/constants.js';
import { hubClientFor } from '../../src/addons/hub-client.js';
import type { LabConfig } from '../../src/config/index.js';
import type { KubeClient } from '../../src/kube/client.js';
import { downLab } from '../../src/lab/lifecycle.js';
import { labDir } from '../../src/paths.js';
import type { TunnelClient } from '../../src/tunnel/index.js';
import { isolatedLabHome, kubectl, kubectlPath, machineSnapshot, hubAndCluster1Config } from '../support/lab.js';
import { upLabIn } from '../support/test-lab.js';
import { nodeReadySince } from '../support/node-ready.js';
import { alive, processStartTicks } from '../support/process.js';
import { steadyTraffic } from '../support/steady-traffic.js';
import { waitUntil } from '../support/wait.js';

/**
 * Issue 32, item 1, under load: cluster1's nodelet is SIGKILLed while requests go to cluster1's API
 * server through the hub's proxy-server and cluster1's proxy-agent, and while the proxy-agent writes
 * log lines (each a numbered marker: a dial the agent refuses, `port 1000NN is out of range`, sent
 * through the same tunnel) that a `kubectl logs -f` follows. The supervisor starts a new nodelet, which
 * adopts every running container. Asserted: no container of cluster1 restarted (same id, start time
 * and process); no request failed after the node is Ready again; the follow started before the kill
 * ends when the nodelet dies (as with a kubelet: the API server and kubectl do not reconnect), and one
 * started after the nodelet is back streams the same file with every marker once, also those written
 * while no nodelet ran. The new nodelet listens on its kubelet API before it posts Ready, as a kubelet
 * does: a `kubectl logs` sent the moment the node is Ready answers at the first try, and a `kubectl exec`
 * into the agent runs; an exec session open at the kill ends with the nodelet (as with a kubelet).
 * Figures are printed for docs/reliability.md.
 */

const LAB = 'faults-nodelet';
const CLUSTER = 'cluster1';
const NODE = `${CLUSTER}-nodelet`;
const INTERVAL_MS = 50;
const REQUEST_TIMEOUT_MS = 2_000;
const MARKER_INTERVAL_MS = 250;
/** Traffic and markers before the kill, and after the node is Ready again. */
const BEFORE_KILL_MS = 3_000;
const AFTER_READY_MS = 10_000;
/** …and at least this many requests after Ready, however busy the machine (a busy one sends fewer than one per INTERVAL_MS). */
const MIN_REQUESTS_AFTER_READY = 100;
const MARKER_PORT_BASE = 100_000;
/** Run by `kubectl exec` in the proxy-agent container after the nodelet is back: its output and exit code are checked. */
const EXEC_SCRIPT = 'echo exec-after-restart; exit 3';
/** The exec session open across the kill: a shell printing a tick every 200 ms. */
const SESSION_SCRIPT = 'while sleep 0.2; do echo tick; done';

interface PodJson {
  metadata: { name: string; namespace: string; uid: string };
  status: { containerStatuses?: { name: string; containerID?: string; restartCount: number; state?: { running?: { startedAt?: string } } }[] };
}

interface Follow {
  child: ResultPromise;
  output: () => string;
  endedAt: () => number | null;
}

/** Pids of the processes whose command line contains `text` (the containers' processes are the host's too). */
async function processesRunning(text: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    const cmdline = await fs.readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(text) && !cmdline.includes('--kubeconfig')) pids.push(Number(entry)); // not kubectl's own
  }
  return pids;
}

const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const markersIn = (text: string) => [...text.matchAll(/port (\d+) is out of range/g)].map((m) => Number(m[1]) - MARKER_PORT_BASE);

describe('faults: the nodelet SIGKILLed under tunnel traffic and `kubectl logs -f`', () => {
  let home: Awaited<ReturnType<typeof isolatedLabHome>>;
  let config: LabConfig;
  let kubeconfig = '';
  let hub: KubeClient | undefined;
  let client: TunnelClient | undefined;
  const follows: Follow[] = [];
  const runDir = () => path.join(labDir(LAB), 'clusters', CLUSTER, 'run');
  const nodeletPid = async () => Number((await fs.readFile(path.join(runDir(), 'nodelet.pid'), 'utf8').catch(() => '0')).trim());

  const pods = async (): Promise<PodJson[]> => {
    const r = await kubectl(kubeconfig, ['--context', CLUSTER, 'get', 'pods', '-A', '-o', 'json']);
    if (r.exitCode !== 0) throw new Error(`kubectl get pods: ${r.stderr}`);
    return (JSON.parse(r.stdout) as { items: PodJson[] }).items;
  };

  /** Every container of cluster1: its pod, id, restarts, start time, and when its process started. */
  const containers = async (): Promise<Record<string, string>> => {
    const rows: [string, string][] = [];
    for (const p of await pods()) {
      for (const c of p.status.containerStatuses ?? []) {
        const pid = Number(c.containerID?.replace('ocm-lab://', ''));
        const started = pid > 0 && alive(pid) ? `started at tick ${await processStartTicks(pid)}` : 'gone';
        rows.push([
          `${p.metadata.namespace}/${p.metadata.name}/${c.name}`,
          `${p.metadata.uid} ${c.containerID ?? ''} restarts ${c.restartCount} startedAt ${c.state?.running?.startedAt ?? '-'} process ${started}`,
        ]);
      }
    }
    return Object.fromEntries(rows);
  };

  /** `kubectl logs -f` of the proxy-agent from now on. */
  const follow = async (pod: string, args: string[]): Promise<Follow> => {
    let out = '';
    let endedAt: number | null = null;
    const child = execa(
      await kubectlPath(),
      ['--kubeconfig', kubeconfig, '--context', CLUSTER, '-n', PROXY_NAMESPACE, 'logs', '-f', pod, '-c', 'proxy-agent', ...args],
      { reject: false, all: true },
    );
    child.all?.on('data', (d: Buffer) => (out += d.toString()));
    void child.then(() => (endedAt = Date.now()));
    const f = { child, output: () => out, endedAt: () => endedAt };
    follows.push(f);
    return f;
  };

  /** An exec session into the proxy-agent that prints a tick every 200 ms until its stream ends. */
  const openExecSession = async (pod: string): Promise<Follow & { ticks: () => number }> => {
    let out = '';
    let endedAt: number | null = null;
    const child = execa(
      await kubectlPath(),
      ['--kubeconfig', kubeconfig, '--context', CLUSTER, '-n', PROXY_NAMESPACE, 'exec', pod, '-c', 'proxy-agent', '--', 'sh', '-c', SESSION_SCRIPT],
      { reject: false, all: true },
    );
    child.all?.on('data', (d: Buffer) => (out += d.toString()));
    void child.then(() => (endedAt = Date.now()));
    const f = { child, output: () => out, endedAt: () => endedAt, ticks: () => out.split('tick').length - 1 };
    follows.push(f);
    return f;
  };

  beforeAll(async () => {
    home = await isolatedLabHome(LAB);
    ({ config, kubeconfig } = await upLabIn(home.home, hubAndCluster1Config(LAB, ['cluster-proxy'])));
    hub = await hubClientFor(config);
    client = (await hubTunnel(hub)).client;
    await waitUntil(
      async () => ((await probeCluster(client!, CLUSTER, REQUEST_TIMEOUT_MS)).ok ? true : undefined),
      'a first probe of cluster1 through the tunnel',
      60_000,
    );
  }, 600_000);

  afterAll(async () => {
    for (const f of follows) f.child.kill('SIGTERM');
    await Promise.allSettled(follows.map((f) => f.child));
    client?.close();
    hub?.close();
    if (config) await downLab(config).catch(() => undefined);
    await home?.cleanup();
  }, 300_000);

  it('SIGKILL of cluster1 nodelet under traffic: no container restarted, no request failed after Ready, the agent log followed again', async () => {
    const agentPod = (await pods()).find((p) => p.metadata.namespace === PROXY_NAMESPACE && p.status.containerStatuses?.some((c) => c.name === 'proxy-agent'));
    expect(agentPod, 'the proxy-agent pod on cluster1').toBeDefined();
    const podName = agentPod!.metadata.name;
    const logFile = path.join(
      labDir(LAB),
      'clusters',
      CLUSTER,
      'nodelet',
      'pods',
      `${PROXY_NAMESPACE}_${podName}_${agentPod!.metadata.uid}`,
      'proxy-agent.log',
    );
    const logInode = (await fs.stat(logFile)).ino;
    const before = await containers();
    expect(Object.keys(before).length, 'containers on cluster1').toBeGreaterThan(3);

    // Markers: each a dial the agent refuses and logs, numbered by its port.
    const markers: { seq: number; at: number; error: string }[] = [];
    let seq = 0;
    const marking = setInterval(() => {
      const n = seq++;
      const at = Date.now();
      client!.dial(`${CLUSTER}:${MARKER_PORT_BASE + n}`).then(
        (socket) => (socket.destroy(), markers.push({ seq: n, at, error: 'dialled' })),
        (err: Error) => markers.push({ seq: n, at, error: err.message }),
      );
    }, MARKER_INTERVAL_MS);
    const early = await follow(podName, ['--tail', '0']);
    const session = await openExecSession(podName);
    const traffic = steadyTraffic(() => probeCluster(client!, CLUSTER, REQUEST_TIMEOUT_MS), INTERVAL_MS, REQUEST_TIMEOUT_MS);
    let killedAt = 0;
    let readyAt = 0;
    let newPidAt = 0;
    let logsAt = 0;
    let logsAtReady: Awaited<ReturnType<typeof kubectl>> | undefined;
    let execAfter: Awaited<ReturnType<typeof kubectl>> | undefined;
    let late: Follow | undefined;
    try {
      await new Promise((r) => setTimeout(r, BEFORE_KILL_MS));
      expect(markersIn(early.output()).length, 'the follow started before the kill streams markers').toBeGreaterThan(0);
      const pid = await nodeletPid();
      expect(alive(pid), `nodelet pid ${pid}`).toBe(true);
      killedAt = Date.now();
      process.kill(pid, 'SIGKILL');
      await waitUntil(
        async () => {
          const now = await nodeletPid();
          return now !== pid && now > 0 && alive(now) ? now : undefined;
        },
        'the supervisor starts a new nodelet',
        30_000,
        50,
      );
      newPidAt = Date.now();
      await waitUntil(async () => ((await nodeReadySince(kubeconfig, CLUSTER, NODE, killedAt)) ? true : undefined), 'cluster1 node Ready again', 120_000, 100);
      readyAt = Date.now();
      // As a kubelet, the new nodelet listens on its kubelet API (and knows its pods) before it posts Ready: one try, no retry.
      logsAtReady = await kubectl(kubeconfig, ['--context', CLUSTER, '-n', PROXY_NAMESPACE, 'logs', podName, '-c', 'proxy-agent', '--tail', '1']);
      logsAt = Date.now();
      execAfter = await kubectl(kubeconfig, ['--context', CLUSTER, '-n', PROXY_NAMESPACE, 'exec', podName, '-c', 'proxy-agent', '--', 'sh', '-c', EXEC_SCRIPT]);
      late = await follow(podName, []);
      await new Promise((r) => setTimeout(r, AFTER_READY_MS));
      await waitUntil(
        async () => (traffic.samples.filter((x) => x.start >= readyAt).length >= MIN_REQUESTS_AFTER_READY ? true : undefined),
        `${MIN_REQUESTS_AFTER_READY} requests after Ready`,
        60_000,
        100,
      );
    } finally {
      clearInterval(marking);
      await traffic.stop();
    }
    const lastSeq = seq - 1;
    await waitUntil(async () => (markersIn(late.output()).includes(lastSeq) ? true : undefined), `marker ${lastSeq} in the new follow`, 15_000, 100).catch(
      (err: Error) => {
        const ended = late.endedAt() === null ? 'still running' : `ended (exit ${String(late.child.exitCode)})`;
        throw new Error(`${err.message}; that kubectl logs -f ${ended}, printed ${JSON.stringify(late.output().slice(-500))}`);
      },
    );

    // Requests: during the nodelet's absence (kill → Ready) and after.
    const failed = traffic.samples.filter((x) => !x.ok);
    const during = traffic.samples.filter((x) => x.end >= killedAt && x.start < readyAt);
    const after = traffic.samples.filter((x) => x.start >= readyAt);
    const failedDuring = during.filter((x) => !x.ok);
    const failedAfter = after.filter((x) => !x.ok);
    const earlyMarkers = markersIn(early.output());
    const lateMarkers = markersIn(late.output());
    const sessionShellsLeft = await processesRunning(SESSION_SCRIPT);
    const markersDuringOutage = markers.filter((m) => m.at >= killedAt && m.at < readyAt).map((m) => m.seq);
    console.log(
      [
        `\nFaults: nodelet SIGKILL under traffic (${new Date().toISOString()})`,
        `nodelet: new process after ${s(newPidAt - killedAt)}, node Ready (Lease renewed) after ${s(readyAt - killedAt)}, ` +
          `its log served (first try at Ready: exit ${String(logsAtReady?.exitCode)}) after ${s(logsAt - killedAt)}`,
        `exec after Ready: exit ${String(execAfter?.exitCode)}, printed ${JSON.stringify(execAfter?.stdout)}; ` +
          `exec session open at the kill: ${session.endedAt() === null ? 'still running' : `ended ${s(session.endedAt()! - killedAt)} after the kill (exit ${String(session.child.exitCode)})`}, ` +
          `${session.ticks()} ticks; its shell in the container ${sessionShellsLeft.length ? `still runs (pids ${sessionShellsLeft.join(', ')})` : 'ended'}`,
        `requests: ${traffic.samples.length} in all, ${failed.length} failed; kill → Ready: ${failedDuring.length} of ${during.length} failed; ` +
          `Ready → +${s(Math.max(...after.map((x) => x.start)) - readyAt)}: ${failedAfter.length} of ${after.length} failed`,
        ...failed.slice(0, 10).map((x) => `  failed at +${x.start - killedAt} ms: ${x.error}`),
        `markers: ${seq} (every ${MARKER_INTERVAL_MS} ms), ${markersDuringOutage.length} written while no nodelet ran`,
        `logs -f started before the kill: ${early.endedAt() === null ? 'still running' : `ended ${s(early.endedAt()! - killedAt)} after the kill (exit ${String(early.child.exitCode)})`}; ` +
          `markers ${earlyMarkers[0]}–${earlyMarkers.at(-1)} (${earlyMarkers.length}); last output: ${JSON.stringify(early.output().slice(-200))}`,
        `logs -f started after Ready: markers ${lateMarkers[0]}–${lateMarkers.at(-1)} (${lateMarkers.length})`,
      ].join('\n'),
    );

    expect(await containers(), 'every container of cluster1 the same run as before the kill').toEqual(before);
    expect(logsAtReady?.exitCode, `kubectl logs at the moment the node is Ready: ${logsAtReady?.stderr}`).toBe(0);
    expect(execAfter?.exitCode, `kubectl exec after the nodelet is back: ${execAfter?.stderr}`).toBe(3);
    expect(execAfter?.stdout.trim()).toBe('exec-after-restart');
    // The exec session open at the kill: its stream ran through the nodelet, so it ends with it, as a kubelet's does.
    expect(session.ticks(), 'ticks of the exec session before the kill').toBeGreaterThan(0);
    expect(session.endedAt(), 'the exec session open at the kill ended when the nodelet died').not.toBeNull();
    expect(
      markers.filter((m) => !/out of range/.test(m.error)).map((m) => `${m.seq}: ${m.error}`),
      'every marker refused by the agent',
    ).toEqual([]);
    expect(
      failedAfter.map((x) => `+${x.start - readyAt} ms: ${x.error}`),
      'requests through cluster-proxy that failed after the node was Ready',
    ).toEqual([]);
    expect(after.length, 'requests after Ready').toBeGreaterThanOrEqual(MIN_REQUESTS_AFTER_READY);
    // The follow of before the kill: its stream ended with the nodelet, as a kubelet's does.
    expect(early.endedAt(), 'kubectl logs -f of before the kill ended when the nodelet died').not.toBeNull();
    expect(earlyMarkers, 'its markers in order, none missing or twice').toEqual(Array.from({ length: earlyMarkers.length }, (_, i) => earlyMarkers[0]! + i));
    // The follow of after: the same file, every marker once and in order, also those written while no nodelet ran.
    expect(lateMarkers, 'every marker once, in order').toEqual(Array.from({ length: seq }, (_, i) => i));
    expect(markersDuringOutage.length, 'markers written while no nodelet ran').toBeGreaterThan(0);
    expect((await fs.stat(logFile)).ino, 'the same log file').toBe(logInode);
    await expect(fs.stat(logFile.replace(/\.log$/, '.previous.log')), 'no previous run').rejects.toThrow();
    const nodeletLog = await fs.readFile(path.join(labDir(LAB), 'clusters', CLUSTER, 'logs', 'nodelet.log'), 'utf8');
    expect(nodeletLog).toContain(`adopted running containers`);
  }, 300_000);

  it('down leaves no process of the lab behind', async () => {
    for (const f of follows) f.child.kill('SIGTERM');
    client?.close();
    client = undefined;
    await downLab(config);
    expect((await machineSnapshot(home.home)).processes).toEqual([]);
  }, 300_000);
});
