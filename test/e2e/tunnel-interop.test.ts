import fs from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { writeSecretFile } from '../../src/pki/index.js';
import { createTunnelClient, startProxyAgent, startProxyServer, type ProxyServer } from '../../src/tunnel/index.js';
import { buildUpstreamTunnel, freePort, spawnBinary, upstreamAgentArgs, upstreamServerArgs, type Spawned, type UpstreamTunnel } from '../support/go-interop.js';
import { echo, echoRoundTrip, makeTunnelPKI, peerTLS, serverTLS, startTarget, until, type Target, type TunnelPKI } from '../support/tunnel/fixture.js';

let pki: TunnelPKI;
let bins: UpstreamTunnel;
let dir: string;
const files: Record<string, string> = {};
const cleanups: (() => Promise<void> | void)[] = [];
const later = <T>(thing: T, fn: (t: T) => Promise<void> | void): T => {
  cleanups.push(() => fn(thing));
  return thing;
};

beforeAll(async () => {
  bins = await buildUpstreamTunnel();
  pki = await makeTunnelPKI();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tunnel-interop-'));
  const pem: Record<string, string> = {
    'ca.crt': pki.caPem,
    'server.crt': pki.server.certPem,
    'server.key': pki.server.keyPem,
    'agent.crt': pki.agent.certPem,
    'agent.key': pki.agent.keyPem,
    'client.crt': pki.client.certPem,
    'client.key': pki.client.keyPem,
  };
  for (const [name, text] of Object.entries(pem)) {
    files[name] = path.join(dir, name);
    await writeSecretFile(files[name], text);
  }
}, 1_200_000);
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});
afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

async function upstreamServer(): Promise<{ p: Spawned; serverPort: number; agentPort: number; healthPort: number }> {
  const [serverPort, agentPort, healthPort, adminPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const p = later(
    spawnBinary(
      bins.server,
      upstreamServerArgs({
        serverPort,
        agentPort,
        healthPort,
        adminPort,
        certFile: files['server.crt']!,
        keyFile: files['server.key']!,
        caFile: files['ca.crt']!,
        strategies: 'destHost',
      }),
    ),
    (x) => x.stop(),
  );
  await until(`upstream proxy-server answers /healthz (output: ${p.output().slice(-500)})`, async () => {
    try {
      return (await fetch(`http://127.0.0.1:${healthPort}/healthz`)).ok;
    } catch {
      return false;
    }
  });
  return { p, serverPort, agentPort, healthPort };
}

async function ourServer(): Promise<ProxyServer> {
  const s = await startProxyServer({
    agent: { port: 0, tls: serverTLS(pki) },
    frontend: { port: 0, tls: serverTLS(pki) },
    httpConnect: { port: 0, tls: serverTLS(pki) },
    mode: 'both',
    // destHost only: a dial for an unknown host must fail here, not be tried (and resolved) by some agent.
    strategies: ['destHost'],
  });
  return later(s, (x) => x.close());
}

async function echoTarget(): Promise<Target> {
  return later(await startTarget(echo), (x) => x.close());
}

describe('interop with apiserver-network-proxy v0.36 (Go, built from the module proxy)', () => {
  it('our agent and our client work through the upstream proxy-server', async () => {
    const t = await echoTarget();
    const up = await upstreamServer();
    const a = later(
      await startProxyAgent({
        proxyServerHost: '127.0.0.1',
        proxyServerPort: up.agentPort,
        agentID: 'ours',
        agentIdentifiers: 'host=cluster1',
        tls: { ...peerTLS(pki, pki.agent), servername: 'localhost' },
        hostMappings: { 'cluster1:443': `127.0.0.1:${t.port}` },
        backoff: { initialMs: 100, capMs: 500 },
      }),
      (x) => x.close(),
    );
    await a.waitForServers(1, 15_000);
    expect(a.connectedServerIDs()).toHaveLength(1);
    await until('upstream server is ready', async () => (await fetch(`http://127.0.0.1:${up.healthPort}/readyz`)).ok);
    const c = later(createTunnelClient({ address: `127.0.0.1:${up.serverPort}`, tls: { ...peerTLS(pki, pki.client), servername: 'localhost' } }), (x) =>
      x.close(),
    );
    const socks = await Promise.all(Array.from({ length: 20 }, () => c.dial('cluster1:443')));
    const ok = await Promise.all(socks.map((s, i) => echoRoundTrip(s, 100_000 + i)));
    expect(ok.every(Boolean)).toBe(true);
    const big = await c.dial('cluster1:443');
    expect(await echoRoundTrip(big, 8 * 1024 * 1024)).toBe(true);
    for (const s of [...socks, big]) s.destroy();
    await until('the target sockets are released', () => t.open() === 0);
    await expect(c.dial('cluster9:443')).rejects.toThrow(/No agent available/);
  });

  it('the upstream proxy-agent serves dials from our proxy-server', async () => {
    const t = await echoTarget();
    const s = await ourServer();
    const [healthPort, adminPort] = [await freePort(), await freePort()];
    const ag = later(
      spawnBinary(
        bins.agent,
        upstreamAgentArgs({
          serverPort: s.ports.agent,
          agentID: 'upstream-agent',
          identifiers: 'host=localhost&ipv4=127.0.0.1',
          healthPort,
          adminPort,
          certFile: files['agent.crt']!,
          keyFile: files['agent.key']!,
          caFile: files['ca.crt']!,
        }),
      ),
      (x) => x.stop(),
    );
    await until(`the upstream agent registers (output: ${ag.output().slice(-500)})`, () => s.agents().some((x) => x.agentID === 'upstream-agent'));
    expect(s.agents()[0]!.identifiers.ipv4).toEqual(['127.0.0.1']);
    const c = later(createTunnelClient({ address: `127.0.0.1:${s.ports.frontend}`, tls: { ...peerTLS(pki, pki.client), servername: 'localhost' } }), (x) =>
      x.close(),
    );
    const socks = await Promise.all(Array.from({ length: 20 }, () => c.dial(`127.0.0.1:${t.port}`)));
    const ok = await Promise.all(socks.map((x, i) => echoRoundTrip(x, 50_000 + i)));
    expect(ok.every(Boolean)).toBe(true);
    const big = await c.dial(`127.0.0.1:${t.port}`);
    expect(await echoRoundTrip(big, 8 * 1024 * 1024)).toBe(true);
    for (const x of [...socks, big]) x.destroy();
    await until('the upstream agent closed the target sockets', () => t.open() === 0);
    // SIGTERM: upstream sends DRAIN, our server stops routing to it.
    ag.proc.kill('SIGTERM');
    await until('the upstream agent drained or left', () => s.agents().every((x) => x.draining));
  });

  it('the upstream konnectivity-client (single-use tunnel) works through our proxy-server', async () => {
    const t = await echoTarget();
    const s = await ourServer();
    const a = later(
      await startProxyAgent({
        proxyServerHost: '127.0.0.1',
        proxyServerPort: s.ports.agent,
        agentID: 'cluster1',
        agentIdentifiers: 'host=cluster1',
        tls: peerTLS(pki, pki.agent),
        hostMappings: { 'cluster1:443': `127.0.0.1:${t.port}` },
      }),
      (x) => x.close(),
    );
    await a.waitForServers(1, 10_000);
    const args = [
      '-proxy',
      `127.0.0.1:${s.ports.frontend}`,
      '-ca',
      files['ca.crt']!,
      '-cert',
      files['client.crt']!,
      '-key',
      files['client.key']!,
      '-servername',
      'localhost',
    ];
    const ok = await execa(bins.client, [...args, '-target', 'cluster1:443', '-bytes', String(4 * 1024 * 1024)], { reject: false });
    expect(ok.exitCode, ok.stdout + ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toEqual({ bytes: 4 * 1024 * 1024, match: true });
    const none = await execa(bins.client, [...args, '-target', 'cluster9:443'], { reject: false });
    expect(none.exitCode).toBe(1);
    expect(JSON.parse(none.stdout)).toMatchObject({ stage: 'dial', error: expect.stringContaining('No agent available') });
    await until('the Go client closed its connection cleanly', () => t.open() === 0 && s.metrics.get('established_connections') === 0);
  });

  it('curl reaches an HTTPS target through our HTTP CONNECT frontend with client certificates', async () => {
    const srv = later(
      await new Promise<https.Server>((resolve) => {
        const x = https.createServer({ cert: pki.target.certPem, key: pki.target.keyPem }, (_req, res) => res.end('ok'));
        x.listen(0, '127.0.0.1', () => resolve(x));
      }),
      (x) => {
        x.closeAllConnections();
        x.close();
      },
    );
    const s = await ourServer();
    const a = later(
      await startProxyAgent({
        proxyServerHost: '127.0.0.1',
        proxyServerPort: s.ports.agent,
        agentID: 'cluster1',
        agentIdentifiers: 'host=cluster1',
        tls: peerTLS(pki, pki.agent),
        hostMappings: { 'cluster1:443': `127.0.0.1:${(srv.address() as net.AddressInfo).port}` },
      }),
      (x) => x.close(),
    );
    await a.waitForServers(1, 10_000);
    const curl = (cert: string, key: string): Promise<{ exitCode?: number; stdout: string; stderr: string }> =>
      execa(
        'curl',
        [
          '--silent',
          '--show-error',
          '--max-time',
          '20',
          '--proxy',
          `https://localhost:${s.ports.httpConnect}`,
          '--proxy-cacert',
          files['ca.crt']!,
          '--proxy-cert',
          cert,
          '--proxy-key',
          key,
          '--cacert',
          files['ca.crt']!,
          '--resolve',
          `localhost:${s.ports.httpConnect}:127.0.0.1`,
          'https://cluster1/healthz',
        ],
        { reject: false, env: { NO_PROXY: '', no_proxy: '' } },
      );
    const ok = await curl(files['client.crt']!, files['client.key']!);
    expect(ok.exitCode, ok.stderr).toBe(0);
    expect(ok.stdout).toBe('ok');
    // Without a client certificate the proxy refuses the handshake.
    const anonymous = await execa(
      'curl',
      [
        '--silent',
        '--show-error',
        '--max-time',
        '20',
        '--proxy',
        `https://127.0.0.1:${s.ports.httpConnect}`,
        '--proxy-cacert',
        files['ca.crt']!,
        '--proxy-insecure',
        '--cacert',
        files['ca.crt']!,
        'https://cluster1/healthz',
      ],
      { reject: false },
    );
    expect(anonymous.exitCode).not.toBe(0);
  });
});
