import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../src/errors.js';
import { parseDuration, parseHostMapping, parsePort, readPemFlag } from '../../src/tunnel/flags.js';
import { proxyServerCommand } from '../../src/cli/commands/internal/proxy-server.js';
import { proxyAgentCommand } from '../../src/cli/commands/internal/proxy-agent.js';

describe('tunnel entry-point flags', () => {
  it('parses Go-style durations', () => {
    expect(parseDuration('sync-interval', '500ms')).toBe(500);
    expect(parseDuration('sync-interval', '10s')).toBe(10_000);
    expect(parseDuration('x', '1m30s')).toBe(90_000);
    expect(() => parseDuration('sync-interval', '10')).toThrow(/--sync-interval "10" is not a duration/);
    expect(() => parseDuration('x', '')).toThrow(InvalidInputError);
  });

  it('parses host mappings and names a bad one', () => {
    expect(parseHostMapping('cluster1:443=10.0.0.2:6443')).toEqual(['cluster1:443', '10.0.0.2:6443']);
    expect(() => parseHostMapping('cluster1=10.0.0.2:6443')).toThrow(/--host-mapping "cluster1=10.0.0.2:6443" is not <host>:<port>=<host>:<port>/);
  });

  it('checks ports', () => {
    expect(parsePort('agent-port', 0)).toBe(0);
    expect(() => parsePort('agent-port', 70000)).toThrow(/--agent-port 70000 is not a port number/);
  });

  it('reads PEM files and reports a missing flag or file with exit code 2', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tunnel-flags-'));
    try {
      fs.writeFileSync(path.join(dir, 'ca.crt'), 'PEM');
      expect(readPemFlag('ca-cert', path.join(dir, 'ca.crt'), '').toString()).toBe('PEM');
      expect(() => readPemFlag('ca-cert', undefined, 'the server certificate is verified against it')).toThrow(/--ca-cert is required: the server certificate/);
      try {
        readPemFlag('agent-key', path.join(dir, 'missing.key'), '');
        expect.unreachable();
      } catch (err) {
        expect(err).toBeInstanceOf(InvalidInputError);
        expect((err as InvalidInputError).exitCode).toBe(2);
        expect((err as Error).message).toMatch(/--agent-key .*missing\.key: cannot read it \(ENOENT\)/);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('rejects bad proxy-server input before starting anything', async () => {
    const base = {
      'server-port': 0,
      'server-bind-address': '127.0.0.1',
      'http-connect-port': 0,
      'agent-port': 0,
      'agent-bind-address': '127.0.0.1',
      'health-port': 0,
      'health-bind-address': '127.0.0.1',
      'admin-port': 0,
      'admin-bind-address': '127.0.0.1',
      mode: 'grpc',
      'server-count': 1,
      'proxy-strategies': 'destHost',
      'backend-dial-timeout': '30s',
    };
    const handler = proxyServerCommand.handler as (a: unknown) => Promise<void>;
    await expect(handler({ ...base, mode: 'udp' })).rejects.toThrow(/--mode "udp" is not one of grpc, http-connect, both/);
    await expect(handler({ ...base, 'proxy-strategies': 'nearest' })).rejects.toThrow(/--proxy-strategies: unknown proxy strategy "nearest"/);
    await expect(handler({ ...base, 'server-count': 0 })).rejects.toThrow(/--server-count 0/);
    await expect(handler(base)).rejects.toThrow(/--server-cert is required/);
  });

  it('rejects bad proxy-agent input before connecting', async () => {
    const base = {
      'proxy-server-host': '127.0.0.1',
      'proxy-server-port': 1,
      'agent-identifiers': '',
      'host-mapping': [],
      'sync-interval': '1s',
      'sync-interval-cap': '10s',
      'health-server-host': '127.0.0.1',
      'health-server-port': 0,
      'drain-timeout': '30s',
    };
    const handler = proxyAgentCommand.handler as (a: unknown) => Promise<void>;
    await expect(handler(base)).rejects.toThrow(/--agent-id is required/);
    await expect(handler({ ...base, 'agent-id': 'a', 'agent-identifiers': ';' })).rejects.toThrow(/--agent-identifiers: .*';' is not a separator/);
    await expect(handler({ ...base, 'agent-id': 'a', 'host-mapping': ['nope'] })).rejects.toThrow(/--host-mapping "nope"/);
    await expect(handler({ ...base, 'agent-id': 'a' })).rejects.toThrow(/--ca-cert is required/);
  });
});
