import { describe, expect, it } from 'vitest';
import { ConflictError, InvalidInputError } from '../../src/errors.js';
import { reshapeRefusal } from '../../src/runtime/reshape.js';
import { defaultLabConfig } from '../../src/config/index.js';
import {
  addressLayout,
  applyScript,
  chooseCidr,
  forwardRules,
  hostRules,
  labChains,
  MAX_CHAIN_NAME,
  MAX_INTERFACE_NAME,
  overlaps,
  parseCidr,
  planLoopback,
  planNetworkIn,
  reconcilePlanClusters,
  removalScript,
  rulesJumpingTo,
  SMALLEST_POD_PREFIX,
  splitRuleLine,
  usedRanges,
  vpcRoutes,
  type NetworkPlanInput,
} from '../../src/runtime/local/network/index.js';

const input = (labName: string): NetworkPlanInput => ({
  labName,
  vpcs: [
    { name: 'vpc-1', hub: true, clusters: ['hub'] },
    { name: 'vpc-2', hub: false, clusters: ['cluster1', 'cluster2'] },
  ],
});

const threeVpcs: NetworkPlanInput = {
  labName: 'three',
  vpcs: [
    { name: 'core', hub: true, clusters: ['hub'] },
    { name: 'east', hub: false, clusters: ['e1'] },
    { name: 'west', hub: false, clusters: ['w1'] },
  ],
};

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  return null;
}

describe('network plan', () => {
  it('gives each VPC a namespace, a /20, each cluster its own address and a /24 of pod addresses', () => {
    const plan = planNetworkIn(input('default'), '10.213.0.0/16');
    expect(plan.mode).toBe('netns');
    expect(plan.vpcs.map((v) => v.netns)).toEqual(['ocmlab.default.vpc-1', 'ocmlab.default.vpc-2']);
    expect(plan.vpcs.map((v) => v.subnet)).toEqual(['10.213.16.0/20', '10.213.32.0/20']);
    expect(plan.vpcs.map((v) => v.prefixLength)).toEqual([20, 20]);
    expect(plan.vpcs.map((v) => v.gateway)).toEqual(['10.213.16.1', '10.213.32.1']);
    expect(plan.vpcs[0]!.clusterAddresses).toEqual({ hub: '10.213.16.10' });
    expect(plan.vpcs[1]!.clusterAddresses).toEqual({ cluster1: '10.213.32.10', cluster2: '10.213.32.11' });
    expect(plan.vpcs[0]!.clusterPodCidrs).toEqual({ hub: '10.213.17.0/24' });
    expect(plan.vpcs[1]!.clusterPodCidrs).toEqual({ cluster1: '10.213.33.0/24', cluster2: '10.213.34.0/24' });
    expect(plan.vpcs.map((v) => v.hub)).toEqual([true, false]);
  });

  it('keeps every pod range inside its VPC subnet, clear of the gateway, the cluster addresses and each other', () => {
    const full: NetworkPlanInput = {
      labName: 'full',
      vpcs: Array.from({ length: 15 }, (_, i) => ({ name: `v${i}`, hub: i === 0, clusters: Array.from({ length: 15 }, (_, k) => `c${i}-${k}`) })),
    };
    for (const cidr of ['10.213.0.0/16', '10.40.0.0/18', '10.50.0.0/20', '192.168.7.0/24']) {
      const layout = addressLayout(parseCidr(cidr).prefix);
      const fitting = { ...full, vpcs: full.vpcs.slice(0, layout.vpcCount).map((v) => ({ ...v, clusters: v.clusters.slice(0, layout.clustersPerVpc) })) };
      const plan = planNetworkIn(fitting, cidr);
      const ranges: string[] = [];
      for (const v of plan.vpcs) {
        expect(Object.keys(v.clusterPodCidrs)).toEqual(Object.keys(v.clusterAddresses));
        for (const [cluster, podCidr] of Object.entries(v.clusterPodCidrs)) {
          expect(overlaps(podCidr, v.subnet)).toBe(true);
          expect(parseCidr(podCidr).prefix).toBeGreaterThan(v.prefixLength);
          expect(parseCidr(podCidr).prefix).toBeLessThanOrEqual(SMALLEST_POD_PREFIX);
          expect(overlaps(podCidr, `${v.gateway}/32`)).toBe(false);
          for (const address of Object.values(v.clusterAddresses))
            expect(overlaps(podCidr, `${address}/32`), `${cluster} ${podCidr} vs ${address}`).toBe(false);
          ranges.push(podCidr);
        }
      }
      const sorted = ranges.map((r) => parseCidr(r)).sort((a, b) => a.base - b.base);
      for (let i = 1; i < sorted.length; i++) expect(sorted[i]!.base).toBeGreaterThanOrEqual(sorted[i - 1]!.base + 2 ** (32 - sorted[i - 1]!.prefix));
    }
  });

  it('scales the layout down for smaller lab ranges', () => {
    expect(addressLayout(16)).toEqual({ vpcPrefix: 20, blockPrefix: 24, firstIndex: 1, vpcCount: 15, clustersPerVpc: 15 });
    expect(addressLayout(18)).toEqual({ vpcPrefix: 22, blockPrefix: 26, firstIndex: 1, vpcCount: 15, clustersPerVpc: 15 });
    // A /28 block holds only 6 cluster addresses from .10 on.
    expect(addressLayout(20)).toEqual({ vpcPrefix: 24, blockPrefix: 28, firstIndex: 1, vpcCount: 15, clustersPerVpc: 6 });
    expect(addressLayout(22)).toEqual({ vpcPrefix: 24, blockPrefix: 26, firstIndex: 0, vpcCount: 4, clustersPerVpc: 3 });
    expect(addressLayout(24)).toEqual({ vpcPrefix: 26, blockPrefix: 28, firstIndex: 0, vpcCount: 4, clustersPerVpc: 3 });
  });

  it('gives loopback labs no pod ranges (pods share their node address there)', () => {
    expect(planLoopback(input('default')).vpcs.every((v) => Object.keys(v.clusterPodCidrs).length === 0)).toBe(true);
  });

  it('is deterministic', () => {
    expect(planNetworkIn(input('default'), '10.213.0.0/16')).toEqual(planNetworkIn(input('default'), '10.213.0.0/16'));
  });

  it('keeps names within Linux limits for the longest lab name and many VPCs', () => {
    const many: NetworkPlanInput = {
      labName: 'a'.repeat(20),
      vpcs: Array.from({ length: 200 }, (_, i) => ({ name: `vpc-${i}`, hub: i === 0, clusters: [`c${i}`] })),
    };
    const plan = planNetworkIn(many, '10.0.0.0/12');
    for (const v of plan.vpcs) {
      expect(v.hostIf.length).toBeLessThanOrEqual(MAX_INTERFACE_NAME);
      expect(v.nsIf.length).toBeLessThanOrEqual(MAX_INTERFACE_NAME);
      expect(v.hostIf).toMatch(/^[a-z0-9]+$/);
    }
    for (const c of labChains(plan)) expect(c.chain.length).toBeLessThanOrEqual(MAX_CHAIN_NAME);
    const names = plan.vpcs.flatMap((v) => [v.netns, v.hostIf, v.nsIf]);
    expect(new Set(names).size).toBe(names.length);
  });

  it('gives different labs different namespaces, links and chains', () => {
    const labs = ['default', 'demo', 'e2e-net', 'lab-1', 'lab-2', 'lab-10', 'a', 'b', 'x'.repeat(20), 'x'.repeat(19)];
    const plans = labs.map((l) => planNetworkIn(input(l), '10.213.0.0/16'));
    const all = plans.flatMap((p) => [...p.vpcs.flatMap((v) => [v.netns, v.hostIf, v.nsIf]), ...labChains(p).map((c) => c.chain)]);
    expect(new Set(all).size).toBe(all.length);
  });

  it('splits small ranges into quarter subnets', () => {
    const plan = planNetworkIn(input('x'), '192.168.50.0/24');
    expect(plan.vpcs.map((v) => v.subnet)).toEqual(['192.168.50.0/26', '192.168.50.64/26']);
    expect(plan.vpcs[1]!.gateway).toBe('192.168.50.65');
    expect(plan.vpcs[1]!.clusterAddresses.cluster2).toBe('192.168.50.75');
    expect(plan.vpcs[1]!.clusterPodCidrs).toEqual({ cluster1: '192.168.50.80/28', cluster2: '192.168.50.96/28' });
  });

  it('normalises a range with host bits to its network address', () => {
    expect(planNetworkIn(input('x'), '10.213.7.9/16').cidr).toBe('10.213.0.0/16');
  });

  it('refuses a range too small for the topology, naming network.cidr', () => {
    const fiveVpcs: NetworkPlanInput = { labName: 'x', vpcs: Array.from({ length: 5 }, (_, i) => ({ name: `v${i}`, hub: i === 0, clusters: ['c'] })) };
    const err = thrown(() => planNetworkIn(fiveVpcs, '10.1.2.0/24'));
    expect(err).toBeInstanceOf(InvalidInputError);
    expect((err as InvalidInputError).exitCode).toBe(2);
    expect((err as Error).message).toContain('network.cidr 10.1.2.0/24 has room for 4 VPC subnets');

    const crowded: NetworkPlanInput = { labName: 'x', vpcs: [{ name: 'big', hub: true, clusters: ['a', 'b', 'c', 'd'] }] };
    const tooMany = thrown(() => planNetworkIn(crowded, '10.1.2.0/24')) as InvalidInputError;
    expect(tooMany.message).toContain('room for 3 clusters (each with a /28 of pod addresses); VPC big has 4');
    expect(tooMany.hint).toContain('network.cidr');
    const fits: NetworkPlanInput = { labName: 'x', vpcs: [{ name: 'big', hub: true, clusters: ['a', 'b', 'c'] }] };
    expect(planNetworkIn(fits, '10.1.2.0/24').vpcs[0]!.clusterPodCidrs.c).toBe('10.1.2.48/28');
    const sixteen: NetworkPlanInput = { labName: 'x', vpcs: [{ name: 'big', hub: true, clusters: Array.from({ length: 16 }, (_, i) => `c${i}`) }] };
    expect((thrown(() => planNetworkIn(sixteen, '10.1.0.0/16')) as Error).message).toContain('room for 15 clusters');
  });

  it('refuses a range whose pod ranges would be smaller than a /28, saying what to do', () => {
    const err = thrown(() => planNetworkIn(input('x'), '10.1.2.0/25')) as InvalidInputError;
    expect(err).toBeInstanceOf(InvalidInputError);
    expect(err.exitCode).toBe(2);
    expect(err.message).toBe("network.cidr 10.1.2.0/25 is too small: each cluster's pod range would be a /29, and pods need at least a /28");
    expect(err.hint).toContain('/24 or larger network.cidr');
  });

  it('refuses something that is not a CIDR', () => {
    expect(thrown(() => planNetworkIn(input('x'), '10.300.0.0/16'))).toBeInstanceOf(InvalidInputError);
    expect(thrown(() => planNetworkIn(input('x'), 'ten/8'))).toBeInstanceOf(InvalidInputError);
  });

  it('gives loopback labs distinct 127.x addresses and no namespaces', () => {
    const plan = planLoopback(input('default'));
    const other = planLoopback(input('demo'));
    const addrs = plan.vpcs.flatMap((v) => Object.values(v.clusterAddresses));
    expect(new Set(addrs).size).toBe(3);
    expect(addrs.every((a) => /^127\.\d+\.\d+\.\d+$/.test(a))).toBe(true);
    expect(addrs).not.toContain('127.0.0.1');
    expect(plan.mode).toBe('loopback');
    expect(plan.vpcs.every((v) => v.netns === '' && v.hostIf === '' && v.nsIf === '')).toBe(true);
    expect(other.vpcs[1]!.clusterAddresses.cluster1).not.toBe(plan.vpcs[1]!.clusterAddresses.cluster1);
  });
});

describe('forwarding rules', () => {
  const plan = planNetworkIn(input('default'), '10.213.0.0/16');
  const [hub, spoke] = plan.vpcs;
  const text = forwardRules(plan).map((r) => r.join(' '));

  it('lets replies back into every VPC and spokes open connections to the hub', () => {
    expect(text).toContain(`-o ${hub!.hostIf} -m conntrack --ctstate RELATED,ESTABLISHED -m comment --comment ocm-lab:default -j ACCEPT`);
    expect(text).toContain(`-o ${spoke!.hostIf} -m conntrack --ctstate RELATED,ESTABLISHED -m comment --comment ocm-lab:default -j ACCEPT`);
    expect(text).toContain(`-i ${spoke!.hostIf} -o ${hub!.hostIf} -m comment --comment ocm-lab:default -j ACCEPT`);
  });

  it('accepts nothing from the hub and ends with DROPs for both directions of every VPC', () => {
    expect(text.some((r) => r.startsWith(`-i ${hub!.hostIf}`) && r.endsWith('ACCEPT'))).toBe(false);
    const firstDrop = text.findIndex((r) => r.endsWith('DROP'));
    expect(text.slice(firstDrop).every((r) => r.endsWith('DROP'))).toBe(true);
    for (const v of plan.vpcs) {
      expect(text.slice(firstDrop)).toContain(`-i ${v.hostIf} -m comment --comment ocm-lab:default -j DROP`);
      expect(text.slice(firstDrop)).toContain(`-o ${v.hostIf} -m comment --comment ocm-lab:default -j DROP`);
    }
  });

  it('allows only spoke→hub across VPCs with several spokes', () => {
    const p = planNetworkIn(threeVpcs, '10.213.0.0/16');
    const accepts = forwardRules(p).filter((r) => r.at(-1) === 'ACCEPT' && r.includes('-i'));
    const pairs = accepts.map((r) => [r[r.indexOf('-i') + 1], r[r.indexOf('-o') + 1]]);
    const [core, east, west] = p.vpcs;
    expect(pairs).toEqual([
      [east!.hostIf, core!.hostIf],
      [west!.hostIf, core!.hostIf],
    ]);
  });

  it('only ever names this lab’s links, and tags every rule', () => {
    const p = planNetworkIn(threeVpcs, '10.213.0.0/16');
    const own = new Set(p.vpcs.map((v) => v.hostIf));
    for (const c of labChains(p)) {
      for (const rule of c.rules) {
        const named = ['-i', '-o'].flatMap((flag) => (rule.includes(flag) ? [rule[rule.indexOf(flag) + 1]] : []));
        expect(named.length).toBeGreaterThan(0);
        expect(named.every((n) => own.has(n!))).toBe(true);
        expect(rule.join(' ')).toContain('--comment ocm-lab:three');
      }
    }
  });

  it('keeps the host able to reach every VPC', () => {
    const host = hostRules(plan);
    expect(host.output.map((r) => r.join(' '))).toEqual(plan.vpcs.map((v) => `-o ${v.hostIf} -m comment --comment ocm-lab:default -j ACCEPT`));
    expect(host.input.every((r) => r.join(' ').includes('RELATED,ESTABLISHED'))).toBe(true);
    expect(labChains(plan).map((c) => c.jumpFrom)).toEqual([['FORWARD'], ['INPUT'], ['OUTPUT']]);
  });
});

describe('routes inside a VPC namespace', () => {
  const plan = planNetworkIn(threeVpcs, '10.213.0.0/16');
  const [core, east, west] = plan.vpcs;
  const specs = (v: typeof core) => vpcRoutes(plan, v!).map((r) => r.spec.join(' '));

  it('makes the lab range and the service range unreachable, so nothing unserved follows the default route', () => {
    for (const v of plan.vpcs) expect(specs(v)).toEqual(expect.arrayContaining(['unreachable 10.213.0.0/16', 'unreachable 10.96.0.0/16']));
  });

  it('lets a spoke reach only the hub subnet, and the hub every spoke (its replies go there)', () => {
    expect(specs(east).filter((s) => s.includes(' via '))).toEqual([`${core!.subnet} via ${east!.gateway} dev ${east!.nsIf}`]);
    expect(specs(west).filter((s) => s.includes(' via '))).toEqual([`${core!.subnet} via ${west!.gateway} dev ${west!.nsIf}`]);
    expect(specs(core).filter((s) => s.includes(' via '))).toEqual([
      `${east!.subnet} via ${core!.gateway} dev ${core!.nsIf}`,
      `${west!.subnet} via ${core!.gateway} dev ${core!.nsIf}`,
    ]);
  });
});

describe('iptables scripts', () => {
  const plan = planNetworkIn(input('default'), '10.213.0.0/16');
  const chains = labChains(plan);
  const listing = [
    '-P INPUT ACCEPT',
    '-P FORWARD DROP',
    '-P OUTPUT ACCEPT',
    `-N ${plan.chain}`,
    '-N DOCKER-USER',
    '-A FORWARD -j DOCKER-USER',
    `-A FORWARD -m comment --comment "ocm-lab:default" -j ${plan.chain}`,
    `-A ${plan.chain} -o ol0h -j ACCEPT`,
  ].join('\n');

  it('splits iptables -S lines like a shell would', () => {
    expect(splitRuleLine('-A FORWARD -m comment --comment "ocm-lab:a b" -j X')).toEqual([
      '-A',
      'FORWARD',
      '-m',
      'comment',
      '--comment',
      'ocm-lab:a b',
      '-j',
      'X',
    ]);
    expect(splitRuleLine('-A X -m comment --comment "say \\"hi\\"" -j Y')).toEqual(['-A', 'X', '-m', 'comment', '--comment', 'say "hi"', '-j', 'Y']);
    expect(splitRuleLine('-A X --comment "" -j Y')).toEqual(['-A', 'X', '--comment', '', '-j', 'Y']);
  });

  it('finds the rules that jump to a chain, and only those', () => {
    expect(rulesJumpingTo(listing, plan.chain).map((r) => r.from)).toEqual(['FORWARD']);
    expect(rulesJumpingTo(listing, `${plan.chain}-IN`)).toEqual([]);
  });

  it('declares every chain (so re-applying replaces the rules at once) and adds only missing jumps at the top', () => {
    const script = applyScript(chains, plan.comment, listing).split('\n');
    expect(script[0]).toBe('*filter');
    expect(script.at(-2)).toBe('COMMIT');
    for (const c of chains) expect(script).toContain(`:${c.chain} - [0:0]`);
    expect(script.filter((l) => l.startsWith('-A ')).length).toBe(chains.reduce((n, c) => n + c.rules.length, 0));
    const jumps = script.filter((l) => l.startsWith('-I '));
    expect(jumps).toEqual([
      `-I INPUT 1 -m comment --comment ocm-lab:default -j ${plan.chain}-IN`,
      `-I OUTPUT 1 -m comment --comment ocm-lab:default -j ${plan.chain}-OUT`,
    ]);
  });

  it('removes every jump and then the chains, once each, or nothing when all are gone', () => {
    const expected = ['*filter', `-D FORWARD -m comment --comment "ocm-lab:default" -j ${plan.chain}`, `-F ${plan.chain}`, `-X ${plan.chain}`, 'COMMIT', ''];
    expect(removalScript('filter', [plan.chain], listing)!.split('\n')).toEqual(expected);
    // Records may name a chain twice (re-applied labs); a repeated -X would fail the whole transaction.
    expect(removalScript('filter', [plan.chain, `${plan.chain}-OUT`, plan.chain], listing)!.split('\n')).toEqual(expected);
    expect(removalScript('filter', [`${plan.chain}-IN`, `${plan.chain}-OUT`], listing)).toBeNull();
  });
});

describe('lab range choice', () => {
  // Shapes of `ip -j -4 route show table all` and `ip -j -4 addr show`.
  const routes = [
    { dst: 'default', gateway: '192.0.2.1', dev: 'eth0', flags: [] },
    { dst: '192.0.2.0/24', dev: 'eth0', protocol: 'kernel', scope: 'link', prefsrc: '192.0.2.2', flags: [] },
    { dst: '10.213.0.0/16', dev: 'tun0', flags: [] },
    { type: 'local', dst: '127.0.0.0/8', dev: 'lo', table: 'local', flags: [] },
    { type: 'local', dst: '10.214.0.1', dev: 'lo', table: 'local', flags: [] },
    { type: 'broadcast', dst: '10.215.255.255', dev: 'eth0', table: 'local', flags: [] },
  ];
  const addrs = [
    { ifname: 'lo', addr_info: [{ family: 'inet', local: '127.0.0.1', prefixlen: 8 }] },
    { ifname: 'eth0', addr_info: [{ family: 'inet', local: '192.0.2.2', prefixlen: 24 }] },
  ];

  it('detects overlaps', () => {
    expect(overlaps('10.213.0.0/16', '10.213.5.0/24')).toBe(true);
    expect(overlaps('10.213.5.0/24', '10.213.0.0/16')).toBe(true);
    expect(overlaps('10.213.0.0/16', '10.214.0.0/16')).toBe(false);
    expect(overlaps('10.0.0.0/8', '10.214.0.0/16')).toBe(true);
    expect(overlaps('10.213.255.255/32', '10.213.0.0/16')).toBe(true);
  });

  it('ignores loopback, local and broadcast entries but keeps routes and addresses', () => {
    const used = usedRanges(routes, addrs).map((u) => u.cidr);
    expect(used).toEqual(['192.0.2.0/24', '10.213.0.0/16', '192.0.2.0/24']);
  });

  it('picks the first free candidate, ignoring the lab’s own links', () => {
    expect(chooseCidr(undefined, usedRanges(routes, addrs), 'olabc123')).toBe('10.214.0.0/16');
    expect(chooseCidr(undefined, usedRanges([], []), 'olabc123')).toBe('10.213.0.0/16');
    const own = usedRanges([{ dst: '10.213.1.0/24', dev: 'olabc1230h' }], []);
    expect(chooseCidr(undefined, own, 'olabc123')).toBe('10.213.0.0/16');
    const otherLab = usedRanges([{ dst: '10.213.1.0/24', dev: 'ol999fff0h' }], []);
    expect(chooseCidr(undefined, otherLab, 'olabc123')).toBe('10.214.0.0/16');
  });

  it('refuses an explicit range that overlaps a route, naming it and what to do (exit 6)', () => {
    const err = thrown(() => chooseCidr('10.213.128.0/17', usedRanges(routes, addrs), 'olabc123'));
    expect(err).toBeInstanceOf(ConflictError);
    expect((err as ConflictError).exitCode).toBe(6);
    expect((err as Error).message).toContain('route 10.213.0.0/16 dev tun0');
    expect((err as ConflictError).hint).toContain('network.cidr');
  });

  it('refuses an explicit range that overlaps an address, and names a route of another table with its table', () => {
    const byAddress = thrown(() => chooseCidr('192.0.2.0/24', usedRanges([], addrs), 'olabc123'));
    expect((byAddress as Error).message).toContain('address 192.0.2.2/24 on eth0');
    const policy = usedRanges([{ dst: '172.29.0.0/16', dev: 'wg0', table: '51820' }], []);
    expect((thrown(() => chooseCidr('172.29.4.0/24', policy, 'olabc123')) as Error).message).toContain('route 172.29.0.0/16 dev wg0 table 51820');
  });

  it('accepts an explicit free range', () => {
    expect(chooseCidr('10.99.0.0/16', usedRanges(routes, addrs), 'olabc123')).toBe('10.99.0.0/16');
  });

  it('fails with exit 6 when every candidate is taken', () => {
    const err = thrown(() =>
      chooseCidr(
        undefined,
        usedRanges(
          [
            { dst: '0.0.0.0/1', dev: 'x' },
            { dst: '128.0.0.0/1', dev: 'x' },
          ],
          [],
        ),
        'olabc123',
      ),
    );
    expect(err).toBeInstanceOf(ConflictError);
    expect((err as ConflictError).hint).toContain('network.cidr');
  });
});

describe('spokes added and removed on a running lab', () => {
  const withSpokes = (spokes: string[]): NetworkPlanInput => ({
    labName: 'default',
    vpcs: [input('default').vpcs[0]!, { name: 'vpc-2', hub: false, clusters: spokes }],
  });

  it('gives a new spoke the lowest free slot and moves nobody', () => {
    const plan = planNetworkIn(input('default'), '10.213.0.0/16');
    const grown = reconcilePlanClusters(plan, withSpokes(['cluster1', 'cluster2', 'cluster3']));
    const vpc2 = grown.vpcs[1]!;
    expect(vpc2.clusterAddresses).toEqual({ cluster1: '10.213.32.10', cluster2: '10.213.32.11', cluster3: '10.213.32.12' });
    expect(vpc2.clusterPodCidrs).toEqual({ cluster1: '10.213.33.0/24', cluster2: '10.213.34.0/24', cluster3: '10.213.35.0/24' });
    expect(grown.vpcs[0]).toEqual(plan.vpcs[0]);
    // cluster1 leaves: cluster2 and cluster3 stay where they are, and the next new spoke takes cluster1's slot.
    const shrunk = reconcilePlanClusters(grown, withSpokes(['cluster2', 'cluster3']));
    expect(shrunk.vpcs[1]!.clusterAddresses).toEqual({ cluster2: '10.213.32.11', cluster3: '10.213.32.12' });
    const refilled = reconcilePlanClusters(shrunk, withSpokes(['cluster2', 'cluster3', 'cluster4']));
    expect(refilled.vpcs[1]!.clusterAddresses.cluster4).toBe('10.213.32.10');
    expect(refilled.vpcs[1]!.clusterPodCidrs?.cluster4).toBe('10.213.33.0/24');
    expect(reconcilePlanClusters(plan, input('default'))).toEqual(plan);
  });

  it('refuses a spoke that does not fit its VPC, naming it', () => {
    const small = planNetworkIn(input('default'), '192.168.50.0/24');
    const full = Array.from({ length: addressLayout(24).clustersPerVpc }, (_, i) => `c${i}`);
    expect(() => reconcilePlanClusters(small, withSpokes(full))).not.toThrow();
    const err = thrown(() => reconcilePlanClusters(small, withSpokes([...full, 'one-too-many'])));
    expect(err).toBeInstanceOf(InvalidInputError);
    expect((err as Error).message).toContain('cluster one-too-many does not fit');
  });

  it('lets spokes come and go, and refuses a new hub, other VPCs, a moved cluster, another version or range', () => {
    const lab = defaultLabConfig();
    const spoke = (name: string, vpc = 'vpc-2') => ({ name, vpc, hub: false });
    expect(reshapeRefusal(lab, { ...lab, clusters: [...lab.clusters, spoke('cluster3')] })).toBeNull();
    expect(reshapeRefusal(lab, { ...lab, clusters: lab.clusters.filter((c) => c.name !== 'cluster2') })).toBeNull();
    expect(reshapeRefusal(lab, { ...lab, clusters: [{ name: 'hub2', vpc: 'vpc-1', hub: true }, spoke('cluster1')] })).toContain(
      'the hub of a lab cannot change',
    );
    expect(reshapeRefusal(lab, { ...lab, vpcs: [...lab.vpcs, { name: 'vpc-3' }] })).toContain('VPCs cannot be added or removed');
    expect(reshapeRefusal(lab, { ...lab, clusters: lab.clusters.map((c) => (c.name === 'cluster1' ? { ...c, vpc: 'vpc-1' } : c)) })).toContain(
      'a cluster cannot move to vpc-1',
    );
    expect(reshapeRefusal(lab, { ...lab, kubernetesVersion: 'v1.33.0' })).toContain('Kubernetes');
    expect(reshapeRefusal(lab, { ...lab, network: { ...lab.network, cidr: '10.9.0.0/16' } })).toContain('network.cidr');
  });

  it("refuses switching a kept addon between ours and upstream's, and lets addons come and go", () => {
    const lab = defaultLabConfig();
    const upstream = { ...lab, addonImplementations: { 'cluster-proxy': 'upstream' as const } };
    expect(reshapeRefusal(lab, upstream)).toBe(
      "its cluster-proxy is ocm-lab's build, and a running lab's addon cannot switch implementations (asked: upstream)",
    );
    expect(reshapeRefusal(upstream, lab)).toContain("its cluster-proxy is upstream's build");
    expect(reshapeRefusal(upstream, upstream)).toBeNull();
    expect(reshapeRefusal(lab, { ...upstream, addons: lab.addons.filter((a) => a !== 'cluster-proxy') })).toBeNull();
  });
});
