import fs from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  applyNetwork,
  findLeftovers,
  hostChainNames,
  interfacePrefix,
  labChains,
  networkHealth,
  planNetwork,
  probeNetworkCapability,
  rulesOf,
  teardownNetwork,
  type NetworkPlan,
  type NetworkResource,
} from '../../src/runtime/local/network/index.js';
import { run } from '../../src/util/exec.js';
import { NetnsSockets } from '../support/netns-sockets.js';

// A lab name of this test only; every namespace, link and chain it creates carries it.
const LAB = 'e2e-network';
const PORT = 18473;
const OWN_PREFIX = interfacePrefix(LAB);
const OWN_CHAIN = `OCMLAB-${OWN_PREFIX.slice(2).toUpperCase()}`;

/**
 * What the network code can change on the machine. Other labs (and their
 * namespaces, links, chains) may come and go while this test runs, so their
 * entries are left out; everything else, ours included, must be identical.
 */
async function snapshot(): Promise<Record<string, string[]>> {
  const otherLab = (s: string) =>
    (/ocmlab\./.test(s) && !s.includes(`ocmlab.${LAB}.`)) ||
    (/OCMLAB-[0-9A-F]{6}/.test(s) && !s.includes(OWN_CHAIN)) ||
    (/ocm-lab:/.test(s) && !s.includes(`ocm-lab:${LAB}`)) ||
    (/\bol[0-9a-f]{6}\d+[hn]\b/.test(s) && !s.includes(OWN_PREFIX));
  const netns = (await run('ip', ['netns', 'list'])).stdout.split('\n').filter(Boolean);
  const links = (JSON.parse((await run('ip', ['-j', 'link', 'show'])).stdout) as { ifname: string; flags: string[]; mtu: number }[]).map(
    (l) => `${l.ifname} ${l.mtu} ${l.flags.join(',')}`,
  );
  const filter = (await run('iptables', ['-t', 'filter', '-S'])).stdout.split('\n').filter(Boolean);
  const nat = (await run('iptables', ['-t', 'nat', '-S'])).stdout.split('\n').filter(Boolean);
  const forward = [(await fs.readFile('/proc/sys/net/ipv4/ip_forward', 'utf8')).trim()];
  const keep = (lines: string[]) => lines.filter((l) => !otherLab(l)).sort();
  return { netns: keep(netns), links: keep(links), filter: keep(filter), nat: keep(nat), forward };
}

const input = {
  labName: LAB,
  vpcs: [
    { name: 'vpc-1', hub: true, clusters: ['hub'] },
    { name: 'vpc-2', hub: false, clusters: ['cluster1', 'cluster2'] },
  ],
};

// Each server answers 'hello from <its address>'.
const sockets = new NetnsSockets(PORT);
const startListener = (netns: string, address: string) => sockets.listen(netns, address, address);
const connectFrom = async (netns: string, address: string) => ((r) => (r.startsWith('no output') ? '' : r))(await sockets.connectFrom(netns, address));
const connectFromHost = (address: string) => sockets.connectFromHost(address);
const stopListeners = () => sockets.stopAll();

describe('VPC network namespaces and forwarding rules (root)', () => {
  let before: Record<string, string[]>;
  let plan: NetworkPlan;
  const records: NetworkResource[] = [];
  const record = async (r: NetworkResource) => {
    records.push(r);
  };

  beforeAll(async () => {
    const capability = await probeNetworkCapability();
    if (!capability.canIsolate) throw new Error(`this e2e test needs root with iproute2 and iptables: ${capability.reason}`);
    // A run that was killed may have left its lab behind.
    await teardownNetwork(await findLeftovers(LAB));
    before = await snapshot();
    plan = await planNetwork(input);
  });

  afterAll(async () => {
    await stopListeners();
    await teardownNetwork([...records, ...(await findLeftovers(LAB))]);
  });

  it('creates the default topology and reports it healthy', async () => {
    const t0 = performance.now();
    await applyNetwork(plan, record);
    const applyMs = performance.now() - t0;
    console.log(`applyNetwork (2 VPCs, 3 clusters): ${applyMs.toFixed(0)} ms`);
    expect(records.map((r) => r.kind)).toEqual(expect.arrayContaining(['netns', 'link', 'iptables-chain']));
    expect(await networkHealth(plan)).toEqual({ enforced: true, problems: [] });
    // iptables prints our rules back exactly as written (the health check's fast path relies on it).
    const listing = (await run('iptables', ['-t', 'filter', '-S'])).stdout;
    for (const c of labChains(plan)) expect(rulesOf(listing, c.chain)).toEqual(c.rules);
    const [hub, spoke] = plan.vpcs;
    const inside = (await run('ip', ['-n', spoke!.netns, '-j', 'addr', 'show', 'dev', spoke!.nsIf])).stdout;
    expect(inside).toContain(spoke!.clusterAddresses.cluster1);
    expect(inside).toContain(spoke!.clusterAddresses.cluster2);
    expect((await run('ip', ['-j', 'addr', 'show', 'dev', hub!.hostIf])).stdout).toContain(hub!.gateway);
  });

  it('enforces the VPC rule on real TCP connections', async () => {
    const [hub, spoke] = plan.vpcs;
    const hubAddr = hub!.clusterAddresses.hub!;
    const c1 = spoke!.clusterAddresses.cluster1!;
    const c2 = spoke!.clusterAddresses.cluster2!;
    await Promise.all([startListener(hub!.netns, hubAddr), startListener(spoke!.netns, c1), startListener(spoke!.netns, c2)]);

    // The host reaches every cluster (so the listeners are up and any failure below is the rule).
    expect(await connectFromHost(hubAddr)).toBe(`hello from ${hubAddr}`);
    expect(await connectFromHost(c1)).toBe(`hello from ${c1}`);
    expect(await connectFromHost(c2)).toBe(`hello from ${c2}`);
    // A spoke reaches the hub.
    expect(await connectFrom(spoke!.netns, hubAddr)).toBe(`hello from ${hubAddr}`);
    // Clusters in the same VPC reach each other.
    expect(await connectFrom(spoke!.netns, c2)).toBe(`hello from ${c2}`);
    // The hub cannot open a connection into the spoke VPC: dropped, so no answer at all.
    expect(await connectFrom(hub!.netns, c1)).toBe('timeout');
    expect(await connectFrom(hub!.netns, c2)).toBe('timeout');
  });

  it('re-applying is idempotent and repairs a deleted rule', async () => {
    const rulesBefore = (await run('iptables', ['-S'])).stdout;
    const [hub, spoke] = plan.vpcs;
    await run('iptables', ['-D', plan.chain, '-i', spoke!.hostIf, '-o', hub!.hostIf, '-m', 'comment', '--comment', plan.comment, '-j', 'ACCEPT']);
    const broken = await networkHealth(plan);
    expect(broken.enforced).toBe(false);
    expect(broken.problems.join('\n')).toContain(`rule missing in ${plan.chain}: -i ${spoke!.hostIf} -o ${hub!.hostIf}`);

    await applyNetwork(plan, record);
    expect(await networkHealth(plan)).toEqual({ enforced: true, problems: [] });
    expect(
      (await run('iptables', ['-S'])).stdout
        .split('\n')
        .filter((l) => l.includes(`ocm-lab:${LAB}`))
        .sort(),
    ).toEqual(
      rulesBefore
        .split('\n')
        .filter((l) => l.includes(`ocm-lab:${LAB}`))
        .sort(),
    );
    expect(await connectFrom(spoke!.netns, hub!.clusterAddresses.hub!)).toBe(`hello from ${hub!.clusterAddresses.hub}`);
  });

  it('reports a rule someone else added to our chain', async () => {
    const [hub, spoke] = plan.vpcs;
    const extra = ['-i', hub!.hostIf, '-o', spoke!.hostIf, '-j', 'ACCEPT'];
    await run('iptables', ['-I', plan.chain, '1', ...extra]);
    const health = await networkHealth(plan);
    expect(health.enforced).toBe(false);
    expect(health.problems.join('\n')).toContain('something else added rules');
    await applyNetwork(plan, record);
    expect(await networkHealth(plan)).toEqual({ enforced: true, problems: [] });
  });

  it('reports a missing namespace link as a health problem', async () => {
    const [, spoke] = plan.vpcs;
    await run('ip', ['-n', spoke!.netns, 'link', 'set', spoke!.nsIf, 'down']);
    const health = await networkHealth(plan);
    expect(health.enforced).toBe(false);
    expect(health.problems.some((p) => p.includes(spoke!.nsIf))).toBe(true);
    await applyNetwork(plan, record);
    expect((await networkHealth(plan)).enforced).toBe(true);
  });

  it('tears everything down, twice without complaint, leaving the machine as it was', async () => {
    await stopListeners();
    const t0 = performance.now();
    await teardownNetwork(records);
    console.log(`teardownNetwork (2 VPCs, 3 clusters): ${(performance.now() - t0).toFixed(0)} ms`);
    expect(await snapshot()).toEqual(before);
    await teardownNetwork(records);
    expect(await snapshot()).toEqual(before);
    const health = await networkHealth(plan);
    expect(health.enforced).toBe(false);
    expect(health.problems).toContain(`network namespace ${plan.vpcs[0]!.netns} of vpc-1 is missing`);
  });

  // Crash points: both namespaces exist but the second veth does not; every namespace and link exists but no rule.
  it.each([
    ['part-way through the VPCs', (r: NetworkResource) => r.kind === 'link' && r.name === plan.vpcs[1]!.hostIf],
    ['before the forwarding rules', (r: NetworkResource) => r.kind === 'iptables-chain'],
  ])('removes what a crashed apply left, from its records (%s)', async (_, crashAt) => {
    const crashed: NetworkResource[] = [];
    await expect(
      applyNetwork(plan, async (r) => {
        crashed.push(r);
        records.push(r);
        if (crashAt(r)) throw new Error('simulated crash');
      }),
    ).rejects.toThrow('simulated crash');
    // Something was really created, or this test would prove nothing.
    expect((await run('ip', ['netns', 'list'])).stdout).toContain(plan.vpcs[0]!.netns);
    await teardownNetwork(crashed);
    expect(await snapshot()).toEqual(before);
  });

  it('finds and removes a lab whose records are lost, and nothing of other labs', async () => {
    await applyNetwork(plan, record);
    const found = await findLeftovers(LAB);
    expect(
      found
        .filter((r) => r.kind === 'netns')
        .map((r) => (r as { name: string }).name)
        .sort(),
    ).toEqual(plan.vpcs.map((v) => v.netns).sort());
    expect(
      found
        .filter((r) => r.kind === 'link')
        .map((r) => (r as { name: string }).name)
        .sort(),
    ).toEqual(plan.vpcs.map((v) => v.hostIf).sort());
    const chains = hostChainNames(LAB);
    expect(
      found
        .filter((r) => r.kind === 'iptables-chain')
        .map((r) => (r as { chain: string }).chain)
        .sort(),
    ).toEqual([plan.chain, chains.input, chains.output].sort());
    await teardownNetwork(found);
    // Without records nobody knows what ip_forward was before the lab: it is left on, the rest is as it was.
    const { forward, ...rest } = await snapshot();
    const { forward: _before, ...restBefore } = before;
    expect(rest).toEqual(restBefore);
    expect(forward).toEqual(['1']);
    expect(await findLeftovers(LAB)).toEqual([]);
  });
});
