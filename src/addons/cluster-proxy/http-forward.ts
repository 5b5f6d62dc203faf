import http from 'node:http';
import https from 'node:https';
import type { Duplex } from 'node:stream';

/**
 * One HTTP/1.1 hop of cluster-proxy's user server and service proxy: the request goes on
 * with its method, body and end-to-end headers; a connection upgrade (`kubectl exec`'s
 * SPDY, WebSockets) becomes a byte pipe once the target answers 101.
 */

/** Hop-by-hop headers (RFC 9110 §7.6.1) and `host`, which every hop sets itself; cluster-gateway's proxy drops the same. */
export const HOP_BY_HOP: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
]);

/** The end-to-end headers of `headers` (RFC 9110 §7.6.1: minus hop-by-hop ones and those `Connection` names). */
export function endToEndHeaders(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const named = new Set(
    String(headers.connection ?? '')
      .split(',')
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean),
  );
  const out: http.OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined || HOP_BY_HOP.has(k) || named.has(k)) continue;
    out[k] = v;
  }
  return out;
}

export interface HopTarget {
  protocol: 'http:' | 'https:';
  host: string;
  port: number;
  /** Path and query. */
  path: string;
  headers: http.OutgoingHttpHeaders;
  agent?: http.Agent;
  /** For https: CA and name to verify the target with. */
  tls?: { ca?: string | string[]; servername?: string; rejectUnauthorized?: boolean };
}

function open(req: http.IncomingMessage, target: HopTarget, upgrade: boolean): http.ClientRequest {
  const headers = { ...target.headers };
  if (upgrade) Object.assign(headers, { connection: 'Upgrade', upgrade: req.headers.upgrade ?? '' });
  const options: https.RequestOptions = {
    method: req.method,
    host: target.host,
    port: target.port,
    path: target.path,
    headers,
    ...(target.agent ? { agent: target.agent } : {}),
    ...(target.tls ?? {}),
  };
  return target.protocol === 'https:' ? https.request(options) : http.request(options);
}

/** Forwards `req` to `target` and streams the answer back; `failed` writes the error answer when the target cannot be reached. */
export function forwardRequest(req: http.IncomingMessage, res: http.ServerResponse, target: HopTarget, failed: (err: Error) => void): void {
  const out = open(req, target, false);
  out.on('response', (up) => {
    res.writeHead(up.statusCode ?? 502, up.statusMessage, endToEndHeaders(up.headers));
    up.pipe(res);
  });
  out.on('error', (err) => {
    if (!res.headersSent) failed(err);
    else res.destroy(err);
  });
  res.on('close', () => {
    if (!res.writableFinished) out.destroy();
  });
  req.pipe(out);
}

function statusLine(status: number, message: string | undefined, rawHeaders: string[]): string {
  let text = `HTTP/1.1 ${status} ${message ?? ''}\r\n`;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) text += `${rawHeaders[i]}: ${rawHeaders[i + 1]}\r\n`;
  return `${text}\r\n`;
}

/**
 * Forwards an upgrade request. A 101 joins the two sockets; any other answer (a 401, a 403)
 * is passed back with `Connection: close` and the socket ends after its body.
 */
export function forwardUpgrade(
  req: http.IncomingMessage,
  client: Duplex,
  head: Buffer,
  target: HopTarget,
  failed: (status: number, message: string) => void,
): void {
  const out = open(req, target, true);
  client.on('error', () => out.destroy());
  out.on('upgrade', (up, upstream, upstreamHead) => {
    client.write(statusLine(101, up.statusMessage || 'Switching Protocols', up.rawHeaders));
    if (upstreamHead.length) client.write(upstreamHead);
    if (head.length) upstream.write(head);
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    upstream.pipe(client);
    client.pipe(upstream);
  });
  out.on('response', (up) => {
    const raw: string[] = [];
    for (let i = 0; i + 1 < up.rawHeaders.length; i += 2) {
      const name = up.rawHeaders[i]!;
      if (!HOP_BY_HOP.has(name.toLowerCase()) && name.toLowerCase() !== 'content-length') raw.push(name, up.rawHeaders[i + 1]!);
    }
    client.write(statusLine(up.statusCode ?? 502, up.statusMessage, [...raw, 'Connection', 'close']));
    up.pipe(client);
  });
  out.on('error', (err) => failed(502, err.message));
  out.end();
}

/** A plain-text error answer on a raw socket (for upgrade requests, which have no ServerResponse). */
export function socketError(client: Duplex, status: number, message: string): void {
  const body = `${message}\n`;
  client.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? ''}\r\nContent-Type: text/plain; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
