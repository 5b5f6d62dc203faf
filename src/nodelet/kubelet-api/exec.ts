/**
 * `kubectl exec` on the node: the remotecommand protocol over SPDY
 * (kubernetes pkg/kubelet/cri/streaming/remotecommand). The client opens one stream per
 * channel, each tagged by its `streamtype` header; once all expected streams are there the
 * command runs, and its end is reported on the error stream before the connection closes.
 */
import { finished } from 'node:stream/promises';
import type { HttpError } from './http-util.js';
import { RstStatus } from './spdy-frames.js';
import { headerValue } from './spdy-headers.js';
import type { SpdySession, SpdyStream } from './spdy-session.js';
import type { ExecProcess, KubeletBackend } from './types.js';

export const EXEC_PROTOCOLS = ['v4.channel.k8s.io', 'v3.channel.k8s.io', 'v2.channel.k8s.io', 'channel.k8s.io'] as const;

export interface ExecRequest {
  ns: string;
  pod: string;
  container: string;
  command: string[];
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

type StreamType = 'error' | 'stdin' | 'stdout' | 'stderr' | 'resize';
const STREAM_TYPES: readonly StreamType[] = ['error', 'stdin', 'stdout', 'stderr', 'resize'];

function flag(query: URLSearchParams, ...names: string[]): boolean {
  return names.some((n) => {
    const v = query.get(n);
    return v === '1' || v?.toLowerCase() === 'true';
  });
}

/**
 * Reads /exec/{ns}/{pod}[/{uid}]/{container}?command=…. kube-apiserver names the channels
 * input/output/error/tty (core/v1 ExecStdinParam…); stdin/stdout/stderr are accepted too.
 */
export function parseExecRequest(segments: string[], query: URLSearchParams): ExecRequest | HttpError {
  if (segments.length !== 3 && segments.length !== 4) {
    return { status: 404, message: 'expected /exec/{namespace}/{pod}/{container}' };
  }
  const [ns, pod] = segments as [string, string];
  const container = segments[segments.length - 1]!;
  const tty = flag(query, 'tty');
  const stdin = flag(query, 'input', 'stdin');
  const stdout = flag(query, 'output', 'stdout');
  // With a tty the terminal carries stderr on stdout, as the kubelet does.
  const stderr = !tty && flag(query, 'error', 'stderr');
  if (!stdin && !stdout && !stderr) return { status: 400, message: 'you must specify at least 1 of stdin, stdout, stderr' };
  const command = query.getAll('command');
  if (!command.length) return { status: 400, message: 'you must specify a command (the command query parameter)' };
  return { ns, pod, container, command, stdin, stdout, stderr, tty };
}

interface ExecStatus {
  status: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: { causes: { reason?: string; message: string }[] };
  code?: number;
}

function nonZeroExit(req: ExecRequest, exitCode: number): ExecStatus {
  return {
    status: 'Failure',
    message: `command terminated with non-zero exit code: command ${JSON.stringify(req.command)} exited with ${exitCode}`,
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(exitCode) }] },
  };
}

function internalError(err: unknown): ExecStatus {
  const message = `error executing command in container: ${(err as Error)?.message ?? String(err)}`;
  return { status: 'Failure', message: `Internal error occurred: ${message}`, reason: 'InternalError', details: { causes: [{ message }] }, code: 500 };
}

/** v4 sends a metav1.Status as JSON (field order as Go marshals it); older versions send only failures, as text. */
export function encodeExecStatus(protocol: string, s: ExecStatus): Buffer | undefined {
  if (protocol === 'v4.channel.k8s.io') {
    const json: Record<string, unknown> = { metadata: {}, status: s.status };
    if (s.message !== undefined) json.message = s.message;
    if (s.reason !== undefined) json.reason = s.reason;
    if (s.details !== undefined) json.details = s.details;
    if (s.code !== undefined) json.code = s.code;
    return Buffer.from(JSON.stringify(json));
  }
  return s.status === 'Success' ? undefined : Buffer.from(s.message ?? 'error');
}

function supportsResize(protocol: string): boolean {
  return protocol === 'v4.channel.k8s.io' || protocol === 'v3.channel.k8s.io';
}

/** Collects the client's streams; resolves with them once all expected ones arrived, or undefined on timeout/close. */
function waitForStreams(
  session: SpdySession,
  req: ExecRequest,
  protocol: string,
  timeoutMs: number,
  log: (line: string) => void,
): Promise<Partial<Record<StreamType, SpdyStream>> | undefined> {
  const expected = 1 + Number(req.stdin) + Number(req.stdout) + Number(req.stderr) + Number(req.tty && supportsResize(protocol));
  const streams: Partial<Record<StreamType, SpdyStream>> = {};
  let received = 0;
  return new Promise((resolve) => {
    const done = (value: Partial<Record<StreamType, SpdyStream>> | undefined): void => {
      clearTimeout(timer);
      session.off('stream', onStream);
      session.off('close', onClose);
      resolve(value);
    };
    const onStream = (stream: SpdyStream): void => {
      const type = headerValue(stream.headers, 'streamtype') as StreamType | undefined;
      stream.reply();
      if (!type || !STREAM_TYPES.includes(type) || streams[type]) {
        log(`exec ${req.ns}/${req.pod}: ignoring unexpected stream type ${JSON.stringify(type ?? '')}`);
        stream.resume();
        return;
      }
      streams[type] = stream;
      if (++received === expected) done(streams);
    };
    const onClose = (): void => done(undefined);
    const timer = setTimeout(() => {
      log(`exec ${req.ns}/${req.pod}/${req.container}: timed out waiting for client to create streams (${received} of ${expected})`);
      done(undefined);
    }, timeoutMs);
    session.on('stream', onStream);
    session.on('close', onClose);
  });
}

/** Terminal sizes arrive as JSON objects ({"Width":…,"Height":…}) one after another on the resize stream. */
export class JsonObjectSplitter {
  private buf = '';
  private depth = 0;
  private inString = false;
  private escaped = false;
  private start = -1;

  push(text: string): unknown[] {
    const out: unknown[] = [];
    const base = this.buf.length;
    this.buf += text;
    for (let i = base; i < this.buf.length; i++) {
      const c = this.buf[i];
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === '\\') this.escaped = true;
        else if (c === '"') this.inString = false;
      } else if (c === '"') this.inString = true;
      else if (c === '{') {
        if (this.depth++ === 0) this.start = i;
      } else if (c === '}' && this.depth > 0 && --this.depth === 0) {
        try {
          out.push(JSON.parse(this.buf.slice(this.start, i + 1)));
        } catch {
          // not an object we understand: skip it
        }
        this.buf = this.buf.slice(i + 1);
        i = -1;
        this.start = -1;
      }
    }
    if (this.depth === 0) this.buf = '';
    return out;
  }
}

function wireResize(stream: SpdyStream, proc: ExecProcess): void {
  const splitter = new JsonObjectSplitter();
  stream.setEncoding('utf8');
  stream.on('data', (text: string) => {
    for (const size of splitter.push(text)) {
      const s = size as { Width?: unknown; Height?: unknown };
      if (typeof s.Width === 'number' && typeof s.Height === 'number') proc.resize?.(s.Width, s.Height);
    }
  });
}

async function outputDone(stream: SpdyStream | undefined, source: NodeJS.ReadableStream | null): Promise<void> {
  try {
    if (stream) await finished(stream, { readable: false });
    else if (source) await finished(source as NodeJS.ReadableStream & { readable: boolean });
  } catch {
    // the client went away or the source failed; the session teardown covers it
  }
}

/** Runs one exec over an upgraded connection; resolves when the connection is done. */
export async function runExecSession(
  session: SpdySession,
  protocol: string,
  req: ExecRequest,
  backend: KubeletBackend,
  opts: { streamCreationTimeoutMs: number; log: (line: string) => void },
): Promise<void> {
  const { log } = opts;
  const streams = await waitForStreams(session, req, protocol, opts.streamCreationTimeoutMs, log);
  if (!streams) {
    session.close();
    return;
  }
  const errorStream = streams.error!;
  errorStream.resume();
  // The set is complete; a client opening more gets them refused instead of waiting for a reply.
  session.on('stream', (extra: SpdyStream) => extra.reset(RstStatus.RefusedStream));

  const finish = async (status: ExecStatus): Promise<void> => {
    const payload = encodeExecStatus(protocol, status);
    errorStream.end(payload);
    try {
      await finished(errorStream, { readable: false });
    } catch {
      // closed by the client already
    }
    session.close();
  };

  let proc: ExecProcess;
  try {
    proc = await backend.exec(req.ns, req.pod, req.container, req.command, { tty: req.tty, stdin: req.stdin });
  } catch (err) {
    log(`exec ${req.ns}/${req.pod}/${req.container}: ${(err as Error).message}`);
    await finish(internalError(err));
    return;
  }

  let exited = false;
  const onClientGone = (): void => {
    if (!exited) proc.kill();
  };
  session.once('close', onClientGone);

  if (proc.stdin) {
    proc.stdin.on('error', () => {}); // EPIPE once the command stops reading
    if (streams.stdin) streams.stdin.pipe(proc.stdin);
    else proc.stdin.end();
  } else {
    streams.stdin?.resume();
  }
  proc.stdout.on('error', () => {});
  if (streams.stdout) proc.stdout.pipe(streams.stdout);
  else proc.stdout.resume();
  if (proc.stderr) {
    proc.stderr.on('error', () => {});
    if (streams.stderr) proc.stderr.pipe(streams.stderr);
    else proc.stderr.resume();
  } else {
    streams.stderr?.end();
  }
  if (streams.resize) wireResize(streams.resize, proc);

  let status: ExecStatus;
  try {
    const { exitCode } = await proc.exited;
    exited = true;
    status = exitCode === 0 ? { status: 'Success' } : nonZeroExit(req, exitCode);
  } catch (err) {
    exited = true;
    status = internalError(err);
  }
  // Everything the command printed reaches the client before the status does.
  await Promise.all([outputDone(streams.stdout, proc.stdout), outputDone(proc.stderr ? streams.stderr : undefined, proc.stderr)]);
  session.off('close', onClientGone);
  if (session.closed) return;
  await finish(status);
}
