import { describe, expect, it } from 'vitest';
import { execa } from 'execa';
import net from 'node:net';
import { tcpProbeArgv } from '../../src/runtime/tcp-probe.js';

describe('tcpProbeArgv', () => {
  it('passes host and port as arguments, never inside the script', () => {
    const argv = tcpProbeArgv({ host: 'a; rm -rf /', port: 6443 }, 2500);
    expect(argv.slice(0, 5)).toEqual(['timeout', '3', 'bash', '-c', 'exec 3<>"/dev/tcp/$0/$1"']);
    expect(argv.slice(5)).toEqual(['a; rm -rf /', '6443']);
  });

  it('connects to a listening loopback port and fails on a closed one', async () => {
    const server = net.createServer((s) => s.destroy());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const open = tcpProbeArgv({ host: '127.0.0.1', port }, 2000);
      expect((await execa(open[0]!, open.slice(1), { reject: false })).exitCode).toBe(0);
    } finally {
      await new Promise((r) => server.close(r));
    }
    const closed = tcpProbeArgv({ host: '127.0.0.1', port }, 2000);
    expect((await execa(closed[0]!, closed.slice(1), { reject: false })).exitCode).not.toBe(0);
  });
});
