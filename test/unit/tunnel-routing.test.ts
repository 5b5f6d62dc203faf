import { describe, expect, it } from 'vitest';
import { formatAgentIdentifiers, IdentifierParseError, parseAgentIdentifiers } from '../../src/tunnel/identifiers.js';
import { chooseAgent, parseStrategies, StrategyParseError, type Candidate } from '../../src/tunnel/strategy.js';
import { splitHostPort } from '../../src/tunnel/wire.js';

describe('agent identifiers', () => {
  it('parses every kind, repeated keys and percent-encoding', () => {
    const ids = parseAgentIdentifiers(
      'host=cluster1&host=cluster1.open-cluster-management-cluster-proxy&ipv4=10.0.0.2&ipv6=fd00%3A%3A1&cidr=10.0.0.0%2F8&default-route=true',
    );
    expect(ids).toEqual({
      host: ['cluster1', 'cluster1.open-cluster-management-cluster-proxy'],
      ipv4: ['10.0.0.2'],
      ipv6: ['fd00::1'],
      cidr: ['10.0.0.0/8'],
      defaultRoute: true,
    });
  });

  it('ignores unknown keys and counts only the first default-route', () => {
    expect(parseAgentIdentifiers('uid=x&future=1&default-route=false&default-route=true')).toEqual({
      host: [],
      ipv4: [],
      ipv6: [],
      cidr: [],
      defaultRoute: false,
    });
    expect(parseAgentIdentifiers('default-route=nonsense').defaultRoute).toBe(false);
    expect(parseAgentIdentifiers('').host).toEqual([]);
  });

  it('rejects text that is not URL-query form', () => {
    expect(() => parseAgentIdentifiers(';')).toThrow(IdentifierParseError);
    expect(() => parseAgentIdentifiers('host=%zz')).toThrow(/percent-encoding/);
  });

  it('formats what it parses', () => {
    const text = formatAgentIdentifiers({ host: ['a', 'b.c'], ipv4: ['1.2.3.4'], defaultRoute: true });
    expect(text).toBe('host=a&host=b.c&ipv4=1.2.3.4&default-route=true');
    expect(parseAgentIdentifiers(text).host).toEqual(['a', 'b.c']);
  });
});

describe('proxy strategies', () => {
  const agent = (name: string, ids: string, draining = false): Candidate & { name: string } => ({ name, identifiers: parseAgentIdentifiers(ids), draining });
  const c1 = agent('c1', 'host=cluster1');
  const c2 = agent('c2', 'host=cluster2&ipv4=10.0.0.9');
  const gw = agent('gw', 'default-route=true');

  it('parses a list and names the bad entry', () => {
    expect(parseStrategies('destHost,default')).toEqual(['destHost', 'default']);
    expect(() => parseStrategies('destHost,nearest')).toThrow(/unknown proxy strategy "nearest"/);
    expect(() => parseStrategies(' , ')).toThrow(StrategyParseError);
  });

  it('destHost matches the address host exactly against host and ip identifiers', () => {
    expect(chooseAgent([c1, c2, gw], 'cluster2:443', ['destHost'])?.name).toBe('c2');
    expect(chooseAgent([c1, c2, gw], '10.0.0.9:6443', ['destHost'])?.name).toBe('c2');
    expect(chooseAgent([c1, c2, gw], 'cluster:443', ['destHost'])).toBeUndefined();
    expect(chooseAgent([c1, c2], 'cluster1.example:443', ['destHost'])).toBeUndefined();
  });

  it('falls through strategies in order', () => {
    expect(chooseAgent([c1, c2, gw], 'elsewhere:80', ['destHost', 'defaultRoute'])?.name).toBe('gw');
    expect(chooseAgent([c1], 'elsewhere:80', ['destHost', 'defaultRoute'])).toBeUndefined();
    expect(chooseAgent([c1, c2], 'elsewhere:80', ['destHost', 'default'], () => 0.99)?.name).toBe('c2');
  });

  it('default picks any agent at random', () => {
    expect(chooseAgent([c1, c2], 'x:1', ['default'], () => 0)?.name).toBe('c1');
    expect(chooseAgent([c1, c2], 'x:1', ['default'], () => 0.6)?.name).toBe('c2');
    expect(chooseAgent([], 'x:1', ['default'])).toBeUndefined();
  });

  it('never picks a draining agent', () => {
    const d = agent('d', 'host=cluster1', true);
    expect(chooseAgent([d], 'cluster1:443', ['destHost', 'default'])).toBeUndefined();
    expect(chooseAgent([d, c2], 'cluster1:443', ['destHost', 'default'])?.name).toBe('c2');
  });

  it('splits host:port including IPv6 brackets', () => {
    expect(splitHostPort('cluster1:443')).toEqual(['cluster1', '443']);
    expect(splitHostPort('[fd00::1]:6443')).toEqual(['fd00::1', '6443']);
    expect(() => splitHostPort('cluster1')).toThrow(/not host:port/);
  });
});
