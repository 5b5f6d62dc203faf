import tls from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxyServer, type ProxyServer } from '../../src/tunnel/index.js';
import { PacketType } from '../../src/tunnel/packet.js';
import { makeTunnelPKI, serverTLS, type Pair, type TunnelPKI } from '../support/tunnel/fixture.js';
import { Counts, openConnectStream, openProxyStream } from '../support/tunnel/hostile.js';

// Every TLS port of the proxy-server requires a client certificate of its own
// CA: one from another CA, or none, gets no further than the handshake. Each
// refusal is paired with the same request made with a good certificate, so the
// check fails if the port stopped answering altogether.

let pki: TunnelPKI;
let server: ProxyServer;
const counts = new Counts();

beforeAll(async () => {
  pki = await makeTunnelPKI();
  server = await startProxyServer({
    agent: { port: 0, tls: serverTLS(pki) },
    frontend: { port: 0, tls: serverTLS(pki) },
    httpConnect: { port: 0, tls: serverTLS(pki) },
    health: { port: 0 },
    admin: { port: 0 },
    mode: 'both',
    strategies: ['destHost'],
  });
});

afterAll(async () => {
  console.log(counts.render('tunnel TLS checks'));
  await server?.close();
});

type Who = 'our CA' | 'another CA' | 'no certificate';

function grpcClient(port: number, who: Who, pair: Pair): grpc.Client {
  const ca = Buffer.from(pki.caPem);
  const creds = who === 'no certificate' ? grpc.credentials.createSsl(ca) : grpc.credentials.createSsl(ca, Buffer.from(pair.keyPem), Buffer.from(pair.certPem));
  return new grpc.Client(`127.0.0.1:${port}`, creds, { 'grpc.ssl_target_name_override': 'localhost', 'grpc.default_authority': 'localhost' });
}

/** What the frontend answers a DIAL_REQ with, or the status the stream failed with. */
async function frontendOutcome(who: Who): Promise<string> {
  const c = grpcClient(server.ports.frontend!, who, who === 'another CA' ? pki.foreignClient : pki.client);
  try {
    const s = openProxyStream(c);
    s.send({ type: PacketType.DIAL_REQ, protocol: 'tcp', address: 'cluster1:443', random: 1n });
    const first = await Promise.race([
      s.next('DIAL_RSP', (p) => p.type === PacketType.DIAL_RSP).then((p) => (p.type === PacketType.DIAL_RSP ? `DIAL_RSP ${p.error}` : '')),
      s.closed.then((st) => `status ${grpc.status[st.code]}`),
    ]);
    return first;
  } finally {
    c.close();
  }
}

/** Whether the agent port answers an agent with its headers (serverID), or the status it failed with. */
async function agentOutcome(who: Who): Promise<string> {
  const c = grpcClient(server.ports.agent, who, who === 'another CA' ? pki.foreignAgent : pki.agent);
  try {
    const s = openConnectStream(c, 'tls-check', 'host=tls-check');
    return await Promise.race([s.headers.then((md) => `serverID ${String(md.get('serverid')[0])}`), s.closed.then((st) => `status ${grpc.status[st.code]}`)]);
  } finally {
    c.close();
  }
}

/** The first line the HTTP CONNECT port answers, or how the connection ended without one. */
function httpConnectOutcome(who: Who): Promise<string> {
  const pair = who === 'another CA' ? pki.foreignClient : pki.client;
  return new Promise((resolve) => {
    const sock = tls.connect({
      host: '127.0.0.1',
      port: server.ports.httpConnect!,
      servername: 'localhost',
      ca: pki.caPem,
      ...(who === 'no certificate' ? {} : { cert: pair.certPem, key: pair.keyPem }),
    });
    let buf = '';
    sock.once('secureConnect', () => sock.write('CONNECT cluster1:443 HTTP/1.1\r\nHost: cluster1:443\r\n\r\n'));
    sock.on('data', (d: Buffer) => {
      buf += d.toString('latin1');
      if (buf.includes('\r\n')) {
        sock.destroy();
        resolve(buf.split('\r\n')[0]!);
      }
    });
    sock.on('error', (err: NodeJS.ErrnoException) => resolve(`error ${err.code ?? err.message}`));
    sock.on('close', () => resolve(buf ? buf : 'closed without an answer'));
  });
}

describe('TLS on every port of the proxy-server that serves it', () => {
  it('frontend (gRPC): only a certificate of our CA gets a DIAL_RSP', async () => {
    expect(await frontendOutcome('our CA')).toBe('DIAL_RSP No agent available');
    for (const who of ['another CA', 'no certificate'] as const) {
      expect(await frontendOutcome(who), who).toBe('status UNAVAILABLE');
      counts.add(`frontend: client with ${who}`);
    }
  });

  it('agent port (gRPC): only a certificate of our CA is registered as an agent', async () => {
    expect(await agentOutcome('our CA')).toBe(`serverID ${server.serverID}`);
    for (const who of ['another CA', 'no certificate'] as const) {
      expect(await agentOutcome(who), who).toBe('status UNAVAILABLE');
      counts.add(`agent port: agent with ${who}`);
    }
    expect(
      server
        .agents()
        .map((a) => a.agentID)
        .filter((id) => id === 'tls-check').length,
    ).toBeLessThanOrEqual(1);
  });

  it('HTTP CONNECT frontend: only a certificate of our CA gets an HTTP answer', async () => {
    expect(await httpConnectOutcome('our CA')).toMatch(/^HTTP\/1\.1 503 /);
    for (const who of ['another CA', 'no certificate'] as const) {
      const outcome = await httpConnectOutcome(who);
      expect(outcome, who).not.toMatch(/^HTTP/);
      expect(outcome, who).toMatch(/^(error |closed without an answer)/);
      counts.add(`HTTP CONNECT: client with ${who}`);
    }
  });

  it('health and admin ports are plain HTTP with nothing but health and metrics (no TLS to check)', async () => {
    for (const port of [server.ports.health!, server.ports.admin!]) {
      const res = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect(await res.text()).toBe('ok');
      expect((await fetch(`http://127.0.0.1:${port}/anything-else`)).status).toBe(404);
    }
  });
});
