/**
 * One run of a container probe, with the outcomes and messages of the
 * kubelet's probers (kubernetes pkg/probe/{http,tcp,exec,grpc} and
 * pkg/kubelet/prober/prober.go), so Events read as on any cluster.
 *
 * A run ends in `success`, `warning` (counts as success, recorded as a
 * ProbeWarning), `failure` (with the output the Event shows), or `unknown`
 * with an error: the probe could not be run at all (a named port that the
 * container does not have, the exec function failing); such results are
 * thrown away, not counted.
 */
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { Readable, Writable } from 'node:stream';
import * as grpc from '@grpc/grpc-js';
import { expandVars } from './expansion.js';
import type { Container, Probe } from './types.js';

export type ProbeOutcome = { result: 'success' | 'warning' | 'failure'; output: string } | { result: 'unknown'; output: string; error?: Error };

/** Runs a command inside the container; resolves with its exit code and combined stdout+stderr. */
export type ExecInContainer = (command: string[], timeoutMs: number) => Promise<{ exitCode: number; output: string }>;

/** The kubelet reads at most this much of an HTTP body or a command's output. */
const MAX_PROBE_OUTPUT = 10 * 1024;
/** Go's http.Client gives up after this many redirects. */
const MAX_REDIRECTS = 10;

export interface ProbeContext {
  podIP: string;
  container: Container;
  timeoutMs: number;
  /** `kube-probe/<major>.<minor>`, as the kubelet of that version sends it. */
  userAgent: string;
  exec?: ExecInContainer;
}

/** host:port as Go's net.JoinHostPort writes it (IPv6 in brackets). */
function joinHostPort(host: string, port: number): string {
  return net.isIPv6(host) ? `[${host}]:${port}` : `${host}:${port}`;
}

/**
 * A probe's port: a number, or the name of one of the container's ports (a
 * number written as a string works too, as in the kubelet).
 */
export function resolveContainerPort(port: number | string, container: Container): number {
  let n: number;
  if (typeof port === 'number') n = port;
  else {
    const named = container.ports?.find((p) => p.name === port);
    if (named) n = named.containerPort;
    else if (/^[0-9]+$/.test(port)) n = Number(port);
    else throw new Error(`port ${port} not found in the ports of container ${container.name}`);
  }
  if (!(Number.isInteger(n) && n > 0 && n < 65536)) throw new Error(`invalid port number: ${n}`);
  return n;
}

/** What Go's dialer says for the errors a connect can end with. */
function goDialError(err: NodeJS.ErrnoException): string {
  switch (err.code) {
    case 'ECONNREFUSED':
      return 'connect: connection refused';
    case 'EHOSTUNREACH':
      return 'connect: no route to host';
    case 'ENETUNREACH':
      return 'connect: network is unreachable';
    case 'ETIMEDOUT':
      return 'connect: connection timed out';
    case 'ECONNRESET':
      return 'read: connection reset by peer';
    default:
      return err.message;
  }
}

// ---------------------------------------------------------------------------
// tcpSocket

export function tcpSocketProbe(host: string, port: number, timeoutMs: number): Promise<ProbeOutcome> {
  const addr = joinHostPort(host, port);
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ result: 'failure', output: `dial tcp ${addr}: i/o timeout` });
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ result: 'success', output: '' });
    });
    socket.once('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve({ result: 'failure', output: `dial tcp ${addr}: ${goDialError(err)}` });
    });
  });
}

// ---------------------------------------------------------------------------
// httpGet

interface HttpReply {
  status: number;
  location: string | undefined;
  body: string;
}

function headersOf(action: NonNullable<Probe['httpGet']>, userAgent: string): Record<string, string | string[]> {
  const headers: Record<string, string[]> = {};
  const canonical = new Map<string, string>();
  for (const h of action.httpHeaders ?? []) {
    const key = canonical.get(h.name.toLowerCase()) ?? h.name;
    canonical.set(h.name.toLowerCase(), key);
    (headers[key] ??= []).push(h.value);
  }
  if (!canonical.has('user-agent')) headers['User-Agent'] = [userAgent];
  const accept = canonical.get('accept');
  if (accept === undefined) headers.Accept = ['*/*'];
  else if (headers[accept]?.every((v) => v === '')) delete headers[accept];
  const out: Record<string, string | string[]> = { ...headers };
  // Like Go's req.Host = headers.Get("Host"): one value, the first.
  const host = canonical.get('host');
  if (host !== undefined) {
    const first = headers[host]?.[0] ?? '';
    delete out[host];
    if (first) out.Host = first;
  }
  return out;
}

function getOnce(url: URL, headers: Record<string, string | string[]>, signal: AbortSignal): Promise<HttpReply> {
  return new Promise((resolve, reject) => {
    const mod = url.protocol === 'https:' ? https : http;
    const req = mod.request(url, {
      method: 'GET',
      headers,
      // A fresh connection per probe, as the kubelet (keep-alives off) does; no certificate check.
      agent: false,
      rejectUnauthorized: false,
      signal,
    });
    req.once('error', reject);
    req.once('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const done = () => {
        res.destroy();
        resolve({ status: res.statusCode ?? 0, location: res.headers.location, body: Buffer.concat(chunks).toString('utf8').slice(0, MAX_PROBE_OUTPUT) });
      };
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        if (size >= MAX_PROBE_OUTPUT) done();
      });
      res.once('end', done);
      res.once('error', reject);
    });
    req.end();
  });
}

const FOLLOWED = new Set([301, 302, 303, 307, 308]);

/**
 * GET the URL; success for 200–399. Redirects are followed to the same host
 * only (the kubelet's prober does not follow others): a redirect elsewhere
 * ends the probe with its 3xx, a warning that counts as success.
 */
export async function httpGetProbe(action: NonNullable<Probe['httpGet']>, ctx: ProbeContext): Promise<ProbeOutcome> {
  let port: number;
  try {
    port = resolveContainerPort(action.port, ctx.container);
  } catch (err) {
    return { result: 'unknown', output: '', error: err as Error };
  }
  const scheme = (action.scheme ?? 'HTTP').toLowerCase() || 'http';
  const host = action.host || ctx.podIP;
  const rawPath = action.path ?? '';
  const path = rawPath === '' || rawPath.startsWith('/') ? rawPath : `/${rawPath}`;
  let url: URL;
  try {
    url = new URL(`${scheme}://${joinHostPort(host, port)}${path}`);
  } catch (err) {
    return { result: 'unknown', output: '', error: new Error(`probe URL ${scheme}://${joinHostPort(host, port)}${path}: ${(err as Error).message}`) };
  }
  const headers = headersOf(action, ctx.userAgent);
  const firstHost = url.hostname;
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), ctx.timeoutMs);
  try {
    for (let redirects = 0; ; redirects++) {
      let reply: HttpReply;
      try {
        reply = await getOnce(url, headers, abort.signal);
      } catch (err) {
        const why = abort.signal.aborted
          ? 'context deadline exceeded (Client.Timeout exceeded while awaiting headers)'
          : goDialMessage(url, err as NodeJS.ErrnoException);
        return { result: 'failure', output: `Get "${url.href}": ${why}` };
      }
      if (FOLLOWED.has(reply.status) && reply.location) {
        let next: URL;
        try {
          next = new URL(reply.location, url);
        } catch {
          return { result: 'failure', output: `Get "${url.href}": failed to parse Location header "${reply.location}"` };
        }
        if (next.hostname === firstHost) {
          if (redirects + 1 >= MAX_REDIRECTS) return { result: 'failure', output: `Get "${next.href}": stopped after ${MAX_REDIRECTS} redirects` };
          url = next;
          continue;
        }
      }
      if (reply.status >= 200 && reply.status < 400) {
        if (reply.status >= 300) return { result: 'warning', output: `Probe terminated redirects, Response body: ${reply.body}` };
        return { result: 'success', output: reply.body };
      }
      return { result: 'failure', output: `HTTP probe failed with statuscode: ${reply.status}` };
    }
  } finally {
    clearTimeout(timer);
  }
}

function goDialMessage(url: URL, err: NodeJS.ErrnoException): string {
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (err.code && ['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT'].includes(err.code))
    return `dial tcp ${joinHostPort(host, Number(port))}: ${goDialError(err)}`;
  return goDialError(err);
}

// ---------------------------------------------------------------------------
// exec

/**
 * Runs the command in the container: exit 0 is success, anything else a
 * failure whose output the Event shows. `$(VAR)` refers to the container's
 * literal env values only (as in the kubelet, which has no access to the
 * resolved environment here).
 */
export async function execProbe(command: string[], ctx: ProbeContext): Promise<ProbeOutcome> {
  if (!ctx.exec)
    return {
      result: 'unknown',
      output: '',
      error: new Error('exec probes need a way to run commands in the container, and the nodelet has none for this container'),
    };
  const literal = new Map((ctx.container.env ?? []).filter((e) => e.value !== undefined && !e.valueFrom).map((e) => [e.name, e.value as string]));
  const expanded = command.map((arg) => expandVars(arg, (name) => literal.get(name)));
  const timedOut = `command "${expanded.join(' ')}" timed out`;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'timeout'>((resolve) => {
    // A little longer than the exec function's own timeout: it should win and stop the command.
    timer = setTimeout(() => resolve('timeout'), ctx.timeoutMs + 500);
  });
  try {
    const done = await Promise.race([ctx.exec(expanded, ctx.timeoutMs), deadline]);
    if (done === 'timeout') return { result: 'failure', output: timedOut };
    const output = done.output.slice(0, MAX_PROBE_OUTPUT);
    return done.exitCode === 0 ? { result: 'success', output } : { result: 'failure', output };
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { timedOut?: boolean };
    if (e.timedOut || e.code === 'ETIMEDOUT') return { result: 'failure', output: timedOut };
    return { result: 'unknown', output: '', error: e };
  } finally {
    clearTimeout(timer);
  }
}

/** What an exec probe needs of a process started in the container (oci's runcExec returns one). */
/** A process started in the container: the shape of runc exec's ExecProcess. */
export interface ProbeProcess {
  stdin: Writable | null;
  stdout: Readable;
  stderr: Readable | null;
  /** Exit status, 128 + n when killed by signal n. */
  exited: Promise<{ exitCode: number }>;
  kill(): void;
}

/**
 * An ExecInContainer over a way to start processes in the container: no
 * stdin, stdout and stderr collected together (the first 10 KiB), killed when
 * the timeout is over (then it rejects with `timedOut`).
 */
export function execThroughProcess(start: (argv: string[]) => ProbeProcess): ExecInContainer {
  return (command, timeoutMs) =>
    new Promise((resolve, reject) => {
      let proc: ProbeProcess;
      try {
        proc = start(command);
      } catch (err) {
        return reject(err);
      }
      proc.stdin?.on('error', () => undefined);
      proc.stdin?.end();
      const chunks: Buffer[] = [];
      let size = 0;
      const collect = (chunk: Buffer) => {
        if (size < MAX_PROBE_OUTPUT) chunks.push(chunk.subarray(0, MAX_PROBE_OUTPUT - size));
        size += chunk.length;
      };
      proc.stdout.on('data', collect);
      proc.stderr?.on('data', collect);
      const timer = setTimeout(() => {
        proc.kill();
        reject(Object.assign(new Error(`command "${command.join(' ')}" timed out`), { timedOut: true }));
      }, timeoutMs);
      void proc.exited.then(({ exitCode }) => {
        clearTimeout(timer);
        // Output written just before exit may still be in the pipes.
        setImmediate(() => resolve({ exitCode, output: Buffer.concat(chunks).toString('utf8') }));
      });
    });
}

// ---------------------------------------------------------------------------
// grpc (grpc.health.v1.Health/Check, plaintext, as the kubelet does it)

const HEALTH_STATUS = ['UNKNOWN', 'SERVING', 'NOT_SERVING', 'SERVICE_UNKNOWN'];

function encodeHealthRequest(service: string): Buffer {
  if (!service) return Buffer.alloc(0);
  const s = Buffer.from(service, 'utf8');
  const len: number[] = [];
  for (let n = s.length; ; n >>>= 7) {
    if (n < 0x80) {
      len.push(n);
      break;
    }
    len.push((n & 0x7f) | 0x80);
  }
  return Buffer.concat([Buffer.from([0x0a, ...len]), s]);
}

/** The `status` field (1, an enum) of a HealthCheckResponse; 0 when absent. */
function decodeHealthStatus(buf: Buffer): number {
  let i = 0;
  const varint = (): number => {
    let v = 0;
    for (let shift = 0; i < buf.length; shift += 7) {
      const b = buf[i++] as number;
      v += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) break;
    }
    return v;
  };
  let status = 0;
  while (i < buf.length) {
    const tag = varint();
    const field = Math.floor(tag / 8);
    switch (tag & 7) {
      case 0: {
        const v = varint();
        if (field === 1) status = v;
        break;
      }
      case 1:
        i += 8;
        break;
      case 2:
        i += varint();
        break;
      case 5:
        i += 4;
        break;
      default:
        return status;
    }
  }
  return status;
}

function goDuration(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

export function grpcProbe(host: string, port: number, service: string, ctx: ProbeContext): Promise<ProbeOutcome> {
  const addr = joinHostPort(host, port);
  const client = new grpc.Client(addr, grpc.credentials.createInsecure(), { 'grpc.primary_user_agent': ctx.userAgent });
  const deadline = Date.now() + ctx.timeoutMs;
  return new Promise<ProbeOutcome>((resolve) => {
    client.waitForReady(deadline, (err) => {
      if (err)
        return resolve({ result: 'failure', output: `timeout: failed to connect service "${addr}" within ${goDuration(ctx.timeoutMs)}: ${err.message}` });
      client.makeUnaryRequest(
        '/grpc.health.v1.Health/Check',
        (s: string) => encodeHealthRequest(s),
        (b: Buffer) => decodeHealthStatus(b),
        service,
        new grpc.Metadata(),
        { deadline },
        (callErr, status) => {
          if (callErr) {
            if (callErr.code === grpc.status.UNIMPLEMENTED)
              return resolve({
                result: 'failure',
                output: `this server does not implement the grpc health protocol (grpc.health.v1.Health): ${callErr.details}`,
              });
            if (callErr.code === grpc.status.DEADLINE_EXCEEDED)
              return resolve({ result: 'failure', output: `timeout: health rpc did not complete within ${goDuration(ctx.timeoutMs)}` });
            return resolve({ result: 'failure', output: `error: health rpc probe failed: ${callErr.message}` });
          }
          if (status !== 1)
            return resolve({ result: 'failure', output: `service unhealthy (responded with "${HEALTH_STATUS[status ?? 0] ?? String(status)}")` });
          resolve({ result: 'success', output: 'service healthy' });
        },
      );
    });
  }).finally(() => client.close());
}

/** Runs the probe's handler once. */
export function runProbeOnce(probe: Probe, ctx: ProbeContext): Promise<ProbeOutcome> {
  if (probe.exec) return execProbe(probe.exec.command ?? [], ctx);
  if (probe.httpGet) return httpGetProbe(probe.httpGet, ctx);
  if (probe.tcpSocket) {
    let port: number;
    try {
      port = resolveContainerPort(probe.tcpSocket.port, ctx.container);
    } catch (err) {
      return Promise.resolve({ result: 'unknown', output: '', error: err as Error });
    }
    return tcpSocketProbe(probe.tcpSocket.host || ctx.podIP, port, ctx.timeoutMs);
  }
  if (probe.grpc) return grpcProbe(ctx.podIP, probe.grpc.port, probe.grpc.service ?? '', ctx);
  return Promise.resolve({ result: 'unknown', output: '', error: new Error(`missing probe handler for container ${ctx.container.name}`) });
}
