import crypto from 'node:crypto';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createTunnelClient,
  startProxyAgent,
  startProxyServer,
  NO_AGENT_AVAILABLE,
  type ProxyAgent,
  type ProxyServer,
  type TunnelClient,
} from '../../src/tunnel/index.js';
import { PacketType } from '../../src/tunnel/packet.js';
import { CONNECT_METHOD, Header, deserialize, serialize, type TunnelClientStream, type WirePacket } from '../../src/tunnel/wire.js';
import {
  echo,
  echoRoundTrip,
  makeTunnelPKI,
  type Pair,
  openFileDescriptors,
  peerTLS,
  serverTLS,
  startTarget,
  until,
  type Target,
  type TunnelPKI,
} from '../support/tunnel/fixture.js';

let pki: TunnelPKI;
const cleanups: (() => Promise<void> | void)[] = [];
const later = <T>(thing: T, fn: (t: T) => Promise<void> | void): T => {
  cleanups.push(() => fn(thing));
  return thing;
};

beforeAll(async () => {
  pki = await makeTunnelPKI();
});
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function server(
  opts: { agentPort?: number; strategies?: ('destHost' | 'default' | 'defaultRoute')[]; mode?: 'grpc' | 'http-connect' | 'both' } = {},
): Promise<ProxyServer> {
  const s = await startProxyServer({
    agent: { port: opts.agentPort ?? 0, tls: serverTLS(pki) },
    frontend: { port: 0, tls: serverTLS(pki) },
    httpConnect: opts.mode === 'both' ? { port: 0, tls: serverTLS(pki) } : undefined,
    health: { port: 0 },
    mode: opts.mode ?? 'grpc',
    strategies: opts.strategies ?? ['destHost'],
  });
  return later(s, (x) => x.close());
}

async function agent(s: ProxyServer, target: Target, extra: { agentID?: string; foreign?: boolean } = {}): Promise<ProxyAgent> {
  const a = await startProxyAgent({
    proxyServerHost: '127.0.0.1',
    proxyServerPort: s.ports.agent,
    agentID: extra.agentID ?? 'cluster1',
    agentIdentifiers: { host: ['cluster1'] },
    tls: peerTLS(pki, extra.foreign ? pki.foreignAgent : pki.agent),
    hostMappings: { 'cluster1:443': `127.0.0.1:${target.port}` },
    backoff: { initialMs: 100, capMs: 500 },
  });
  return later(a, (x) => x.close());
}

function client(s: ProxyServer, foreign = false): TunnelClient {
  const c = createTunnelClient({
    address: `127.0.0.1:${s.ports.frontend}`,
    tls: { ...peerTLS(pki, foreign ? pki.foreignClient : pki.client), servername: 'localhost' },
  });
  return later(c, (x) => x.close());
}

async function stack(handle: (s: net.Socket) => void = echo): Promise<{ s: ProxyServer; a: ProxyAgent; c: TunnelClient; t: Target }> {
  const t = later(await startTarget(handle), (x) => x.close());
  const s = await server();
  const a = await agent(s, t);
  await a.waitForServers(1, 10_000);
  return { s, a, c: client(s), t };
}

describe('tunnel on loopback', () => {
  it('carries 200 concurrent connections with checksum-verified echoes, and one of 64 MiB', async () => {
    const { c } = await stack();
    const results = await Promise.all(
      Array.from({ length: 200 }, async (_v, i) => {
        const sock = await c.dial('cluster1:443');
        try {
          return await echoRoundTrip(sock, 16 * 1024 + i * 97);
        } finally {
          sock.destroy();
        }
      }),
    );
    expect(results.filter(Boolean)).toHaveLength(200);
    const big = await c.dial('cluster1:443');
    expect(await echoRoundTrip(big, 64 * 1024 * 1024)).toBe(true);
    big.destroy();
  });

  it('load: holds 1 000 connections open at once, each echoing exactly while all are open; prints p99 and memory', async () => {
    const { c, t, a } = await stack();
    const rssBefore = process.memoryUsage().rss;
    const socks: Awaited<ReturnType<TunnelClient['dial']>>[] = [];
    for (let i = 0; i < 1_000; i += 100) socks.push(...(await Promise.all(Array.from({ length: Math.min(100, 1_000 - i) }, () => c.dial('cluster1:443')))));
    await until('1 000 target connections open', () => t.open() === 1_000);
    expect(a.activeConnections()).toBe(1_000);
    const latencies: number[] = [];
    const ok = await Promise.all(
      socks.map(async (sock, i) => {
        const start = performance.now();
        const exact = await echoRoundTrip(sock, 4 * 1024 + i);
        latencies.push(performance.now() - start);
        return exact;
      }),
    );
    const rssHeld = process.memoryUsage().rss;
    expect(ok.filter(Boolean)).toHaveLength(1_000);
    for (const sock of socks) sock.destroy();
    await until('every connection released', () => t.open() === 0 && a.activeConnections() === 0, 30_000);
    latencies.sort((x, y) => x - y);
    const q = (f: number) => latencies[Math.min(latencies.length - 1, Math.floor(f * latencies.length))]!.toFixed(1);
    console.log(
      `tunnel load: 1 000 concurrent connections, 4 KiB echo each: p50 ${q(0.5)} ms, p99 ${q(0.99)} ms, max ${q(1)} ms; RSS of the process (server, agent, client, target) ${(rssBefore / 2 ** 20).toFixed(0)} → ${(rssHeld / 2 ** 20).toFixed(0)} MiB while held`,
    );
  });

  it('load: moves 1 GiB through one connection intact (sha256 at both ends); prints the rate', async () => {
    const GIB = 1024 ** 3;
    const sent = crypto.createHash('sha256');
    // The target sends 1 GiB of a pattern that changes every MiB, honouring backpressure, hashing as it writes.
    const source = (sock: net.Socket): void => {
      const base = crypto.randomBytes(1024 * 1024);
      let i = 0;
      const pump = (): void => {
        while (i < 1024) {
          const chunk = Buffer.from(base);
          chunk.writeUInt32BE(i++, 0);
          sent.update(chunk);
          if (!sock.write(chunk)) return void sock.once('drain', pump);
        }
        sock.end();
      };
      pump();
    };
    const { c } = await stack(source);
    const got = crypto.createHash('sha256');
    let received = 0;
    const start = performance.now();
    const sock = await c.dial('cluster1:443');
    await new Promise<void>((resolve, reject) => {
      sock.on('data', (d: Buffer) => {
        got.update(d);
        received += d.length;
        if (received >= GIB) resolve();
      });
      sock.on('error', reject);
      sock.on('end', () => (received >= GIB ? resolve() : reject(new Error(`ended after ${received} of ${GIB} bytes`))));
    });
    const seconds = (performance.now() - start) / 1000;
    sock.destroy();
    expect(received).toBe(GIB);
    expect(got.digest('hex')).toBe(sent.digest('hex'));
    console.log(
      `tunnel load: 1 GiB through one connection in ${seconds.toFixed(1)} s (${((GIB * 8) / seconds / 1e6).toFixed(0)} Mbit/s, hashing at both ends included)`,
    );
  });

  it('serves HTTPS requests through the tunnel with an https.Agent, TLS end to end', async () => {
    const t = later(
      await new Promise<{ port: number; srv: https.Server }>((resolve) => {
        const srv = https.createServer({ cert: pki.target.certPem, key: pki.target.keyPem }, (req, res) => {
          res.end(req.url === '/healthz' ? 'ok' : `path ${req.url}`);
        });
        srv.listen(0, '127.0.0.1', () => resolve({ port: (srv.address() as net.AddressInfo).port, srv }));
      }),
      (x) => {
        x.srv.closeAllConnections();
        x.srv.close();
      },
    );
    const s = await server();
    const a = await agent(s, { port: t.port, open: () => 0, close: async () => undefined });
    await a.waitForServers(1, 10_000);
    const c = client(s);
    const httpsAgent = later(c.httpsAgent({ ca: pki.caPem }), (x) => x.destroy());
    const get = (path: string): Promise<string> =>
      new Promise((resolve, reject) => {
        https
          .get({ host: 'cluster1', port: 443, path, agent: httpsAgent }, (res) => {
            let body = '';
            res.on('data', (d: Buffer) => (body += d.toString()));
            res.on('end', () => resolve(`${res.statusCode} ${body}`));
          })
          .on('error', reject);
      });
    expect(await get('/healthz')).toBe('200 ok');
    const many = await Promise.all(Array.from({ length: 20 }, (_v, i) => get(`/r${i}`)));
    expect(many).toEqual(Array.from({ length: 20 }, (_v, i) => `200 path /r${i}`));
  });

  it('hands undici a TLS socket through the tunnel from its connect function', async () => {
    const { c } = await stack((sock) => {
      const srv = tls.createServer({ cert: pki.target.certPem, key: pki.target.keyPem }, (s) => s.end('hello from cluster1'));
      srv.emit('connection', sock);
    });
    const connect = c.undiciConnector({ ca: pki.caPem });
    const socket = await new Promise<NodeJS.ReadableStream>((resolve, reject) =>
      connect({ hostname: 'cluster1', port: '', protocol: 'https:' }, (err, s) => (err ? reject(err) : resolve(s!))),
    );
    let text = '';
    for await (const chunk of socket) text += String(chunk);
    expect(text).toBe('hello from cluster1');
    await expect(
      new Promise((resolve, reject) => connect({ hostname: 'cluster9', port: 443, protocol: 'https:' }, (err, s) => (err ? reject(err) : resolve(s)))),
    ).rejects.toThrow(NO_AGENT_AVAILABLE);
  });

  it('answers a dial for a host no agent serves at once with "No agent available"', async () => {
    const { c } = await stack();
    const started = Date.now();
    await expect(c.dial('cluster9:443')).rejects.toThrow(`tunnel dial to cluster9:443 failed: ${NO_AGENT_AVAILABLE}`);
    // Functional check that this is not the 30 s dial timeout.
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('reports a target that refuses the connection as a dial error naming it', async () => {
    const t = await startTarget(echo);
    const port = t.port;
    await t.close();
    const s = await server();
    const a = await agent(s, { port, open: () => 0, close: async () => undefined });
    await a.waitForServers(1, 10_000);
    await expect(client(s).dial('cluster1:443')).rejects.toThrow(/tunnel dial to cluster1:443 failed: dial tcp 127\.0\.0\.1:\d+: .*ECONNREFUSED/);
  });

  it('fails a pending dial at once when its agent disconnects', async () => {
    const s = await server();
    // A real agent connection (our wire code) that never answers dials, then goes away.
    const creds = grpc.credentials.createSsl(Buffer.from(pki.caPem), Buffer.from(pki.agent.keyPem), Buffer.from(pki.agent.certPem));
    const raw = later(new grpc.Client(`127.0.0.1:${s.ports.agent}`, creds, { 'grpc.ssl_target_name_override': 'localhost' }), (x) => x.close());
    const md = new grpc.Metadata();
    md.set(Header.agentID, 'silent');
    md.set(Header.agentIdentifiers, 'host=cluster1');
    const call = raw.makeBidiStreamRequest(CONNECT_METHOD, serialize, deserialize, md) as TunnelClientStream;
    call.on('error', () => undefined);
    const gotDial = new Promise<void>((resolve) => call.on('data', (p: WirePacket) => p.type === PacketType.DIAL_REQ && resolve()));
    await until('the silent agent is registered', () => s.ready());
    const dial = client(s).dial('cluster1:443');
    dial.catch(() => undefined);
    await gotDial;
    const started = Date.now();
    call.cancel();
    await expect(dial).rejects.toThrow(/agent silent disconnected before the dial to cluster1:443 completed/);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('releases the target socket when a dial is cancelled (DIAL_CLS) or a connection closed', async () => {
    const { s, t, a } = await stack();
    // Raw frontend stream: DIAL_REQ immediately followed by DIAL_CLS.
    const creds = grpc.credentials.createSsl(Buffer.from(pki.caPem), Buffer.from(pki.client.keyPem), Buffer.from(pki.client.certPem));
    const raw = later(new grpc.Client(`127.0.0.1:${s.ports.frontend}`, creds, { 'grpc.ssl_target_name_override': 'localhost' }), (x) => x.close());
    for (let i = 1n; i <= 20n; i++) {
      const call = raw.makeBidiStreamRequest('/ProxyService/Proxy', serialize, deserialize, new grpc.Metadata()) as TunnelClientStream;
      call.on('error', () => undefined);
      call.on('data', () => undefined);
      call.write({ type: PacketType.DIAL_REQ, protocol: 'tcp', address: 'cluster1:443', random: i });
      call.write({ type: PacketType.DIAL_CLS, random: i });
      call.end();
    }
    await until('every cancelled dial released its target socket', () => t.open() === 0 && a.activeConnections() === 0);
    expect(s.metrics.get('pending_backend_dials')).toBe(0);
  });

  it('keeps file descriptors flat over 10 000 dials', async () => {
    const { c, t, a, s } = await stack();
    const warm = await c.dial('cluster1:443');
    expect(await echoRoundTrip(warm, 100)).toBe(true);
    warm.destroy();
    await until('warm-up connection closed', () => t.open() === 0);
    const before = openFileDescriptors();
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < 10_000) {
        next++;
        const sock = await c.dial('cluster1:443');
        await new Promise<void>((resolve, reject) => {
          sock.once('data', () => resolve());
          sock.once('error', reject);
          sock.write('x');
        });
        sock.destroy();
      }
    };
    await Promise.all(Array.from({ length: 32 }, worker));
    await until(
      'all tunnelled connections closed',
      () => t.open() === 0 && a.activeConnections() === 0 && s.metrics.get('established_connections') === 0,
      30_000,
    );
    expect(openFileDescriptors() - before).toBeLessThanOrEqual(5);
  });

  it('bounds memory for a slow reader without stalling other connections', async () => {
    // Target: writes an endless counted stream, honouring backpressure, and reports how much the kernel took.
    let written = 0;
    const firehose = (sock: net.Socket): void => {
      const chunk = Buffer.alloc(64 * 1024, 7);
      const pump = (): void => {
        while (!sock.destroyed) {
          written += chunk.length;
          if (!sock.write(chunk)) {
            sock.once('drain', pump);
            return;
          }
        }
      };
      pump();
    };
    let sockets = 0;
    const t = later(await startTarget((sock) => (sockets++ === 0 ? firehose(sock) : echo(sock))), (x) => x.close());
    const s = await server();
    const a = await agent(s, t);
    await a.waitForServers(1, 10_000);
    const c = client(s);
    const slow = await c.dial('cluster1:443');
    slow.pause();
    await until('the firehose has been throttled', () => s.metrics.get('flow_pauses_total') > 0);
    const plateau = written;
    await new Promise((r) => setTimeout(r, 1500));
    // Backpressure reached the target: it could not write on (beyond a few socket buffers).
    expect(written - plateau).toBeLessThan(8 * 1024 * 1024);
    expect(written).toBeLessThan(64 * 1024 * 1024);
    // Another connection on the same agent still works at full size.
    const other = await c.dial('cluster1:443');
    expect(await echoRoundTrip(other, 8 * 1024 * 1024)).toBe(true);
    other.destroy();
    // The slow reader resumes and gets an intact stream.
    let got = 0;
    let intact = true;
    slow.on('data', (d: Buffer) => {
      got += d.length;
      if (d.some((b) => b !== 7)) intact = false;
    });
    slow.resume();
    await until('the slow reader caught up', () => got > plateau);
    expect(intact).toBe(true);
    slow.destroy();
  });

  it('reconnects after the agent restarts and after the server restarts', async () => {
    const t = later(await startTarget(echo), (x) => x.close());
    let s = await startProxyServer({ agent: { port: 0, tls: serverTLS(pki) }, frontend: { port: 0, tls: serverTLS(pki) }, strategies: ['destHost'] });
    const agentPort = s.ports.agent;
    let a = await agent(s, t);
    await a.waitForServers(1, 10_000);
    let c = client(s);
    const sock1 = await c.dial('cluster1:443');
    expect(await echoRoundTrip(sock1, 4096)).toBe(true);

    await a.close();
    // The connection it carried ends instead of hanging.
    await new Promise<void>((resolve) => (sock1.readableEnded ? resolve() : sock1.once('end', resolve).once('error', () => resolve())));
    await until('the server noticed the agent left', () => !s.ready());
    a = await agent(s, t);
    await a.waitForServers(1, 10_000);
    const sock2 = await c.dial('cluster1:443');
    expect(await echoRoundTrip(sock2, 4096)).toBe(true);
    sock2.destroy();

    const oldID = s.serverID;
    await s.close();
    await until('the agent noticed the server left', () => a.connectedServerIDs().length === 0);
    s = await startProxyServer({ agent: { port: agentPort, tls: serverTLS(pki) }, frontend: { port: 0, tls: serverTLS(pki) }, strategies: ['destHost'] });
    later(s, (x) => x.close());
    await a.waitForServers(1, 15_000);
    expect(a.connectedServerIDs()).toEqual([s.serverID]);
    expect(s.serverID).not.toBe(oldID);
    c = client(s);
    const sock3 = await c.dial('cluster1:443');
    expect(await echoRoundTrip(sock3, 4096)).toBe(true);
    sock3.destroy();
  });

  it('sends no address as the TLS server name when it dials the server by IP, and checks the certificate against the address', async () => {
    // A bare TLS server stands in for the proxy-server: it records the name the agent sends (SNI).
    const listen = async (pair: Pair, onSecure: (s: tls.TLSSocket) => void): Promise<number> => {
      const { certPem, keyPem, clientCaPem } = serverTLS(pki, pair);
      const srv = tls.createServer({ cert: certPem, key: keyPem, ca: clientCaPem, requestCert: true }, (sock) => {
        onSecure(sock);
        sock.destroy();
      });
      srv.on('tlsClientError', () => undefined);
      await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
      later(srv, (x) => new Promise<void>((resolve) => x.close(() => resolve())));
      return (srv.address() as net.AddressInfo).port;
    };
    const names: (string | false)[] = [];
    const logs: string[] = [];
    const start = (port: number) =>
      startProxyAgent({
        proxyServerHost: '127.0.0.1',
        proxyServerPort: port,
        agentID: 'sni',
        tls: peerTLS(pki, pki.agent),
        backoff: { initialMs: 100, capMs: 200 },
        log: (l) => logs.push(l),
      }).then((a) => later(a, (x) => x.close()));

    await start(await listen(pki.server, (sock) => names.push(sock.servername ?? false)));
    await until('the agent completed a TLS handshake', () => names.length > 0);
    expect(names[0]).toBe('proxy-server.invalid');

    // The certificate of `target` names only "cluster1": dialled at 127.0.0.1, the agent must refuse it.
    await start(await listen(pki.target, () => undefined));
    await until('the agent refused the certificate', () => logs.some((l) => l.includes("IP: 127.0.0.1 is not in the cert's list")));
  });

  it('refuses an agent and a client whose certificates come from a foreign CA', async () => {
    const t = later(await startTarget(echo), (x) => x.close());
    const s = await server();
    const bad = await agent(s, t, { agentID: 'intruder', foreign: true });
    await expect(bad.waitForServers(1, 2000)).rejects.toThrow(/connected to 0 of 1 proxy servers/);
    expect(s.agents()).toEqual([]);
    const good = await agent(s, t);
    await good.waitForServers(1, 10_000);
    await expect(client(s, true).dial('cluster1:443')).rejects.toThrow(/tunnel dial to cluster1:443 failed: proxy stream failed/);
    const ok = await client(s).dial('cluster1:443');
    expect(await echoRoundTrip(ok, 1000)).toBe(true);
    ok.destroy();
  });

  it('stops routing new dials to a draining agent', async () => {
    const { a, c, s } = await stack();
    const open = await c.dial('cluster1:443');
    a.drain();
    await until('the server marked the agent draining', () => s.agents().every((x) => x.draining));
    await expect(c.dial('cluster1:443')).rejects.toThrow(NO_AGENT_AVAILABLE);
    expect(await echoRoundTrip(open, 1000)).toBe(true);
    open.destroy();
  });

  it('offers an HTTP CONNECT frontend with client certificates', async () => {
    const t = later(await startTarget(echo), (x) => x.close());
    const s = await server({ mode: 'both' });
    const a = await agent(s, t);
    await a.waitForServers(1, 10_000);
    const connect = (target: string, pair = pki.client): Promise<{ head: string; sock: tls.TLSSocket }> =>
      new Promise((resolve, reject) => {
        const sock = tls.connect({
          host: '127.0.0.1',
          port: s.ports.httpConnect!,
          servername: 'localhost',
          ca: pki.caPem,
          cert: pair.certPem,
          key: pair.keyPem,
        });
        sock.on('error', reject);
        sock.once('secureConnect', () => sock.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`));
        let buf = '';
        const onData = (d: Buffer): void => {
          buf += d.toString('latin1');
          const end = buf.indexOf('\r\n\r\n');
          if (end >= 0) {
            sock.off('data', onData);
            resolve({ head: buf, sock });
          }
        };
        sock.on('data', onData);
        sock.on('close', () => resolve({ head: buf, sock }));
      });
    const ok = await connect('cluster1:443');
    expect(ok.head).toMatch(/^HTTP\/1\.1 200 Connection Established/);
    expect(await echoRoundTrip(ok.sock, 1024 * 1024)).toBe(true);
    ok.sock.destroy();
    const none = await connect('cluster9:443');
    expect(none.head).toMatch(/^HTTP\/1\.1 503 [^\r]*\r\n[\s\S]*No agent available/);
    none.sock.destroy();
    // The server drops the handshake: no status line ever comes back (an error or an empty close).
    const refused = await connect('cluster1:443', pki.foreignClient).then(
      (r) => r.head,
      (err: Error) => `error: ${err.message}`,
    );
    expect(refused).not.toMatch(/HTTP\/1\.1 200/);
    expect(refused === '' || refused.startsWith('error: ')).toBe(true);
  });

  it('keeps int64 dial IDs exact end to end', async () => {
    const { s } = await stack();
    const creds = grpc.credentials.createSsl(Buffer.from(pki.caPem), Buffer.from(pki.client.keyPem), Buffer.from(pki.client.certPem));
    const raw = later(new grpc.Client(`127.0.0.1:${s.ports.frontend}`, creds, { 'grpc.ssl_target_name_override': 'localhost' }), (x) => x.close());
    for (const random of [(1n << 63n) - 1n, -(1n << 63n), 9007199254740993n]) {
      const call = raw.makeBidiStreamRequest('/ProxyService/Proxy', serialize, deserialize, new grpc.Metadata()) as TunnelClientStream;
      call.on('error', () => undefined);
      const rsp = new Promise<WirePacket>((resolve) => call.on('data', resolve));
      call.write({ type: PacketType.DIAL_REQ, protocol: 'tcp', address: 'cluster1:443', random });
      const p = await rsp;
      expect(p.type).toBe(PacketType.DIAL_RSP);
      if (p.type !== PacketType.DIAL_RSP) return;
      expect(p.random).toBe(random);
      expect(p.error).toBe('');
      call.write({ type: PacketType.CLOSE_REQ, connectID: p.connectID });
      await new Promise((r) => call.on('end', r));
    }
  });
});
