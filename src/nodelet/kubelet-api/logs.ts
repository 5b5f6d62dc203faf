/**
 * GET /containerLogs/{ns}/{pod}/{container}: the query kube-apiserver builds from
 * PodLogOptions (pkg/registry/core/pod/strategy.go LogLocation), answered as the kubelet
 * does (pkg/kubelet/server/server.go getContainerLogs): 400 for a query it cannot decode,
 * 422 for invalid options, 404 for an unknown pod or container, then a plain-text stream.
 */
import type http from 'node:http';
import { Writable } from 'node:stream';
import { findPod, writeHttpError, type HttpError } from './http-util.js';
import { KubeletNotFound, type KubeletBackend, type LogStreamOptions } from './types.js';

const DECODE_ERROR: HttpError = { status: 400, message: '{"message": "Unable to decode query."}' };
const INVALID: HttpError = { status: 422, message: '{"message": "Invalid request."}' };

/** Go's query-to-bool conversion: present and not "false"/"0" means true. */
function bool(query: URLSearchParams, name: string): boolean {
  const v = query.get(name);
  return v !== null && !['false', '0'].includes(v.toLowerCase());
}

function int(query: URLSearchParams, name: string): number | undefined | null {
  const v = query.get(name);
  if (v === null) return undefined;
  return /^-?\d+$/.test(v.trim()) ? Number(v.trim()) : null;
}

export function parseLogOptions(query: URLSearchParams, now: Date = new Date()): LogStreamOptions | HttpError {
  const q = new URLSearchParams(query);
  // The kubelet still accepts the old "tail" parameter; "all" means no limit.
  const tail = q.get('tail');
  if (tail) {
    if (tail === 'all') q.delete('tailLines');
    else q.set('tailLines', tail);
  }
  const tailLines = int(q, 'tailLines');
  const sinceSeconds = int(q, 'sinceSeconds');
  const limitBytes = int(q, 'limitBytes');
  if (tailLines === null || sinceSeconds === null || limitBytes === null) return DECODE_ERROR;
  let sinceTime: Date | undefined;
  const sinceTimeText = q.get('sinceTime');
  if (sinceTimeText !== null) {
    if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(sinceTimeText)) return DECODE_ERROR;
    sinceTime = new Date(sinceTimeText);
    if (Number.isNaN(sinceTime.getTime())) return DECODE_ERROR;
  }
  if ((tailLines !== undefined && tailLines < 0) || (limitBytes !== undefined && limitBytes < 1) || (sinceSeconds !== undefined && sinceSeconds < 1))
    return INVALID;
  if (sinceSeconds !== undefined && sinceTime) return INVALID;
  if (sinceSeconds !== undefined) sinceTime = new Date(now.getTime() - sinceSeconds * 1000);
  const stream = q.get('stream');
  if (stream !== null && !['All', 'Stdout', 'Stderr'].includes(stream)) return { status: 400, message: `invalid stream type "${stream}"` };
  return {
    follow: bool(q, 'follow'),
    timestamps: bool(q, 'timestamps'),
    previous: bool(q, 'previous'),
    ...(tailLines !== undefined ? { tailLines } : {}),
    ...(sinceTime ? { sinceTime } : {}),
    ...(limitBytes !== undefined ? { limitBytes } : {}),
    ...(stream === 'Stdout' || stream === 'Stderr' ? { stream } : {}),
  };
}

/**
 * The response's status is held back until the backend writes its first byte, so a log that
 * turns out not to exist still gets a 404 instead of an empty 200.
 */
class LazyResponse extends Writable {
  constructor(private readonly res: http.ServerResponse) {
    super();
  }

  start(): void {
    if (this.res.headersSent) return;
    this.res.writeHead(200, { 'Content-Type': 'text/plain', 'X-Content-Type-Options': 'nosniff' });
    this.res.flushHeaders();
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    this.start();
    if (this.res.destroyed) return cb();
    if (this.res.write(chunk)) cb();
    else {
      const go = (): void => {
        this.res.off('drain', go);
        this.res.off('close', go);
        cb();
      };
      this.res.on('drain', go);
      this.res.on('close', go);
    }
  }
}

export async function serveContainerLogs(
  res: http.ServerResponse,
  backend: KubeletBackend,
  segments: string[],
  query: URLSearchParams,
  log: (line: string) => void,
): Promise<void> {
  if (segments.length !== 3) return writeHttpError(res, { status: 404, message: 'expected /containerLogs/{namespace}/{pod}/{container}' });
  const [ns, podName, container] = segments as [string, string, string];
  const opts = parseLogOptions(query);
  if ('status' in opts) return writeHttpError(res, opts);
  const pod = findPod(backend.pods(), ns, podName);
  if (!pod) return writeHttpError(res, { status: 404, message: `pod "${podName}" does not exist` });
  if (!pod.containers.includes(container)) return writeHttpError(res, { status: 404, message: `container "${container}" not found in pod "${podName}"` });

  const abort = new AbortController();
  res.on('close', () => abort.abort());
  const out = new LazyResponse(res);
  out.on('error', () => {});
  try {
    await backend.streamLogs(ns, podName, container, opts, out, abort.signal);
    await new Promise<void>((resolve) => out.end(resolve));
    out.start();
    res.end();
  } catch (err) {
    if (abort.signal.aborted) return;
    const message = (err as Error).message ?? String(err);
    if (!res.headersSent) {
      writeHttpError(res, { status: err instanceof KubeletNotFound ? 404 : 400, message });
    } else {
      // Mid-stream the status is gone already; the kubelet appends the error text, so do we.
      log(`logs ${ns}/${podName}/${container}: ${message}`);
      res.end(`${message}\n`);
    }
  }
}
