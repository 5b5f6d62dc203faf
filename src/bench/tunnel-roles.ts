/**
 * One part of the tunnel benchmark, run as its own process (possibly inside a
 * network namespace): `node dist/bench/tunnel-roles.js <role> '<json>'`.
 * Prints one JSON line when ready (or with its results), then runs until killed.
 */
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { createTunnelClient, startProxyAgent, startProxyServer, tuneGcForBulkTransfer } from '../tunnel/index.js';

interface Certs {
  certFile: string;
  keyFile: string;
  caFile: string;
}

const read = (f: string): Buffer => fs.readFileSync(f);
const say = (o: unknown): void => {
  process.stdout.write(`${JSON.stringify(o)}\n`);
};

/** Sink: reads an 8-byte length, then that many bytes, then answers one byte. */
function sink(sock: net.Socket): void {
  let want = -1n;
  let got = 0n;
  let head = Buffer.alloc(0);
  sock.on('data', (d: Buffer) => {
    if (want < 0n) {
      head = Buffer.concat([head, d]);
      if (head.length < 8) return;
      want = head.readBigUInt64BE(0);
      got = BigInt(head.length - 8);
    } else {
      got += BigInt(d.length);
    }
    if (got >= want) sock.end('k');
  });
  sock.on('error', () => undefined);
}

async function listen(server: net.Server, host: string): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return (server.address() as net.AddressInfo).port;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

interface MeasureSpec {
  via: 'direct' | 'tunnel';
  proxy?: { address: string; servername: string } & Certs;
  sink: string;
  http: string;
  bytes: number;
  requests: number;
  /** One measurement per process, so the bench can account the tunnel's CPU time to each. */
  phase: 'transfer' | 'requests';
}

async function measure(spec: MeasureSpec): Promise<void> {
  const client = spec.proxy
    ? createTunnelClient({
        address: spec.proxy.address,
        tls: { certPem: read(spec.proxy.certFile), keyPem: read(spec.proxy.keyFile), caPem: read(spec.proxy.caFile), servername: spec.proxy.servername },
      })
    : undefined;
  const [sinkHost, sinkPort] = spec.sink.split(':') as [string, string];
  const [httpHost, httpPort] = spec.http.split(':') as [string, string];
  const open = async (host: string, port: string): Promise<net.Socket> => {
    if (client) return (await client.dial(`${host}:${port}`)) as unknown as net.Socket;
    const s = net.connect({ host, port: Number(port), noDelay: true });
    await new Promise((resolve, reject) => s.once('connect', resolve).once('error', reject));
    return s;
  };

  const result: { mbitPerSec?: number; seconds?: number; p50ms?: number; p99ms?: number } = {};
  // Throughput: one connection, `bytes` to the sink, timed until its one-byte answer.
  if (spec.phase === 'transfer') {
    const sock = await open(sinkHost, sinkPort);
    const chunk = Buffer.alloc(1 << 20, 0x5a);
    const header = Buffer.alloc(8);
    header.writeBigUInt64BE(BigInt(spec.bytes));
    const acked = new Promise<void>((resolve, reject) => {
      sock.once('data', () => resolve());
      sock.once('error', reject);
    });
    const t0 = process.hrtime.bigint();
    sock.write(header);
    for (let sent = 0; sent < spec.bytes; sent += chunk.length) {
      if (!sock.write(chunk.subarray(0, Math.min(chunk.length, spec.bytes - sent)))) await new Promise((r) => sock.once('drain', r));
    }
    await acked;
    result.seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    result.mbitPerSec = (spec.bytes * 8) / result.seconds / 1e6;
    sock.destroy();
  }

  // Latency: sequential small GETs over one kept-alive connection.
  if (spec.phase === 'requests') {
    const agent = client ? client.httpAgent({ keepAlive: true, maxSockets: 1 }) : new http.Agent({ keepAlive: true, maxSockets: 1 });
    const get = (): Promise<void> =>
      new Promise((resolve, reject) => {
        http
          .get({ host: httpHost, port: Number(httpPort), path: '/small', agent }, (res) => {
            res.resume();
            res.on('end', () => resolve());
          })
          .on('error', reject);
      });
    for (let i = 0; i < 20; i++) await get();
    const times: number[] = [];
    for (let i = 0; i < spec.requests; i++) {
      const s = process.hrtime.bigint();
      await get();
      times.push(Number(process.hrtime.bigint() - s) / 1e6);
    }
    times.sort((a, b) => a - b);
    agent.destroy();
    result.p50ms = percentile(times, 50);
    result.p99ms = percentile(times, 99);
  }
  client?.close();
  say(result);
}

async function main(role: string, json: string): Promise<void> {
  const o = JSON.parse(json) as Record<string, unknown>;
  switch (role) {
    case 'targets': {
      const host = String(o.host);
      const sinkPort = await listen(net.createServer(sink), host);
      const httpPort = await listen(
        http.createServer((_req, res) => res.end('ok')),
        host,
      );
      say({ sinkPort, httpPort });
      return;
    }
    case 'server': {
      const c = o as unknown as Certs & { agentHost: string; frontendHost: string };
      const tls = { certPem: read(c.certFile), keyPem: read(c.keyFile), clientCaPem: read(c.caFile) };
      tuneGcForBulkTransfer();
      const s = await startProxyServer({
        agent: { host: c.agentHost, port: 0, tls },
        frontend: { host: c.frontendHost, port: 0, tls },
        strategies: ['destHost', 'default'],
      });
      say({ agentPort: s.ports.agent, frontendPort: s.ports.frontend });
      return;
    }
    case 'agent': {
      const c = o as unknown as Certs & { serverHost: string; serverPort: number; servername: string };
      tuneGcForBulkTransfer();
      const a = await startProxyAgent({
        proxyServerHost: c.serverHost,
        proxyServerPort: c.serverPort,
        agentID: 'bench',
        agentIdentifiers: 'default-route=true',
        tls: { certPem: read(c.certFile), keyPem: read(c.keyFile), caPem: read(c.caFile), servername: c.servername },
        backoff: { initialMs: 100, capMs: 1000 },
      });
      await a.waitForServers(1, 30_000);
      say({ ready: true });
      return;
    }
    case 'measure':
      await measure(o as unknown as MeasureSpec);
      process.exit(0);
      return;
    default:
      throw new Error(`unknown role ${role}; roles: targets, server, agent, measure`);
  }
}

// Exit normally on TERM/INT so --cpu-prof and friends write their files.
process.once('SIGTERM', () => process.exit(0));
process.once('SIGINT', () => process.exit(0));

main(process.argv[2] ?? '', process.argv[3] ?? '{}').catch((err: unknown) => {
  process.stderr.write(`tunnel bench role ${process.argv[2]} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
