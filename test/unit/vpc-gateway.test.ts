import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { parseForward, startVpcGateway, type VpcGateway } from '../../src/runtime/kind/vpc-gateway.js';

/** The kind runtime's TCP forwarder, on loopback: a real target server, real client sockets. */

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function target(onConnection: (s: net.Socket) => void): Promise<number> {
  const server = net.createServer({ allowHalfOpen: true }, onConnection);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
  const sockets = new Set<net.Socket>();
  server.on('connection', (s) => sockets.add(s));
  cleanups.push(() => sockets.forEach((s) => s.destroy()));
  return (server.address() as net.AddressInfo).port;
}

async function gateway(targetPort: number, opts: { connectTimeoutMs?: number } = {}): Promise<{ gw: VpcGateway; port: number; logs: string[] }> {
  const logs: string[] = [];
  const gw = await startVpcGateway([{ listenPort: 0, host: 'localhost', port: targetPort }], { listenHost: '127.0.0.1', log: (l) => logs.push(l), ...opts });
  cleanups.push(() => gw.close());
  return { gw, port: gw.ports[0] as number, logs };
}

function connect(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: '127.0.0.1', port, allowHalfOpen: true }, () => resolve(s));
    s.once('error', reject);
    cleanups.push(() => void s.destroy());
  });
}

function readAll(s: net.Socket): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    s.on('data', (c: Buffer) => chunks.push(c));
    s.once('end', () => resolve(Buffer.concat(chunks)));
    s.once('error', reject);
  });
}

describe('parseForward', () => {
  it('reads PORT=HOST:PORT', () => {
    expect(parseForward('6443=hub-control-plane:6443')).toEqual({ listenPort: 6443, host: 'hub-control-plane', port: 6443 });
    expect(parseForward('8091=10.200.0.2:8091')).toEqual({ listenPort: 8091, host: '10.200.0.2', port: 8091 });
    expect(parseForward('0=[::1]:80')).toEqual({ listenPort: 0, host: '::1', port: 80 });
  });
  it('rejects what is not', () => {
    for (const bad of ['6443', 'hub:6443', '6443=hub', '70000=hub:1', '1=hub:0', '1=hub:99999', '1=a b:2'])
      expect(() => parseForward(bad)).toThrow(/--forward/);
  });
});

describe('startVpcGateway', () => {
  it('carries bytes both ways and passes a half-close on', async () => {
    // The target reads everything until the client's FIN, then answers with its size and what it got, and ends.
    const tport = await target((s) => {
      const chunks: Buffer[] = [];
      s.on('data', (c: Buffer) => chunks.push(c));
      s.on('end', () => {
        const got = Buffer.concat(chunks);
        s.end(Buffer.concat([Buffer.from(`${got.length}:`), got]));
      });
    });
    const { port } = await gateway(tport);
    const client = await connect(port);
    const payload = Buffer.alloc(3 * 1024 * 1024, 'x'); // more than socket buffers: back-pressure in play
    const reply = readAll(client);
    client.end(payload);
    const answer = await reply;
    expect(answer.subarray(0, 8).toString()).toBe(`${payload.length}:`);
    expect(answer.length).toBe(payload.length + 8);
  });

  it('keeps the target-to-client direction open after the client ends its side', async () => {
    let serverSide: net.Socket | undefined;
    const tport = await target((s) => {
      serverSide = s;
      s.resume();
    });
    const { port } = await gateway(tport);
    const client = await connect(port);
    const reply = readAll(client);
    client.end('bye');
    await new Promise<void>((r) => {
      const poll = setInterval(() => {
        if (serverSide?.readableEnded) {
          clearInterval(poll);
          r();
        }
      }, 5);
    });
    serverSide?.write('still here');
    serverSide?.end();
    expect((await reply).toString()).toBe('still here');
  });

  it('closes the client connection promptly when the target is down, and logs it once', async () => {
    const free = await target(() => undefined);
    await cleanups.pop()?.(); // sockets
    await cleanups.pop()?.(); // the server: nothing listens on `free` any more
    const { port, logs } = await gateway(free);
    const client = await connect(port);
    const started = Date.now();
    await new Promise<void>((resolve) => {
      client.on('error', () => undefined);
      client.once('close', () => resolve());
    });
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatch(/connect: ECONNREFUSED/);
  });

  it('serves many connections at once', async () => {
    const tport = await target((s) => s.pipe(s)); // echo
    const { gw, port } = await gateway(tport);
    const results = await Promise.all(
      Array.from({ length: 100 }, async (_, i) => {
        const c = await connect(port);
        const reply = readAll(c);
        c.end(`hello ${i}`.repeat(100));
        return (await reply).toString() === `hello ${i}`.repeat(100);
      }),
    );
    expect(results.every(Boolean)).toBe(true);
    await new Promise((r) => setTimeout(r, 50));
    expect(gw.activeConnections()).toBe(0);
  });

  it('close() ends open connections and frees the port', async () => {
    const tport = await target((s) => s.resume());
    const { gw, port } = await gateway(tport);
    const client = await connect(port);
    // The client socket is half-open capable: the gateway's end shows as 'end' (or a reset as 'close').
    const closed = new Promise<void>((r) => {
      client.once('end', () => r());
      client.once('close', () => r());
    });
    client.on('error', () => undefined);
    client.resume();
    await gw.close();
    await closed;
    await expect(connect(port)).rejects.toThrow(/ECONNREFUSED/);
  });

  it('says which port it could not bind', async () => {
    const busy = net.createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise<void>((r) => busy.close(() => r())));
    const port = (busy.address() as net.AddressInfo).port;
    await expect(startVpcGateway([{ listenPort: port, host: 'localhost', port: 1 }], { listenHost: '127.0.0.1' })).rejects.toThrow(
      new RegExp(`127.0.0.1:${port}: EADDRINUSE`),
    );
  });
});
