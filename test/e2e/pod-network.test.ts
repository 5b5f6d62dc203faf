import fs from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PodNetwork, renderServiceRules, vpcVethName, type EndpointSliceLike, type ServiceLike } from '../../src/nodelet/pod-network/index.js';
import {
  applyNetwork,
  chainName,
  findLeftovers,
  interfacePrefix,
  networkHealth,
  overlaps,
  planNetwork,
  probeNetworkCapability,
  teardownNetwork,
  type NetworkPlan,
  type NetworkResource,
} from '../../src/runtime/local/network/index.js';
import { run } from '../../src/util/exec.js';
import { NetnsSockets } from '../support/netns-sockets.js';

// A lab name of this test only; every namespace, link and chain it creates carries it.
const LAB = 'e2e-podnet';
const PORT = 18591;
const OWN_PREFIX = interfacePrefix(LAB);
const OWN_CHAIN = chainName(LAB);

const input = {
  labName: LAB,
  vpcs: [
    { name: 'hubvpc', hub: true, clusters: ['hub'] },
    { name: 'spokevpc', hub: false, clusters: ['c1'] },
  ],
};

/**
 * What this test can change on the machine: namespaces, links, every iptables table
 * (iptables-save, counters dropped) and forwarding. Other labs (other tests, other
 * helpers) may come and go while it runs, so their entries are left out, and so is
 * forwarding while one exists (the last lab down restores it); everything else, ours
 * included, must be identical.
 */
async function snapshot(): Promise<Record<string, string[]>> {
  const otherLab = (s: string) =>
    (/ocmlab[.-]/.test(s) && !s.includes(`ocmlab.${LAB}.`)) ||
    (/OCMLAB-[0-9A-F]{6}/.test(s) && !s.includes(OWN_CHAIN)) ||
    (/ocm-lab:/.test(s) && !s.includes(`ocm-lab:${LAB}`)) ||
    (/\bol[0-9a-f]{6}\d+[hn]\b/.test(s) && !s.includes(OWN_PREFIX));
  const netns = (await run('ip', ['netns', 'list'])).stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split(' ')[0]!);
  const links = (JSON.parse((await run('ip', ['-j', 'link', 'show'])).stdout) as { ifname: string }[]).map((l) => l.ifname);
  const saved = (await run('iptables-save', [])).stdout.split('\n').filter((l) => l && !l.startsWith('#'));
  const otherLabs = saved.some(otherLab) || netns.some(otherLab);
  const rules = withoutEmptyTables(saved.filter((l) => !otherLab(l)).map((l) => l.replace(/\[\d+:\d+\]/g, '')));
  const forward = otherLabs ? ['(another lab is up)'] : [(await fs.readFile('/proc/sys/net/ipv4/ip_forward', 'utf8')).trim()];
  const keep = (lines: string[]) => lines.filter((l) => !otherLab(l)).sort();
  return { netns: keep(netns), links: keep(links), rules: rules.sort(), forward };
}

/** Compares snapshots; forwarding only when no other lab was up at either time. */
function expectAsBefore(after: Record<string, string[]>, before: Record<string, string[]>): void {
  const drop = (x: Record<string, string[]>, y: Record<string, string[]>) =>
    x.forward![0]!.startsWith('(') || y.forward![0]!.startsWith('(') ? { ...x, forward: [] } : x;
  expect(drop(after, before)).toEqual(drop(before, after));
}

/**
 * iptables-save lines without tables that hold no rule and only ACCEPT policies: the
 * nftables backend creates a table on its first use and keeps it, empty, which changes
 * nothing for any packet.
 */
function withoutEmptyTables(lines: string[]): string[] {
  const out: string[] = [];
  let block: string[] = [];
  const flush = () => {
    const meaningful = block.some(
      (l) => l.startsWith('-A ') || /^:\S+ (DROP|REJECT)/.test(l) || /^:(?!(PREROUTING|INPUT|FORWARD|OUTPUT|POSTROUTING) )/.test(l),
    );
    if (meaningful) out.push(...block);
    block = [];
  };
  for (const line of lines) {
    if (line.startsWith('*')) flush();
    block.push(line);
  }
  flush();
  return out;
}

const sockets = new NetnsSockets(PORT);
const startListener = (netns: string, address: string, name: string, port?: number) => sockets.listen(netns, address, name, port);
const connectFrom = (netns: string, address: string, port?: number) => sockets.connectFrom(netns, address, port);
const connectFromHost = (address: string) => sockets.connectFromHost(address);
const stopListeners = () => sockets.stopAll();

const uid = (n: number) => `${String(n).padStart(8, '0')}-aaaa-4bbb-8ccc-${String(n).padStart(12, '0')}`;

describe('pod networking in VPC namespaces (root)', () => {
  let before: Record<string, string[]>;
  let plan: NetworkPlan;
  const records: NetworkResource[] = [];
  const logs: string[] = [];
  const log = (line: string) => logs.push(line);
  let hubNet: PodNetwork;
  let spokeNet: PodNetwork;

  function podNetworkOf(cluster: 'hub' | 'c1'): PodNetwork {
    const vpc = plan.vpcs.find((v) => cluster in v.clusterAddresses)!;
    return new PodNetwork({
      labName: LAB,
      clusterName: cluster,
      vpcNetns: vpc.netns,
      podCidr: vpc.clusterPodCidrs[cluster]!,
      nodeIP: vpc.clusterAddresses[cluster]!,
      log,
    });
  }

  async function removeEverything(): Promise<void> {
    await stopListeners();
    await teardownNetwork([...records, ...(await findLeftovers(LAB))]);
  }

  beforeAll(async () => {
    const capability = await probeNetworkCapability();
    if (!capability.canIsolate) throw new Error(`this e2e test needs root with iproute2 and iptables: ${capability.reason}`);
    await teardownNetwork(await findLeftovers(LAB));
    before = await snapshot();
    plan = await planNetwork(input);
    await applyNetwork(plan, async (r) => {
      records.push(r);
    });
    hubNet = podNetworkOf('hub');
    spokeNet = podNetworkOf('c1');
  });

  afterAll(async () => {
    await removeEverything();
  });

  it('sets up a VPC namespace that pods can live behind', async () => {
    expect(await networkHealth(plan)).toEqual({ enforced: true, problems: [] });
    const [hub, spoke] = plan.vpcs;
    expect(overlaps(hub!.clusterPodCidrs.hub!, hub!.subnet)).toBe(true);
    expect(overlaps(spoke!.clusterPodCidrs.c1!, spoke!.subnet)).toBe(true);
  });

  it('gives two pods of one cluster their own addresses, so both listen on one port; pods, spokes and the host reach them as the VPC rule says', async () => {
    const [hub, spoke] = plan.vpcs;
    const hubAddr = hub!.clusterAddresses.hub!;
    const c1Addr = spoke!.clusterAddresses.c1!;
    const p1 = await spokeNet.setup(uid(1), 'default/p1');
    const p2 = await spokeNet.setup(uid(2), 'default/p2');
    const h1 = await hubNet.setup(uid(3), 'default/h1');
    expect(p1.podIP).not.toBe(p2.podIP);
    for (const p of [p1, p2]) expect(overlaps(`${p.podIP}/32`, spoke!.clusterPodCidrs.c1!)).toBe(true);
    expect(overlaps(`${h1.podIP}/32`, hub!.clusterPodCidrs.hub!)).toBe(true);
    expect(p1.netns).toMatch(new RegExp(`^ocmlab\\.${LAB}\\.[^.]+$`));
    expect(p1.netnsPath).toBe(`/var/run/netns/${p1.netns}`);

    // Both pods listen on the same port on every address of their own namespace.
    await Promise.all([
      startListener(p1.netns, '0.0.0.0', 'p1'),
      startListener(p2.netns, '0.0.0.0', 'p2'),
      startListener(h1.netns, '0.0.0.0', 'h1'),
      startListener(hub!.netns, hubAddr, 'hub-apiserver'),
      startListener(spoke!.netns, c1Addr, 'c1-apiserver'),
    ]);

    // Within a cluster, and to the cluster's own address (its API server).
    expect(await connectFrom(p1.netns, p2.podIP)).toBe('hello from p2');
    expect(await connectFrom(p2.netns, p1.podIP)).toBe('hello from p1');
    expect(await connectFrom(p1.netns, c1Addr)).toBe('hello from c1-apiserver');
    // The host reaches every pod.
    expect(await connectFromHost(p1.podIP)).toBe('hello from p1');
    expect(await connectFromHost(p2.podIP)).toBe('hello from p2');
    expect(await connectFromHost(h1.podIP)).toBe('hello from h1');
    // A spoke pod reaches the hub's address and a hub pod; the spoke's control plane reaches the hub pod too.
    expect(await connectFrom(p1.netns, hubAddr)).toBe('hello from hub-apiserver');
    expect(await connectFrom(p1.netns, h1.podIP)).toBe('hello from h1');
    expect(await connectFrom(spoke!.netns, h1.podIP)).toBe('hello from h1');
    // A cluster's API server (in the VPC namespace) reaches its pods: webhooks, aggregated APIs, probes.
    expect(await connectFrom(spoke!.netns, p2.podIP)).toBe('hello from p2');
    expect(await connectFrom(hub!.netns, h1.podIP)).toBe('hello from h1');
    // The hub (its pods and its control plane) cannot open a connection into the spoke VPC: dropped on the host.
    expect(await connectFrom(h1.netns, p1.podIP)).toBe('timeout');
    expect(await connectFrom(h1.netns, c1Addr)).toBe('timeout');
    expect(await connectFrom(hub!.netns, p2.podIP)).toBe('timeout');
  });

  it('keeps the rules for ClusterIP services in every pod of the cluster', async () => {
    const [, spoke] = plan.vpcs;
    const c1Addr = spoke!.clusterAddresses.c1!;
    const p1 = await spokeNet.setup(uid(1), 'default/p1');
    const p2 = await spokeNet.setup(uid(2), 'default/p2');
    const services: ServiceLike[] = [
      { metadata: { namespace: 'default', name: 'kubernetes' }, spec: { clusterIP: '10.96.0.1', ports: [{ name: 'https', port: 443 }] } },
      { metadata: { namespace: 'demo', name: 'web' }, spec: { clusterIP: '10.96.0.50', ports: [{ name: 'http', port: 80 }] } },
      { metadata: { namespace: 'demo', name: 'empty' }, spec: { clusterIP: '10.96.0.51', ports: [{ port: 80 }] } },
    ];
    const slices: EndpointSliceLike[] = [
      {
        metadata: { namespace: 'demo', name: 'web-abc', labels: { 'kubernetes.io/service-name': 'web' } },
        addressType: 'IPv4',
        endpoints: [
          { addresses: [p1.podIP], conditions: { ready: true } },
          { addresses: [p2.podIP], conditions: { ready: true } },
        ],
        ports: [{ name: 'http', port: PORT, protocol: 'TCP' }],
      },
    ];
    await spokeNet.setServiceRules(renderServiceRules(services, slices, { apiServer: { ip: c1Addr, port: PORT } }));

    // A pod set up after the rules were written gets them too.
    const p3 = await spokeNet.setup(uid(4), 'default/p3');
    const answers = new Set<string>();
    for (let i = 0; i < 12 && answers.size < 2; i++) answers.add(await connectFrom(p3.netns, '10.96.0.50', 80));
    expect([...answers].sort()).toEqual(['hello from p1', 'hello from p2']);
    // The kubernetes service leads to the cluster's API server.
    expect(await connectFrom(p1.netns, '10.96.0.1', 443)).toBe('hello from c1-apiserver');
    // A service without endpoints refuses; a ClusterIP nobody serves dies in the VPC namespace.
    expect(await connectFrom(p1.netns, '10.96.0.51', 80)).toBe('ECONNREFUSED');
    expect(await connectFrom(p1.netns, '10.96.7.7', 80)).toBe('EHOSTUNREACH');
    await spokeNet.teardown(uid(4));
  });

  it('is idempotent, keeps addresses across a nodelet restart and removes pods that are gone', async () => {
    const [, spoke] = plan.vpcs;
    const p1 = await spokeNet.setup(uid(1), 'default/p1');
    expect((await spokeNet.setup(uid(1), 'default/p1')).podIP).toBe(p1.podIP);
    // A new nodelet process: the addresses come back from the namespaces.
    const restarted = podNetworkOf('c1');
    expect(await restarted.setup(uid(1), 'default/p1')).toEqual(p1);
    const p2ip = restarted.podIP(uid(2));
    expect(p2ip).not.toBeNull();
    const p5 = await restarted.setup(uid(5), 'default/p5');
    expect([p1.podIP, p2ip]).not.toContain(p5.podIP);

    // A pod whose namespace was deleted under it (veth gone with it) is repaired with its address.
    await run('ip', ['netns', 'del', p5.netns]);
    expect(await restarted.setup(uid(5), 'default/p5')).toEqual(p5);

    const removed = await restarted.cleanupOrphans(new Set([uid(1), uid(2)]));
    expect(removed).toEqual([p5.netns]);
    expect((await run('ip', ['-n', spoke!.netns, 'link', 'show', 'dev', vpcVethName(LAB, 'c1', uid(5))], { allowFailure: true })).exitCode).not.toBe(0);
    expect((await run('ip', ['netns', 'list'])).stdout).not.toContain(p5.netns);
    await restarted.teardown(uid(5));
  });

  it('sets up and tears down pods in bounded time', async () => {
    const net = podNetworkOf('c1');
    const setupMs: number[] = [];
    const teardownMs: number[] = [];
    for (let n = 20; n < 25; n++) {
      let t0 = performance.now();
      await net.setup(uid(n), `default/p${n}`);
      setupMs.push(performance.now() - t0);
      t0 = performance.now();
      await net.teardown(uid(n));
      teardownMs.push(performance.now() - t0);
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    console.log(`pod network setup: median ${median(setupMs).toFixed(0)} ms; teardown: median ${median(teardownMs).toFixed(0)} ms (5 pods)`);
    expect(median(setupMs)).toBeLessThan(5000);
  });

  it('tells a hostNetwork pod that its port is taken on the node', async () => {
    const [, spoke] = plan.vpcs;
    const c1Addr = spoke!.clusterAddresses.c1!;
    expect(await spokeNet.hostPortCheck(undefined, PORT, 'TCP')).toContain(`port ${PORT}/TCP on ${c1Addr} is already in use on the node`);
    expect(await spokeNet.hostPortCheck('0.0.0.0', PORT, 'TCP')).toContain('already in use');
    expect(await spokeNet.hostPortCheck(undefined, PORT + 1, 'TCP')).toBeNull();
    expect(await spokeNet.hostPortCheck(undefined, PORT, 'UDP')).toBeNull();
  });

  it('tears pods and the network down, leaving the machine as it was', async () => {
    await stopListeners();
    for (const n of [1, 2]) {
      await spokeNet.teardown(uid(n));
      await spokeNet.teardown(uid(n));
    }
    await hubNet.teardown(uid(3));
    expect((await spokeNet.podNamespaces()).length).toBe(0);
    expect(await hubNet.podNamespaces()).toEqual([]);
    const [, spoke] = plan.vpcs;
    const vpcLinks = (await run('ip', ['-n', spoke!.netns, '-o', 'link', 'show'])).stdout;
    expect(vpcLinks).not.toMatch(/\bvp[0-9a-f]{10}\b/);
    await teardownNetwork(records);
    expectAsBefore(await snapshot(), before);
  });

  it('leaves nothing behind when the nodelet was killed: down removes pod namespaces by name', async () => {
    records.length = 0;
    await applyNetwork(plan, async (r) => {
      records.push(r);
    });
    const killed = podNetworkOf('c1');
    const pod = await killed.setup(uid(7), 'default/p7');
    await killed.setServiceRules(renderServiceRules([], []));
    await podNetworkOf('hub').setup(uid(8), 'default/h8');
    // A process still running in the pod (a container the dead nodelet left) keeps its namespace alive, unnamed.
    await startListener(pod.netns, '0.0.0.0', 'p7');
    expect(await connectFromHost(pod.podIP)).toBe('hello from p7');
    // No PodNetwork.teardown: `down` has only its records and the names it finds.
    const found = await findLeftovers(LAB);
    expect(found.filter((r) => r.kind === 'netns').map((r) => (r as { name: string }).name)).toEqual(expect.arrayContaining([pod.netns]));
    await teardownNetwork([...records, ...found]);
    expectAsBefore(await snapshot(), before);
    expect(await findLeftovers(LAB)).toEqual([]);
    // The VPC namespace took the pod's veth with it: the orphan is cut off.
    expect(await connectFromHost(pod.podIP)).not.toBe('hello from p7');
    await stopListeners();
  });
});
