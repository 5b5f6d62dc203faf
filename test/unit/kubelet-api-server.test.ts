/**
 * The kubelet API over real TLS on loopback, with a small SPDY client built on our own
 * session module and a backend that runs commands with /bin/sh on the host.
 */
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import { once } from 'node:events';
import https from 'node:https';
import net from 'node:net';
import { PassThrough, type Writable } from 'node:stream';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startKubeletServer,
  KubeletNotFound,
  type ExecProcess,
  type KubeletBackend,
  type KubeletServer,
  type LogStreamOptions,
} from '../../src/nodelet/kubelet-api/index.js';
import { SpdySession, type SpdyStream } from '../../src/nodelet/kubelet-api/spdy-session.js';
import { createCA, issueCertificate, type KeyPairPem } from '../../src/pki/index.js';

interface Certs {
  ca: KeyPairPem;
  apiserver: KeyPairPem;
  intruder: KeyPairPem;
  admin: KeyPairPem;
  foreign: KeyPairPem;
}

const pods = [
  {
    metadata: { namespace: 'default', name: 'web', uid: 'uid-web' },
    spec: { containers: [{ name: 'app' }, { name: 'sidecar' }] },
    status: { phase: 'Running' },
  },
];

class FakeBackend implements KubeletBackend {
  logCalls: { container: string; opts: LogStreamOptions }[] = [];
  aborted = 0;
  execs: ExecProcess[] = [];
  resizes: [number, number][] = [];

  pods(): unknown[] {
    return pods;
  }

  async streamLogs(_ns: string, _pod: string, container: string, opts: LogStreamOptions, out: Writable, signal: AbortSignal): Promise<void> {
    this.logCalls.push({ container, opts });
    if (container === 'sidecar' && opts.previous) throw new KubeletNotFound('previous terminated container "sidecar" in pod "web" not found');
    const lines = ['line 1', 'line 2', 'line 3'].slice(-(opts.tailLines ?? 3));
    for (const l of lines) out.write(`${opts.timestamps ? '2026-11-23T10:00:00.000000000Z ' : ''}${l}\n`);
    if (!opts.follow) return;
    let n = 4;
    await new Promise<void>((resolve) => {
      const timer = setInterval(() => out.write(`line ${n++}\n`), 20);
      signal.addEventListener('abort', () => {
        clearInterval(timer);
        this.aborted++;
        resolve();
      });
    });
  }

  async exec(_ns: string, _pod: string, container: string, command: string[], opts: { tty: boolean; stdin: boolean }): Promise<ExecProcess> {
    if (container === 'sidecar') throw new Error('container "sidecar" is not running');
    const child = spawn(command[0]!, command.slice(1), { stdio: [opts.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
    const exited = new Promise<{ exitCode: number }>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code, signal) => resolve({ exitCode: code ?? (signal ? 128 + (require_os_signal(signal) ?? 9) : 1) }));
    });
    const proc: ExecProcess = {
      stdin: child.stdin,
      stdout: child.stdout!,
      stderr: opts.tty ? null : child.stderr!,
      exited,
      resize: (cols, rows) => this.resizes.push([cols, rows]),
      kill: () => child.kill('SIGKILL'),
    };
    if (opts.tty) child.stderr!.resume();
    this.execs.push(proc);
    return proc;
  }

  async dialPort(_ns: string, _pod: string, port: number): Promise<net.Socket> {
    return new Promise((resolve, reject) => {
      const s = net.connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.off('error', reject);
        resolve(s);
      });
      s.once('error', reject);
    });
  }
}

function require_os_signal(signal: NodeJS.Signals): number | undefined {
  return ({ SIGKILL: 9, SIGTERM: 15 } as Record<string, number>)[signal];
}

// ---- a small client ----

function httpsGet(port: number, path: string, client: KeyPairPem | undefined, ca: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port, path, method: 'GET', ca, ...(client ? { cert: client.certPem, key: client.keyPem } : {}) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end();
  });
}

interface Upgraded {
  status: number;
  headers: Record<string, string>;
  body: string;
  session?: SpdySession;
  socket: tls.TLSSocket;
}

async function spdyUpgrade(port: number, path: string, protocols: string[], client: KeyPairPem, ca: string): Promise<Upgraded> {
  const socket = tls.connect({ host: '127.0.0.1', port, ca, cert: client.certPem, key: client.keyPem });
  await once(socket, 'secureConnect');
  socket.write(
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n` +
      protocols.map((p) => `X-Stream-Protocol-Version: ${p}\r\n`).join('') +
      'Content-Length: 0\r\n\r\n',
  );
  let buf = Buffer.alloc(0);
  const onData = (c: Buffer): void => {
    buf = Buffer.concat([buf, c]);
  };
  socket.on('data', onData);
  while (!buf.includes('\r\n\r\n')) {
    await Promise.race([once(socket, 'data'), once(socket, 'end')]);
    if (socket.readableEnded && !buf.includes('\r\n\r\n')) throw new Error(`connection closed before response: ${buf.toString()}`);
  }
  socket.off('data', onData);
  const end = buf.indexOf('\r\n\r\n');
  const [statusLine, ...headerLines] = buf.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(statusLine!.split(' ')[1]);
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const i = line.indexOf(':');
    const name = line.slice(0, i).trim().toLowerCase();
    headers[name] = headers[name] ? `${headers[name]}, ${line.slice(i + 1).trim()}` : line.slice(i + 1).trim();
  }
  const rest = buf.subarray(end + 4);
  if (status !== 101) {
    let body = rest.toString();
    if (!socket.readableEnded) {
      socket.on('data', (c: Buffer) => (body += c.toString()));
      await once(socket, 'end').catch(() => {});
    }
    return { status, headers, body, socket };
  }
  const session = new SpdySession(socket, { isServer: false, head: rest });
  return { status, headers, body: '', session, socket };
}

function readAll(stream: SpdyStream): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.once('end', () => resolve(Buffer.concat(chunks)));
    stream.once('close', () => resolve(Buffer.concat(chunks)));
  });
}

function openExecStreams(session: SpdySession, types: string[]): Record<string, SpdyStream> {
  const streams: Record<string, SpdyStream> = {};
  for (const t of types) streams[t] = session.openStream({ streamtype: t });
  return streams;
}

describe('kubelet API server', () => {
  let certs: Certs;
  let backend: FakeBackend;
  let server: KubeletServer;
  let echo: net.Server;
  let echoPort: number;
  let closedPort: number;
  const logs: string[] = [];

  beforeAll(async () => {
    const ca = await createCA('kubelet-api-test-ca');
    const otherCa = await createCA('other-ca');
    certs = {
      ca,
      apiserver: await issueCertificate(ca, { commonName: 'kube-apiserver-kubelet-client', usages: ['client'] }),
      intruder: await issueCertificate(ca, { commonName: 'intruder', organizations: ['system:authenticated'], usages: ['client'] }),
      admin: await issueCertificate(ca, { commonName: 'admin', organizations: ['system:masters'], usages: ['client'] }),
      foreign: await issueCertificate(otherCa, { commonName: 'kube-apiserver-kubelet-client', usages: ['client'] }),
    };
    const serving = await issueCertificate(ca, { commonName: 'node-1', ipAddresses: ['127.0.0.1'], usages: ['server'] });
    backend = new FakeBackend();
    server = await startKubeletServer({
      address: '127.0.0.1',
      port: 0,
      certPem: serving.certPem,
      keyPem: serving.keyPem,
      clientCaPem: ca.certPem,
      backend,
      log: (l) => logs.push(l),
      streamCreationTimeoutMs: 2_000,
    });
    echo = net.createServer((s) => s.pipe(s));
    echo.listen(0, '127.0.0.1');
    await once(echo, 'listening');
    echoPort = (echo.address() as net.AddressInfo).port;
    const probe = net.createServer();
    probe.listen(0, '127.0.0.1');
    await once(probe, 'listening');
    closedPort = (probe.address() as net.AddressInfo).port;
    await new Promise((r) => probe.close(r));
  });

  afterAll(async () => {
    await server?.close();
    await new Promise((r) => echo?.close(r));
  });

  describe('authentication and authorization', () => {
    it('answers 401 without a client certificate or with one from another CA', async () => {
      expect(await httpsGet(server.port, '/healthz', undefined, certs.ca.certPem)).toMatchObject({ status: 401, body: 'Unauthorized\n' });
      expect((await httpsGet(server.port, '/healthz', certs.foreign, certs.ca.certPem)).status).toBe(401);
    });

    it('answers 403 to an identity that is not the API server', async () => {
      const r = await httpsGet(server.port, '/pods', certs.intruder, certs.ca.certPem);
      expect(r.status).toBe(403);
      expect(r.body).toContain('user=intruder');
      const up = await spdyUpgrade(server.port, '/exec/default/web/app?command=true&output=1', ['v4.channel.k8s.io'], certs.intruder, certs.ca.certPem);
      expect(up.status).toBe(403);
    });

    it('serves the API server identity and system:masters', async () => {
      expect(await httpsGet(server.port, '/healthz', certs.apiserver, certs.ca.certPem)).toEqual({ status: 200, body: 'ok' });
      expect((await httpsGet(server.port, '/healthz', certs.admin, certs.ca.certPem)).status).toBe(200);
    });

    it('lists pods as a PodList', async () => {
      const r = await httpsGet(server.port, '/pods', certs.apiserver, certs.ca.certPem);
      expect(JSON.parse(r.body)).toMatchObject({ kind: 'PodList', apiVersion: 'v1', items: [{ metadata: { name: 'web' } }] });
    });
  });

  describe('containerLogs', () => {
    it('returns the log with the options passed to the backend', async () => {
      const r = await httpsGet(server.port, '/containerLogs/default/web/app?tailLines=2&timestamps=true', certs.apiserver, certs.ca.certPem);
      expect(r.status).toBe(200);
      expect(r.body).toBe('2026-11-23T10:00:00.000000000Z line 2\n2026-11-23T10:00:00.000000000Z line 3\n');
      expect(backend.logCalls.at(-1)!.opts).toMatchObject({ tailLines: 2, timestamps: true, follow: false });
    });

    it('streams new lines with follow and stops the backend when the client goes away', async () => {
      const before = backend.aborted;
      const received = await new Promise<string>((resolve, reject) => {
        const req = https.request(
          {
            host: '127.0.0.1',
            port: server.port,
            path: '/containerLogs/default/web/app?follow=true',
            ca: certs.ca.certPem,
            cert: certs.apiserver.certPem,
            key: certs.apiserver.keyPem,
          },
          (res) => {
            expect(res.headers['content-type']).toBe('text/plain');
            let text = '';
            res.on('data', (c: Buffer) => {
              text += c.toString();
              if (text.includes('line 6\n')) {
                req.destroy();
                resolve(text);
              }
            });
          },
        );
        req.on('error', (err) => (err.message.includes('socket hang up') ? undefined : reject(err)));
        req.end();
      });
      expect(received.startsWith('line 1\nline 2\nline 3\nline 4\nline 5\nline 6\n')).toBe(true);
      await expect.poll(() => backend.aborted).toBe(before + 1);
    });

    it('answers 404 for unknown pods, containers and previous instances, 422 for invalid options', async () => {
      expect((await httpsGet(server.port, '/containerLogs/default/nope/app', certs.apiserver, certs.ca.certPem)).status).toBe(404);
      expect((await httpsGet(server.port, '/containerLogs/default/web/nope', certs.apiserver, certs.ca.certPem)).status).toBe(404);
      const prev = await httpsGet(server.port, '/containerLogs/default/web/sidecar?previous=true', certs.apiserver, certs.ca.certPem);
      expect(prev.status).toBe(404);
      expect(prev.body).toContain('previous terminated container');
      expect((await httpsGet(server.port, '/containerLogs/default/web/app?tailLines=-3', certs.apiserver, certs.ca.certPem)).status).toBe(422);
    });
  });

  describe('exec', () => {
    const url = (cmd: string, flags: string): string =>
      `/exec/default/web/app?${['sh', '-c', cmd].map((c) => `command=${encodeURIComponent(c)}`).join('&')}&${flags}`;

    it('negotiates the version, runs the command and reports a non-zero exit code (v4)', async () => {
      const up = await spdyUpgrade(
        server.port,
        url('echo out; echo err >&2; exit 3', 'output=1&error=1'),
        ['v5.channel.k8s.io', 'v4.channel.k8s.io', 'v3.channel.k8s.io'],
        certs.apiserver,
        certs.ca.certPem,
      );
      expect(up.status).toBe(101);
      expect(up.headers['upgrade']).toBe('SPDY/3.1');
      expect(up.headers['x-stream-protocol-version']).toBe('v4.channel.k8s.io');
      const s = openExecStreams(up.session!, ['error', 'stdout', 'stderr']);
      const goaway = once(up.session!, 'goaway');
      const [status, out, err] = await Promise.all([readAll(s.error!), readAll(s.stdout!), readAll(s.stderr!)]);
      expect(out.toString()).toBe('out\n');
      expect(err.toString()).toBe('err\n');
      const parsed = JSON.parse(status.toString());
      expect(parsed).toMatchObject({ metadata: {}, status: 'Failure', reason: 'NonZeroExitCode', details: { causes: [{ reason: 'ExitCode', message: '3' }] } });
      expect(parsed.message).toMatch(/^command terminated with non-zero exit code: /);
      await goaway; // the server ends the connection after the status, as the kubelet does
      await once(up.socket, 'close');
    });

    it('reports success and copies stdin until the client closes it', async () => {
      const up = await spdyUpgrade(server.port, url('cat; echo done', 'input=1&output=1'), ['v4.channel.k8s.io'], certs.apiserver, certs.ca.certPem);
      const s = openExecStreams(up.session!, ['error', 'stdin', 'stdout']);
      const outP = readAll(s.stdout!);
      const statusP = readAll(s.error!);
      s.stdin!.write('hello ');
      s.stdin!.end('world\n');
      expect((await outP).toString()).toBe('hello world\ndone\n');
      expect((await statusP).toString()).toBe('{"metadata":{},"status":"Success"}');
    });

    it('speaks v2 with plain-text errors', async () => {
      const up = await spdyUpgrade(server.port, url('exit 2', 'output=1'), ['v2.channel.k8s.io'], certs.apiserver, certs.ca.certPem);
      expect(up.headers['x-stream-protocol-version']).toBe('v2.channel.k8s.io');
      const s = openExecStreams(up.session!, ['error', 'stdout']);
      const [status] = await Promise.all([readAll(s.error!), readAll(s.stdout!)]);
      expect(status.toString()).toMatch(/^command terminated with non-zero exit code: .*2$/);
    });

    it('passes terminal resizes to the process with a tty', async () => {
      const up = await spdyUpgrade(server.port, url('read x; echo got $x', 'input=1&output=1&tty=1'), ['v4.channel.k8s.io'], certs.apiserver, certs.ca.certPem);
      const s = openExecStreams(up.session!, ['error', 'stdin', 'stdout', 'resize']);
      s.resize!.write('{"Width":120,"Height":40}\n');
      const outP = readAll(s.stdout!);
      await expect.poll(() => backend.resizes.length).toBeGreaterThan(0);
      s.stdin!.end('x\n');
      expect((await outP).toString()).toBe('got x\n');
      expect(backend.resizes.at(-1)).toEqual([120, 40]);
    });

    it('reports a backend failure on the error stream', async () => {
      const up = await spdyUpgrade(server.port, '/exec/default/web/sidecar?command=ls&output=1', ['v4.channel.k8s.io'], certs.apiserver, certs.ca.certPem);
      const s = openExecStreams(up.session!, ['error', 'stdout']);
      const status = JSON.parse((await readAll(s.error!)).toString());
      expect(status).toMatchObject({ status: 'Failure', reason: 'InternalError', code: 500 });
      expect(status.message).toContain('container "sidecar" is not running');
    });

    it('refuses unknown pods, missing protocols and plain requests before upgrading', async () => {
      expect(
        (await spdyUpgrade(server.port, '/exec/default/nope/app?command=ls&output=1', ['v4.channel.k8s.io'], certs.apiserver, certs.ca.certPem)).status,
      ).toBe(404);
      const mismatch = await spdyUpgrade(server.port, url('true', 'output=1'), ['v9.channel.k8s.io'], certs.apiserver, certs.ca.certPem);
      expect(mismatch.status).toBe(403);
      expect(mismatch.headers['x-accepted-stream-protocol-versions']).toContain('v4.channel.k8s.io');
      expect((await httpsGet(server.port, url('true', 'output=1'), certs.apiserver, certs.ca.certPem)).status).toBe(400);
      expect((await spdyUpgrade(server.port, '/attach/default/web/app?output=1', ['v4.channel.k8s.io'], certs.apiserver, certs.ca.certPem)).status).toBe(400);
    });

    it('kills the command when the client disconnects', async () => {
      const before = backend.execs.length;
      const up = await spdyUpgrade(server.port, url('sleep 30', 'output=1'), ['v4.channel.k8s.io'], certs.apiserver, certs.ca.certPem);
      openExecStreams(up.session!, ['error', 'stdout']);
      await expect.poll(() => backend.execs.length).toBe(before + 1);
      up.socket.destroy();
      const { exitCode } = await backend.execs.at(-1)!.exited;
      expect(exitCode).toBe(137);
    });

    it('moves 5 MB through stdin and stdout without stalling', async () => {
      const up = await spdyUpgrade(server.port, url('cat', 'input=1&output=1'), ['v4.channel.k8s.io'], certs.apiserver, certs.ca.certPem);
      const s = openExecStreams(up.session!, ['error', 'stdin', 'stdout']);
      const payload = crypto.randomBytes(5 * 1024 * 1024);
      const outP = readAll(s.stdout!);
      s.stdin!.end(payload);
      const out = await outP;
      expect(out.length).toBe(payload.length);
      expect(out.equals(payload)).toBe(true);
      expect((await readAll(s.error!)).toString()).toContain('Success');
    });
  });

  describe('port-forward', () => {
    async function connect(): Promise<Upgraded> {
      const up = await spdyUpgrade(server.port, '/portForward/default/web', ['portforward.k8s.io'], certs.apiserver, certs.ca.certPem);
      expect(up.status).toBe(101);
      expect(up.headers['x-stream-protocol-version']).toBe('portforward.k8s.io');
      return up;
    }

    function openPair(session: SpdySession, port: number, requestId: number): { error: SpdyStream; data: SpdyStream; errorText: Promise<Buffer> } {
      const error = session.openStream({ streamtype: 'error', port: String(port), requestid: String(requestId) });
      error.end(); // as kubectl does: it never writes on the error stream
      const errorText = readAll(error);
      const data = session.openStream({ streamtype: 'data', port: String(port), requestid: String(requestId) });
      return { error, data, errorText };
    }

    it('forwards several connections over one SPDY connection', async () => {
      const up = await connect();
      const pairs = [0, 1, 2].map((i) => openPair(up.session!, echoPort, i));
      const replies = pairs.map((p) => readAll(p.data));
      pairs.forEach((p, i) => p.data.end(`hello ${i}`));
      expect((await Promise.all(replies)).map((b) => b.toString())).toEqual(['hello 0', 'hello 1', 'hello 2']);
      expect((await Promise.all(pairs.map((p) => p.errorText))).map((b) => b.toString())).toEqual(['', '', '']);
      up.session!.close();
    });

    it('reports a port nobody listens on as text on the error stream', async () => {
      const up = await connect();
      const pair = openPair(up.session!, closedPort, 7);
      const text = (await pair.errorText).toString();
      expect(text).toMatch(new RegExp(`^error forwarding port ${closedPort} to pod web, uid uid-web: .*ECONNREFUSED`));
      up.session!.close();
    });

    it('moves 5 MB each way at the same time without stalling', async () => {
      const up = await connect();
      const pair = openPair(up.session!, echoPort, 0);
      const payload = crypto.randomBytes(5 * 1024 * 1024);
      const back = readAll(pair.data);
      // Write in pieces, honouring backpressure, while the echo streams it back.
      const src = new PassThrough();
      src.pipe(pair.data);
      for (let off = 0; off < payload.length; off += 256 * 1024) {
        if (!src.write(payload.subarray(off, off + 256 * 1024))) await once(src, 'drain');
      }
      src.end();
      const received = await back;
      expect(received.length).toBe(payload.length);
      expect(crypto.createHash('sha256').update(received).digest('hex')).toBe(crypto.createHash('sha256').update(payload).digest('hex'));
      up.session!.close();
    });

    it('answers PING and closes the connection after the client says GOAWAY', async () => {
      const up = await connect();
      expect(await up.session!.ping()).toBeGreaterThanOrEqual(0);
      const closed = once(up.socket, 'close');
      up.session!.goAway(); // only GOAWAY: the server, with no streams left, ends the connection itself
      await closed;
      expect(up.session!.closed).toBe(true);
    });

    it('resets streams without the required headers', async () => {
      const up = await connect();
      const bad = up.session!.openStream({ streamtype: 'data' });
      await once(bad, 'close');
      expect(bad.resetByPeer).toBe(true);
      up.session!.close();
    });
  });
});
