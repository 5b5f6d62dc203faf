/**
 * The HTTP/1.1 side of a SPDY stream connection, as k8s.io/apimachinery's httpstream does it:
 * the client lists X-Stream-Protocol-Version values in order of preference, the server picks
 * the first it supports and answers 101 with Connection: Upgrade, Upgrade: SPDY/3.1 and the
 * chosen version.
 */
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import type { HttpError } from './http-util.js';
import { SpdySession } from './spdy-session.js';

const HEADER_PROTOCOL_VERSION = 'X-Stream-Protocol-Version';
const HEADER_ACCEPTED_PROTOCOL_VERSIONS = 'X-Accepted-Stream-Protocol-Versions';

export function isSpdyUpgrade(req: http.IncomingMessage): boolean {
  const connection = String(req.headers.connection ?? '').toLowerCase();
  const upgrade = String(req.headers.upgrade ?? '').toLowerCase();
  return connection.includes('upgrade') && upgrade.includes('spdy/3.1');
}

function requestedProtocols(req: http.IncomingMessage): string[] {
  const raw = req.headers[HEADER_PROTOCOL_VERSION.toLowerCase()];
  const values = Array.isArray(raw) ? raw : raw === undefined ? [] : [raw];
  return values
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v.length > 0);
}

/** The protocol both sides speak (the client's preference wins), or the error httpstream.Handshake gives. */
export function negotiateProtocol(req: http.IncomingMessage, supported: readonly string[]): string | HttpError {
  const requested = requestedProtocols(req);
  if (!requested.length) return { status: 400, message: `unable to upgrade: ${HEADER_PROTOCOL_VERSION} is required` };
  const chosen = requested.find((p) => supported.includes(p));
  if (chosen) return chosen;
  return {
    status: 403,
    message: `unable to upgrade: unable to negotiate protocol: client supports [${requested.join(' ')}], server accepts [${supported.join(' ')}]`,
    headers: { [HEADER_ACCEPTED_PROTOCOL_VERSIONS]: [...supported] },
  };
}

/** Answers 101 and starts a server-side SPDY session on the socket. */
export function acceptSpdyUpgrade(socket: Duplex, head: Buffer, protocol: string, log?: (line: string) => void): SpdySession {
  socket.write(
    ['HTTP/1.1 101 Switching Protocols', 'Connection: Upgrade', 'Upgrade: SPDY/3.1', `${HEADER_PROTOCOL_VERSION}: ${protocol}`, '', ''].join('\r\n'),
  );
  return new SpdySession(socket, { isServer: true, head, ...(log ? { log } : {}) });
}
