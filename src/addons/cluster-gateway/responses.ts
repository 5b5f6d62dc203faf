/** Answers of the gateway: JSON bodies, Kubernetes Status objects, and Statuses on a raw socket. */
import type { ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { GATEWAY_GROUP, GATEWAY_RESOURCE } from './constants.js';
import { statusObject } from './presentation.js';

const GR = { group: GATEWAY_GROUP, kind: GATEWAY_RESOURCE };

export function sendJson(res: ServerResponse, code: number, body: unknown, contentType = 'application/json'): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'content-type': contentType, 'content-length': Buffer.byteLength(text), 'cache-control': 'no-cache, private' });
  res.end(text);
}

export function sendStatus(res: ServerResponse, code: number, reason: string, message: string, details?: Record<string, unknown>): void {
  sendJson(res, code, statusObject(code, reason, message, details));
}

/** An error answer on a raw socket (an upgrade request that will not be upgraded). */
export function socketStatus(socket: Duplex, code: number, reason: string, message: string): void {
  const text = JSON.stringify(statusObject(code, reason, message));
  const phrase =
    { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 502: 'Bad Gateway', 503: 'Service Unavailable' }[code] ?? 'Error';
  socket.end(`HTTP/1.1 ${code} ${phrase}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`);
}

export function notFound(name: string): [number, string, string, Record<string, unknown>] {
  return [404, 'NotFound', `${GATEWAY_RESOURCE}.${GATEWAY_GROUP} "${name}" not found`, { name, ...GR }];
}
