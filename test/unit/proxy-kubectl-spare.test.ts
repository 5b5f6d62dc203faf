import net from 'node:net';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { tunnelListener } from '../../src/addons/proxy-kubectl.js';
import type { TunnelSocket } from '../../src/tunnel/client.js';

// A tunnel whose every dial is a TCP connection to a loopback echo server: what the listener hands kubectl.
async function echoTunnel() {
  const remotes: net.Socket[] = [];
  const accepted: net.Socket[] = [];
  const server = net.createServer((s) => {
    accepted.push(s);
    s.pipe(s);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  const dial = (_address?: string) =>
    new Promise<TunnelSocket>((resolve, reject) => {
      const s = net.connect(port, '127.0.0.1', () => resolve(s as unknown as TunnelSocket));
      s.once('error', reject);
      remotes.push(s);
    });
  return {
    dial,
    remotes,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of [...remotes, ...accepted]) s.destroy();
        server.close(() => resolve());
      }),
  };
}

async function roundTrip(port: number, text: string): Promise<string> {
  const s = net.connect(port, '127.0.0.1');
  s.write(text);
  // kubectl does not half-close its connection: one answer is read, then the connection is closed.
  const got = await new Promise<string>((resolve, reject) => {
    s.once('data', (chunk: Buffer) => resolve(chunk.toString()));
    s.once('error', reject);
    s.once('close', () => resolve(''));
  });
  s.destroy();
  return got;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

describe('proxy kubectl: the dial made ahead', () => {
  it('goes to the first connection while it is young: one dial in all', async () => {
    const tunnel = await echoTunnel();
    const listener = await tunnelListener(tunnel, 'cluster1', 10_000);
    cleanups.push(listener.close, tunnel.close);
    expect(await roundTrip(listener.port, 'hello')).toBe('hello');
    expect(tunnel.remotes).toHaveLength(1);
  });

  it('is made again by dialAhead (before each interactive command) and taken by the next connection: one dial per connection', async () => {
    const tunnel = await echoTunnel();
    const listener = await tunnelListener(tunnel, 'cluster1', 10_000);
    cleanups.push(listener.close, tunnel.close);
    expect(await roundTrip(listener.port, 'first')).toBe('first');
    listener.dialAhead();
    listener.dialAhead();
    // The dial is made at dialAhead, before any connection, and only once while it waits.
    expect(tunnel.remotes).toHaveLength(2);
    expect(await roundTrip(listener.port, 'second')).toBe('second');
    expect(tunnel.remotes).toHaveLength(2);
  });

  it('is not made after the listener closed', async () => {
    const tunnel = await echoTunnel();
    const listener = await tunnelListener(tunnel, 'cluster1', 10_000);
    cleanups.push(tunnel.close);
    await listener.close();
    listener.dialAhead();
    expect(tunnel.remotes).toHaveLength(1);
    expect(await closesWithin(tunnel.remotes[0]!, 2000)).toBe(true);
  });

  it('is dropped before kube-apiserver would close it unused: the next connection dials its own', async () => {
    const tunnel = await echoTunnel();
    const listener = await tunnelListener(tunnel, 'cluster1', 50);
    cleanups.push(listener.close, tunnel.close);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(tunnel.remotes[0]!.destroyed).toBe(true);
    expect(await roundTrip(listener.port, 'late')).toBe('late');
    expect(tunnel.remotes).toHaveLength(2);
  });
});

/** Resolves true when `s` closes within `ms`, false when it is still open then. */
function closesWithin(s: net.Socket, ms: number): Promise<boolean> {
  if (s.destroyed) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    s.once('close', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

describe('proxy kubectl: a tunnel connection ends with its local connection', () => {
  it('when the session closes before the local connection ended (kubectl gone, its FIN not read yet)', async () => {
    const tunnel = await echoTunnel();
    const listener = await tunnelListener(tunnel, 'cluster1', 10_000);
    cleanups.push(tunnel.close);
    const s = net.connect(listener.port, '127.0.0.1');
    cleanups.push(async () => void s.destroy());
    s.write('hello');
    await new Promise((resolve) => s.once('data', resolve));
    await listener.close();
    expect(await closesWithin(tunnel.remotes[0]!, 2000)).toBe(true);
  });

  it('when the local connection is reset', async () => {
    const tunnel = await echoTunnel();
    const listener = await tunnelListener(tunnel, 'cluster1', 10_000);
    cleanups.push(listener.close, tunnel.close);
    const s = net.connect(listener.port, '127.0.0.1');
    s.write('hello');
    await new Promise((resolve) => s.once('data', resolve));
    s.resetAndDestroy();
    expect(await closesWithin(tunnel.remotes[0]!, 2000)).toBe(true);
  });
});

describe('proxy kubectl: a dial that fails', () => {
  it('closes the local connection and hands the reason to the caller (kubectl itself can only say EOF)', async () => {
    let dials = 0;
    const tunnel = {
      dial: () => {
        dials += 1;
        return Promise.reject(new Error(`tunnel dial to cluster1:443 failed: no answer within 30000 ms (dial ${dials})`));
      },
    };
    const told: string[] = [];
    const listener = await tunnelListener(tunnel, 'cluster1', 10_000, (err) => told.push(err.message));
    cleanups.push(listener.close);
    // The dial made ahead failed too: the connection dials its own, which fails and is reported.
    expect(await roundTrip(listener.port, 'hello')).toBe('');
    expect(told).toEqual(['tunnel dial to cluster1:443 failed: no answer within 30000 ms (dial 2)']);
  });
});

describe('proxy kubectl: a spare the far end closed while nobody read it', () => {
  it('is not handed to kubectl (it would read EOF at once): the connection dials its own', async () => {
    const tunnel = await echoTunnel();
    // What a TunnelSocket is after CLOSE_RSP with nobody reading: its end-of-stream waits in the buffer, no 'close' yet.
    const closedSpare = Object.assign(new PassThrough(), { closedByFarEnd: true });
    closedSpare.end();
    let dials = 0;
    const dial = (address: string) => (++dials === 1 ? Promise.resolve(closedSpare as unknown as TunnelSocket) : tunnel.dial(address));
    const listener = await tunnelListener({ dial }, 'cluster1', 10_000);
    cleanups.push(listener.close, tunnel.close);
    expect(await roundTrip(listener.port, 'hello')).toBe('hello');
    expect(dials).toBe(2);
    expect(closedSpare.destroyed).toBe(true);
  });
});
