import type http from 'node:http';
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import type { AllowedIdentities } from './types.js';
import { verbOfMethod } from '../../kube/verbs.js';

/** An answer given before any streaming starts. */
export interface HttpError {
  status: number;
  message: string;
  headers?: Record<string, string | string[]>;
}

export function isHttpError(v: unknown): v is HttpError {
  return typeof v === 'object' && v !== null && 'status' in v && 'message' in v && typeof (v as HttpError).status === 'number';
}

/** Writes an HTTP error on a socket that Node handed over for an upgrade (no ServerResponse exists there). */
export function writeRawHttpError(socket: Duplex, err: HttpError): void {
  const body = Buffer.from(err.message.endsWith('\n') ? err.message : `${err.message}\n`, 'utf8');
  const lines = [
    `HTTP/1.1 ${err.status} ${STATUS_TEXT[err.status] ?? 'Error'}`,
    'Content-Type: text/plain; charset=utf-8',
    `Content-Length: ${body.length}`,
    'Connection: close',
  ];
  for (const [name, value] of Object.entries(err.headers ?? {})) {
    for (const v of Array.isArray(value) ? value : [value]) lines.push(`${name}: ${v}`);
  }
  socket.end(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), body]));
}

export function writeHttpError(res: http.ServerResponse, err: HttpError): void {
  const body = err.message.endsWith('\n') ? err.message : `${err.message}\n`;
  res.writeHead(err.status, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff', ...(err.headers ?? {}) });
  res.end(body);
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  422: 'Unprocessable Entity',
  500: 'Internal Server Error',
};

/** Who the client certificate says the caller is; 401/403 as the kubelet answers them. */
export function authenticate(socket: TLSSocket, allowed: AllowedIdentities, verb: string, path: string): { user: string } | HttpError {
  if (!socket.authorized) return { status: 401, message: 'Unauthorized' };
  const subject = socket.getPeerCertificate()?.subject as Record<string, string | string[] | undefined> | undefined;
  const cn = firstOf(subject?.CN) ?? '';
  const groups = allOf(subject?.O);
  if (allowed.commonNames.includes(cn) || groups.some((g) => allowed.groups.includes(g))) return { user: cn };
  return { status: 403, message: `Forbidden (user=${cn}, verb=${verb}, resource=nodes, subresource(s)=[${subresource(path)}])` };
}

function firstOf(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function allOf(v: string | string[] | undefined): string[] {
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

function subresource(path: string): string {
  const first = path.split('/')[1] ?? '';
  return ['containerLogs', 'exec', 'attach', 'portForward', 'pods', 'run'].includes(first) ? 'proxy' : first;
}

/** The kubelet maps HTTP methods to authorization verbs this way (kubelet/server/auth.go). */
export function verbOf(method: string | undefined): string {
  return verbOfMethod(method) ?? 'get';
}

/** A pod from the backend's list, by namespace and name; with the names of all its containers. */
export function findPod(pods: unknown[], ns: string, name: string): { uid: string; containers: string[] } | undefined {
  for (const p of pods) {
    const pod = p as { metadata?: { namespace?: string; name?: string; uid?: string }; spec?: Record<string, unknown> };
    if (pod?.metadata?.namespace !== ns || pod.metadata.name !== name) continue;
    const containers: string[] = [];
    for (const key of ['containers', 'initContainers', 'ephemeralContainers']) {
      const list = pod.spec?.[key];
      if (Array.isArray(list)) for (const c of list) if (typeof c?.name === 'string') containers.push(c.name);
    }
    return { uid: pod.metadata.uid ?? '', containers };
  }
  return undefined;
}

/** Path segments after the handler's prefix, URL-decoded. */
export function pathSegments(pathname: string): string[] {
  return pathname
    .split('/')
    .filter((s) => s.length > 0)
    .map((s) => decodeURIComponent(s));
}
