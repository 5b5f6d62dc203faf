import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createCA, issueCertificate } from '../../src/pki/index.js';
import { spawn } from 'node:child_process';
import {
  execProbe,
  execThroughProcess,
  grpcProbe,
  httpGetProbe,
  resolveContainerPort,
  tcpSocketProbe,
  type ProbeContext,
  type ProbeOutcome,
} from '../../src/nodelet/probe-actions.js';
import { ContainerProbes, hasProbes, probeUserAgent, readyWhenRunning, type ContainerProbesOptions } from '../../src/nodelet/probes.js';
import type { Container, Probe } from '../../src/nodelet/types.js';

const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const close of closers.splice(0)) await close();
});

async function listen(server: net.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        (server as http.Server).closeAllConnections?.();
        server.close(() => resolve());
      }),
  );
  return (server.address() as AddressInfo).port;
}

/** A port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

const container: Container = {
  name: 'main',
  ports: [{ name: 'http', containerPort: 0 }],
  env: [
    { name: 'FILE', value: '/tmp/healthy' },
    { name: 'SECRET', valueFrom: { secretKeyRef: { key: 'k' } } },
  ],
};
const ctx = (over: Partial<ProbeContext> = {}): ProbeContext => ({ podIP: '127.0.0.1', container, timeoutMs: 1000, userAgent: 'kube-probe/1.34', ...over });

describe('httpGet probes', () => {
  let port: number;
  let seen: http.IncomingHttpHeaders[] = [];
  let otherPort: number;
  beforeAll(async () => {
    const server = http.createServer((req, res) => {
      seen.push(req.headers);
      const url = new URL(req.url ?? '/', 'http://x');
      switch (url.pathname) {
        case '/ok':
          return res.end('fine');
        case '/fail':
          res.statusCode = 500;
          return res.end('broken');
        case '/redirect-same':
          res.writeHead(302, { location: '/ok' });
          return res.end();
        case '/redirect-other':
          res.writeHead(301, { location: `http://localhost:${otherPort}/ok` });
          return res.end('moved away');
        case '/loop':
          res.writeHead(307, { location: '/loop' });
          return res.end();
        case '/slow':
          return; // never answers
        case '/big':
          return res.end('x'.repeat(1024 * 1024));
        default:
          res.statusCode = 404;
          return res.end();
      }
    });
    port = await listen(server);
    otherPort = port;
  });
  afterEach(() => {
    seen = [];
  });

  it('succeeds for 2xx, fails with the status code otherwise, sends the kubelet headers', async () => {
    await expect(httpGetProbe({ port, path: '/ok' }, ctx())).resolves.toEqual({ result: 'success', output: 'fine' });
    expect(seen[0]).toMatchObject({ 'user-agent': 'kube-probe/1.34', accept: '*/*', host: `127.0.0.1:${port}` });
    await expect(httpGetProbe({ port, path: '/fail' }, ctx())).resolves.toEqual({ result: 'failure', output: 'HTTP probe failed with statuscode: 500' });
  });

  it('uses httpHeaders (Host, Accept, repeated names), a named port, a path without a slash', async () => {
    const c: Container = { ...container, ports: [{ name: 'web', containerPort: port }] };
    const action = {
      port: 'web',
      path: 'ok',
      httpHeaders: [
        { name: 'Host', value: 'probe.example' },
        { name: 'X-Probe', value: 'a' },
        { name: 'x-probe', value: 'b' },
        { name: 'Accept', value: '' },
      ],
    };
    const r = await httpGetProbe(action, ctx({ container: c }));
    expect(r).toEqual({ result: 'success', output: 'fine' });
    expect(seen[0]).toMatchObject({ host: 'probe.example', 'x-probe': 'a, b' });
    expect(seen[0]?.accept).toBeUndefined();
  });

  it('follows redirects to the same host only; a redirect elsewhere is a warning; more than 10 fail', async () => {
    await expect(httpGetProbe({ port, path: '/redirect-same' }, ctx())).resolves.toEqual({ result: 'success', output: 'fine' });
    await expect(httpGetProbe({ port, path: '/redirect-other' }, ctx())).resolves.toEqual({
      result: 'warning',
      output: 'Probe terminated redirects, Response body: moved away',
    });
    await expect(httpGetProbe({ port, path: '/loop' }, ctx())).resolves.toEqual({
      result: 'failure',
      output: `Get "http://127.0.0.1:${port}/loop": stopped after 10 redirects`,
    });
  });

  it('reports a timeout, a refused connection and a port the container does not have like the kubelet', async () => {
    await expect(httpGetProbe({ port, path: '/slow' }, ctx({ timeoutMs: 100 }))).resolves.toEqual({
      result: 'failure',
      output: `Get "http://127.0.0.1:${port}/slow": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`,
    });
    const closed = await closedPort();
    await expect(httpGetProbe({ port: closed, path: '/healthz' }, ctx())).resolves.toEqual({
      result: 'failure',
      output: `Get "http://127.0.0.1:${closed}/healthz": dial tcp 127.0.0.1:${closed}: connect: connection refused`,
    });
    const unknown = await httpGetProbe({ port: 'metrics' }, ctx());
    expect(unknown).toMatchObject({ result: 'unknown' });
    expect((unknown as { error: Error }).error.message).toBe('port metrics not found in the ports of container main');
  });

  it('reads at most 10 KiB of a body', async () => {
    const r = await httpGetProbe({ port, path: '/big' }, ctx());
    expect(r.result).toBe('success');
    expect(r.output.length).toBe(10 * 1024);
  });

  it('speaks HTTPS without checking the certificate', async () => {
    const ca = await createCA('probe test CA');
    const leaf = await issueCertificate(ca, { commonName: 'pod', ipAddresses: ['10.9.9.9'], usages: ['server'] });
    const server = https.createServer({ cert: leaf.certPem, key: leaf.keyPem }, (_req, res) => res.end('secure'));
    const tlsPort = await listen(server);
    await expect(httpGetProbe({ port: tlsPort, path: '/', scheme: 'HTTPS' }, ctx())).resolves.toEqual({ result: 'success', output: 'secure' });
  });
});

describe('tcpSocket probes', () => {
  it('succeeds when a connection opens, fails as Go dial errors read', async () => {
    const port = await listen(net.createServer((s) => s.destroy()));
    await expect(tcpSocketProbe('127.0.0.1', port, 1000)).resolves.toEqual({ result: 'success', output: '' });
    const closed = await closedPort();
    await expect(tcpSocketProbe('127.0.0.1', closed, 1000)).resolves.toEqual({
      result: 'failure',
      output: `dial tcp 127.0.0.1:${closed}: connect: connection refused`,
    });
  });

  it('resolves named ports and numbers written as strings', () => {
    const c: Container = { name: 'c', ports: [{ name: 'grpc', containerPort: 9090 }] };
    expect(resolveContainerPort('grpc', c)).toBe(9090);
    expect(resolveContainerPort('8080', c)).toBe(8080);
    expect(() => resolveContainerPort(70000, c)).toThrow('invalid port number: 70000');
  });
});

describe('exec probes', () => {
  it('runs the command through the injected function: exit 0 passes, other codes fail with the output', async () => {
    const calls: { command: string[]; timeoutMs: number }[] = [];
    const exec = async (command: string[], timeoutMs: number) => {
      calls.push({ command, timeoutMs });
      return command[1] === 'ok' ? { exitCode: 0, output: 'fine\n' } : { exitCode: 1, output: 'cat: /tmp/healthy: No such file or directory\n' };
    };
    await expect(execProbe(['check', 'ok'], ctx({ exec, timeoutMs: 2000 }))).resolves.toEqual({ result: 'success', output: 'fine\n' });
    await expect(execProbe(['cat', '$(FILE)', '$(SECRET)'], ctx({ exec }))).resolves.toEqual({
      result: 'failure',
      output: 'cat: /tmp/healthy: No such file or directory\n',
    });
    expect(calls).toEqual([
      { command: ['check', 'ok'], timeoutMs: 2000 },
      { command: ['cat', '/tmp/healthy', '$(SECRET)'], timeoutMs: 1000 },
    ]);
  });

  it('a command that does not finish in time fails; an exec function that breaks errors', async () => {
    const never = () => new Promise<never>(() => undefined);
    await expect(execProbe(['sleep', '9'], ctx({ exec: never, timeoutMs: 50 }))).resolves.toEqual({ result: 'failure', output: 'command "sleep 9" timed out' });
    const timedOut = () => Promise.reject(Object.assign(new Error('deadline'), { timedOut: true }));
    await expect(execProbe(['sleep', '9'], ctx({ exec: timedOut }))).resolves.toEqual({ result: 'failure', output: 'command "sleep 9" timed out' });
    const broken = () => Promise.reject(new Error('runc exec: container not running'));
    await expect(execProbe(['true'], ctx({ exec: broken }))).resolves.toMatchObject({
      result: 'unknown',
      error: { message: 'runc exec: container not running' },
    });
    await expect(execProbe(['true'], ctx())).resolves.toMatchObject({ result: 'unknown' });
  });
});

describe('execThroughProcess', () => {
  // Stand-in for runc exec: the same command run directly.
  const local = execThroughProcess((argv) => {
    const child = spawn(argv[0] as string, argv.slice(1), { stdio: ['pipe', 'pipe', 'pipe'] });
    return {
      stdin: child.stdin,
      stdout: child.stdout,
      stderr: child.stderr,
      exited: new Promise((resolve) => child.once('exit', (code, signal) => resolve({ exitCode: code ?? (signal === 'SIGKILL' ? 137 : 128) }))),
      kill: () => child.kill('SIGKILL'),
    };
  });

  it('collects stdout and stderr, gives the exit status, kills a command that runs too long', async () => {
    await expect(local(['sh', '-c', 'echo out; echo err >&2; exit 3'], 2000)).resolves.toEqual({ exitCode: 3, output: 'out\nerr\n' });
    await expect(execProbe(['sh', '-c', 'exit 0'], ctx({ exec: local }))).resolves.toEqual({ result: 'success', output: '' });
    await expect(execProbe(['sleep', '5'], ctx({ exec: local, timeoutMs: 100 }))).resolves.toEqual({
      result: 'failure',
      output: 'command "sleep 5" timed out',
    });
  });
});

describe('grpc probes', () => {
  function healthServer(status: number | 'unimplemented'): Promise<number> {
    const server = new grpc.Server();
    if (status !== 'unimplemented') {
      server.addService(
        {
          Check: {
            path: '/grpc.health.v1.Health/Check',
            requestStream: false,
            responseStream: false,
            requestSerialize: (b: Buffer) => b,
            requestDeserialize: (b: Buffer) => b,
            responseSerialize: (s: number) => Buffer.from([0x08, s]),
            responseDeserialize: (b: Buffer) => b,
          },
        },
        { Check: (_call: unknown, cb: (err: null, value: number) => void) => cb(null, status) },
      );
    }
    return new Promise((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => {
        if (err) return reject(err);
        closers.push(() => new Promise((r) => server.tryShutdown(() => r())));
        resolve(port);
      }),
    );
  }

  it('passes for SERVING, fails for other states, explains a server without the health service', async () => {
    await expect(grpcProbe('127.0.0.1', await healthServer(1), '', ctx())).resolves.toEqual({ result: 'success', output: 'service healthy' });
    await expect(grpcProbe('127.0.0.1', await healthServer(2), 'svc', ctx())).resolves.toEqual({
      result: 'failure',
      output: 'service unhealthy (responded with "NOT_SERVING")',
    });
    const r = await grpcProbe('127.0.0.1', await healthServer('unimplemented'), '', ctx());
    expect(r.result).toBe('failure');
    expect(r.output).toMatch(/^this server does not implement the grpc health protocol \(grpc\.health\.v1\.Health\)/);
    const closed = await closedPort();
    const down = await grpcProbe('127.0.0.1', closed, '', ctx({ timeoutMs: 200 }));
    expect(down.output).toMatch(new RegExp(`^timeout: failed to connect service "127\\.0\\.0\\.1:${closed}" within 200ms`));
  });
});

describe('ContainerProbes', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  /** Probes driven by fake timers; each probe kind answers from its own script (last answer repeats). */
  function harness(c: Container, scripts: Partial<Record<'readiness' | 'liveness' | 'startup', ProbeOutcome[]>>, extra: Partial<ContainerProbesOptions> = {}) {
    vi.useFakeTimers({ now: 0 });
    const log: string[] = [];
    const calls: { kind: string; at: number; timeoutMs: number }[] = [];
    const kindOf = (p: Probe) => (p === c.readinessProbe ? 'readiness' : p === c.livenessProbe ? 'liveness' : 'startup');
    const probes = new ContainerProbes({
      container: c,
      runProbe: async (p, pctx) => {
        const kind = kindOf(p);
        calls.push({ kind, at: Date.now(), timeoutMs: pctx.timeoutMs });
        const script = scripts[kind] ?? [];
        return (script.length > 1 ? script.shift() : script[0]) ?? { result: 'success', output: '' };
      },
      onReadyChange: (ready) => log.push(`ready=${ready}`),
      onLivenessFailure: (message, kill) => log.push(`kill: ${message} (${kill.probe}, grace ${kill.gracePeriodSeconds})`),
      onStartupComplete: () => log.push('started'),
      event: (type, reason, message) => log.push(`${type} ${reason}: ${message}`),
      ...extra,
    });
    return { probes, log, calls };
  }
  const ok: ProbeOutcome = { result: 'success', output: '' };
  const fail500: ProbeOutcome = { result: 'failure', output: 'HTTP probe failed with statuscode: 500' };

  it('without probes: started and ready as soon as it runs', () => {
    const c: Container = { name: 'plain' };
    expect(readyWhenRunning(c)).toBe(true);
    expect(probeUserAgent('v1.34.4')).toBe('kube-probe/1.34');
    expect(hasProbes(c)).toBe(false);
    const { probes, log } = harness(c, {});
    probes.start('10.0.0.5');
    expect(log).toEqual(['started', 'ready=true']);
    expect(probes.ready && probes.started).toBe(true);
    probes.stop();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('readiness: waits initialDelaySeconds, then ticks every periodSeconds; thresholds decide the state', async () => {
    const c: Container = {
      name: 'main',
      readinessProbe: { httpGet: { port: 80 }, initialDelaySeconds: 5, periodSeconds: 10, timeoutSeconds: 2, successThreshold: 2, failureThreshold: 2 },
    };
    const { probes, log, calls } = harness(c, { readiness: [ok, ok, fail500, ok, fail500, fail500, ok] });
    probes.start('10.0.0.5');
    expect(log).toEqual(['started']);
    await vi.advanceTimersByTimeAsync(4_999);
    expect(calls).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toEqual([{ kind: 'readiness', at: 5_000, timeoutMs: 2_000 }]);
    expect(probes.ready).toBe(false); // one success of two
    await vi.advanceTimersByTimeAsync(10_000);
    expect(log.slice(1)).toEqual(['ready=true']);
    await vi.advanceTimersByTimeAsync(30_000); // fail, ok, fail: never two failures in a row
    expect(probes.ready).toBe(true);
    await vi.advanceTimersByTimeAsync(10_000); // second failure in a row
    expect(probes.ready).toBe(false);
    expect(log.slice(1)).toEqual([
      'ready=true',
      'Warning Unhealthy: Readiness probe failed: HTTP probe failed with statuscode: 500',
      'Warning Unhealthy: Readiness probe failed: HTTP probe failed with statuscode: 500',
      'Warning Unhealthy: Readiness probe failed: HTTP probe failed with statuscode: 500',
      'ready=false',
    ]);
    expect(calls.map((x) => x.at)).toEqual([5_000, 15_000, 25_000, 35_000, 45_000, 55_000]);
    probes.stop();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('liveness: defaults (period 10, threshold 3); at the threshold it asks for a kill once and stops probing', async () => {
    const refused: ProbeOutcome = { result: 'failure', output: 'dial tcp 10.0.0.5:8080: connect: connection refused' };
    const c: Container = { name: 'main', livenessProbe: { tcpSocket: { port: 8080 }, terminationGracePeriodSeconds: 7 } };
    const { probes, log, calls } = harness(c, { liveness: [ok, refused] }, { podTerminationGracePeriodSeconds: 30 });
    probes.start('10.0.0.5');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(calls.map((x) => x.at)).toEqual([0, 10_000, 20_000, 30_000]);
    expect(calls[0]?.timeoutMs).toBe(1_000);
    expect(log).toEqual([
      'started',
      'ready=true',
      'Warning Unhealthy: Liveness probe failed: dial tcp 10.0.0.5:8080: connect: connection refused',
      'Warning Unhealthy: Liveness probe failed: dial tcp 10.0.0.5:8080: connect: connection refused',
      'Warning Unhealthy: Liveness probe failed: dial tcp 10.0.0.5:8080: connect: connection refused',
      'ready=false',
      'kill: Container main failed liveness probe, will be restarted (liveness, grace 7)',
    ]);
    // The restarted container gets a fresh start: counting begins again.
    probes.start('10.0.0.5');
    await vi.advanceTimersByTimeAsync(0);
    expect(calls.length).toBe(5);
    probes.stop();
  });

  it('startup probe gates liveness and readiness; readiness runs as soon as it passes', async () => {
    const c: Container = {
      name: 'slow',
      startupProbe: { exec: { command: ['true'] }, periodSeconds: 2, failureThreshold: 30 },
      livenessProbe: { httpGet: { port: 80 }, periodSeconds: 10 },
      readinessProbe: { httpGet: { port: 80 }, periodSeconds: 10 },
    };
    const notYet: ProbeOutcome = { result: 'failure', output: 'not yet' };
    const { probes, log, calls } = harness(c, { startup: [notYet, notYet, ok] });
    probes.start('10.0.0.5');
    expect(probes.started).toBe(false);
    await vi.advanceTimersByTimeAsync(3_000);
    expect(calls.map((x) => x.kind)).toEqual(['startup', 'startup']);
    await vi.advanceTimersByTimeAsync(1_000); // t=4: startup passes, readiness at once (a 0 ms timer: 1 ms)
    await vi.advanceTimersByTimeAsync(1);
    expect(calls.map((x) => `${x.kind}@${x.at}`)).toEqual(['startup@0', 'startup@2000', 'startup@4000', 'readiness@4001']);
    expect(log).toEqual(['Warning Unhealthy: Startup probe failed: not yet', 'Warning Unhealthy: Startup probe failed: not yet', 'started', 'ready=true']);
    await vi.advanceTimersByTimeAsync(10_000);
    // Startup stopped; liveness runs on its own ticks (10 s from the start), readiness every 10 s from its trigger.
    expect(calls.slice(4).map((x) => `${x.kind}@${x.at}`)).toEqual(['liveness@10000', 'readiness@14001']);
    probes.stop();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a startup probe that never passes asks for a kill; with restartPolicy Never the message says no restart', async () => {
    const c: Container = { name: 'job', startupProbe: { tcpSocket: { port: 1 }, periodSeconds: 1, failureThreshold: 2 } };
    const { probes, log } = harness(c, { startup: [{ result: 'failure', output: 'nope' }] }, { restartPolicy: 'Never' });
    probes.start('10.0.0.5');
    await vi.advanceTimersByTimeAsync(5_000);
    expect(log).toEqual([
      'Warning Unhealthy: Startup probe failed: nope',
      'Warning Unhealthy: Startup probe failed: nope',
      'kill: Container job failed startup probe (startup, grace undefined)',
    ]);
    probes.stop();
  });

  it('a probe that errors is tried 3 times, reported, and not counted; a warning counts as success', async () => {
    const c: Container = { name: 'main', readinessProbe: { httpGet: { port: 'nope' }, failureThreshold: 1 } };
    const errored: ProbeOutcome = { result: 'unknown', output: '', error: new Error('port nope not found in the ports of container main') };
    const warn: ProbeOutcome = { result: 'warning', output: 'Probe terminated redirects, Response body: ' };
    const { probes, log, calls } = harness(c, { readiness: [errored, errored, errored, warn] });
    probes.start('10.0.0.5');
    await vi.advanceTimersByTimeAsync(0);
    expect(calls.length).toBe(3);
    expect(log).toEqual([
      'started',
      'Warning Unhealthy: Readiness probe errored and resulted in unknown state: port nope not found in the ports of container main',
    ]);
    expect(probes.ready).toBe(false);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(log.slice(2)).toEqual(['Warning ProbeWarning: Readiness probe warning: Probe terminated redirects, Response body: ', 'ready=true']);
    probes.stop();
  });

  it('stop() ends probing: no callback afterwards, no timer left, even with a probe in flight', async () => {
    vi.useFakeTimers({ now: 0 });
    let release: (o: ProbeOutcome) => void = () => undefined;
    const log: string[] = [];
    const c: Container = { name: 'main', readinessProbe: { exec: { command: ['x'] }, failureThreshold: 1 } };
    const probes = new ContainerProbes({
      container: c,
      runProbe: () => new Promise((resolve) => (release = resolve)),
      onReadyChange: (r) => log.push(`ready=${r}`),
      event: (_t, _r, m) => log.push(m),
    });
    probes.start('10.0.0.5');
    await vi.advanceTimersByTimeAsync(0);
    probes.stop();
    release({ result: 'failure', output: 'late' });
    await vi.advanceTimersByTimeAsync(60_000);
    expect(log).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('runs real probes against a server: ready follows the server, liveness catches it going away', async () => {
    let status = 503;
    const server = http.createServer((_req, res) => {
      res.statusCode = status;
      res.end();
    });
    const port = await listen(server);
    const c: Container = {
      name: 'web',
      ports: [{ name: 'http', containerPort: port }],
      readinessProbe: { httpGet: { port: 'http', path: '/readyz' }, periodSeconds: 1, failureThreshold: 1 },
      livenessProbe: { tcpSocket: { port: 'http' }, periodSeconds: 1, failureThreshold: 2 },
    };
    const log: string[] = [];
    let killed!: () => void;
    const gone = new Promise<void>((resolve) => (killed = resolve));
    const probes = new ContainerProbes({
      container: c,
      msPerSecond: 25,
      onReadyChange: (r) => log.push(`ready=${r}`),
      onLivenessFailure: (m) => {
        log.push(m);
        killed();
      },
      event: (_t, reason, m) => log.push(`${reason}: ${m}`),
    });
    probes.start('127.0.0.1');
    await until(() => log.includes('Unhealthy: Readiness probe failed: HTTP probe failed with statuscode: 503'));
    status = 200;
    await until(() => probes.ready);
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await gone;
    probes.stop();
    expect(log).toContain(`Unhealthy: Liveness probe failed: dial tcp 127.0.0.1:${port}: connect: connection refused`);
    expect(log.at(-1)).toBe('Container web failed liveness probe, will be restarted');
    expect(log.filter((l) => l.startsWith('ready='))).toEqual(['ready=true', 'ready=false']);
  });
});

async function until(check: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}
