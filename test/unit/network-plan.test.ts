import { describe, expect, it } from 'vitest';
import { ConflictError } from '../../src/errors.js';
import { chainRules, chooseCidr, overlaps, planLoopback, planNetworkIn, usedRanges, type NetworkPlanInput } from '../../src/runtime/local/network/index.js';

const input = (labName: string): NetworkPlanInput => ({
  labName,
  vpcs: [
    { name: 'vpc-1', hub: true, clusters: ['hub'] },
    { name: 'vpc-2', hub: false, clusters: ['cluster1', 'cluster2'] },
  ],
});

describe('network plan', () => {
  it('gives each VPC a namespace, a /24 and each cluster its own address', () => {
    const plan = planNetworkIn(input('default'), '10.213.0.0/16');
    expect(plan.vpcs.map((v) => v.netns)).toEqual(['ocmlab.default.vpc-1', 'ocmlab.default.vpc-2']);
    expect(plan.vpcs.map((v) => v.subnet)).toEqual(['10.213.1.0/24', '10.213.2.0/24']);
    expect(plan.vpcs[0]!.gateway).toBe('10.213.1.1');
    expect(plan.vpcs[1]!.clusterAddresses).toEqual({ cluster1: '10.213.2.10', cluster2: '10.213.2.11' });
  });

  it('keeps interface and chain names within Linux limits and distinct between labs', () => {
    const a = planNetworkIn(input('a-very-long-lab-name'), '10.213.0.0/16');
    const b = planNetworkIn(input('another-lab'), '10.214.0.0/16');
    for (const v of [...a.vpcs, ...b.vpcs]) {
      expect(v.hostIf.length).toBeLessThanOrEqual(15);
      expect(v.nsIf.length).toBeLessThanOrEqual(15);
    }
    expect(a.chain.length).toBeLessThanOrEqual(28);
    expect(a.chain).not.toBe(b.chain);
    expect(a.vpcs[0]!.hostIf).not.toBe(b.vpcs[0]!.hostIf);
  });

  it('splits small ranges into quarter subnets', () => {
    const plan = planNetworkIn(input('x'), '192.168.50.0/24');
    expect(plan.vpcs.map((v) => v.subnet)).toEqual(['192.168.50.0/26', '192.168.50.64/26']);
    expect(plan.vpcs[1]!.clusterAddresses.cluster2).toBe('192.168.50.75');
  });

  it('allows spoke→hub, drops everything else that crosses a VPC boundary', () => {
    const plan = planNetworkIn(input('default'), '10.213.0.0/16');
    const rules = chainRules(plan).map((r) => r.join(' '));
    const [hub, spoke] = plan.vpcs;
    expect(rules[0]).toContain('ESTABLISHED,RELATED');
    expect(rules).toContain(`-i ${spoke!.hostIf} -o ${hub!.hostIf} -m comment --comment ocm-lab:default -j ACCEPT`);
    expect(rules.some((r) => r.startsWith(`-i ${hub!.hostIf} -o`))).toBe(false);
    expect(rules).toContain(`-i ${hub!.hostIf} -m comment --comment ocm-lab:default -j DROP`);
    expect(rules.indexOf(`-i ${hub!.hostIf} -m comment --comment ocm-lab:default -j DROP`)).toBeGreaterThan(1);
  });

  it('gives loopback labs distinct 127.x addresses', () => {
    const plan = planLoopback(input('default'));
    const addrs = plan.vpcs.flatMap((v) => Object.values(v.clusterAddresses));
    expect(new Set(addrs).size).toBe(3);
    expect(addrs.every((a) => a.startsWith('127.'))).toBe(true);
    expect(plan.mode).toBe('loopback');
  });
});

describe('lab range choice', () => {
  const routes = [
    { dst: 'default', gateway: '192.0.2.1', dev: 'eth0' },
    { dst: '192.0.2.0/24', dev: 'eth0' },
    { dst: '10.213.0.0/16', dev: 'tun0' },
    { type: 'local', dst: '127.0.0.0/8', dev: 'lo' },
  ];
  const addrs = [{ ifname: 'eth0', addr_info: [{ family: 'inet', local: '192.0.2.2', prefixlen: 24 }] }];

  it('detects overlaps', () => {
    expect(overlaps('10.213.0.0/16', '10.213.5.0/24')).toBe(true);
    expect(overlaps('10.213.0.0/16', '10.214.0.0/16')).toBe(false);
    expect(overlaps('10.0.0.0/8', '10.214.0.0/16')).toBe(true);
  });

  it('skips used candidates and ignores its own interfaces', () => {
    const used = usedRanges(routes, addrs);
    expect(chooseCidr(undefined, used, 'olabc123')).toBe('10.214.0.0/16');
    const own = usedRanges([{ dst: '10.213.1.0/24', dev: 'olabc1230h' }], []);
    expect(chooseCidr(undefined, own, 'olabc123')).toBe('10.213.0.0/16');
  });

  it('refuses an explicit range that overlaps a route, naming it', () => {
    const err = (() => {
      try {
        chooseCidr('10.213.0.0/16', usedRanges(routes, addrs), 'olabc123');
      } catch (e) {
        return e;
      }
      return null;
    })();
    expect(err).toBeInstanceOf(ConflictError);
    expect((err as Error).message).toContain('route 10.213.0.0/16 dev tun0');
  });
});
