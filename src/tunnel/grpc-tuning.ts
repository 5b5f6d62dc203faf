/** gRPC server setup of the tunnel server: message sizes, keepalive, HTTP/2 windows and mTLS credentials with a TLS profile. */
import * as grpc from '@grpc/grpc-js';
import { MAX_MESSAGE_BYTES } from './wire.js';
import type { NodeTlsOptions } from './tls-profile.js';
import type { ListenAddress, ServerTLS } from './server.js';

/** HTTP/2 flow-control window we grant peers, per stream and per connection. */
const WINDOW_BYTES = 4 * 1024 * 1024;

/** Options of the agent and frontend gRPC servers. */
export function grpcServerOptions(): grpc.ServerOptions {
  return {
    'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
    'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
    'grpc.keepalive_time_ms': 30_000,
    'grpc.keepalive_timeout_ms': 20_000,
    'grpc-node.flow_control_window': 4 * 1024 * 1024,
  } as grpc.ServerOptions;
}

/**
 * grpc-js applies 'grpc-node.flow_control_window' only to clients; its servers
 * keep HTTP/2's 64 KiB default, which caps upload throughput on every hop. We
 * widen it through grpc-js internals when they look as expected, and otherwise
 * leave the default (slower, still correct).
 */
function widenStreamWindows(server: grpc.Server): void {
  const internals = server as unknown as { commonServerOptions?: { settings?: Record<string, unknown> } };
  if (internals.commonServerOptions && typeof internals.commonServerOptions === 'object') {
    internals.commonServerOptions.settings = { ...(internals.commonServerOptions.settings ?? {}), initialWindowSize: WINDOW_BYTES };
  }
}

/** The connection-level window is per session; sessions appear once the port is bound. */
function widenConnectionWindows(server: grpc.Server): void {
  type Session = { setLocalWindowSize?(n: number): void };
  const internals = server as unknown as { http2Servers?: Map<{ on(ev: 'session', fn: (s: Session) => void): void }, unknown> };
  if (!(internals.http2Servers instanceof Map)) return;
  for (const h2 of internals.http2Servers.keys()) {
    h2.on('session', (session) => {
      try {
        session.setLocalWindowSize?.(WINDOW_BYTES);
      } catch {
        // session already closing
      }
    });
  }
}

/**
 * mTLS server credentials with a TLS profile: grpc-js's createSsl takes no version or
 * cipher options, but its credentials are only the options handed to
 * http2.createSecureServer, which this subclass supplies itself.
 */
class ProfiledServerCredentials extends grpc.ServerCredentials {
  constructor(t: ServerTLS, tlsOptions: NodeTlsOptions) {
    super(
      { requestCert: true, rejectUnauthorized: true },
      { ca: Buffer.from(t.clientCaPem), cert: Buffer.from(t.certPem), key: Buffer.from(t.keyPem), ...tlsOptions },
    );
  }

  _equals(other: grpc.ServerCredentials): boolean {
    return other === this;
  }
}

/** Binds `server` with mTLS and wide windows; resolves to the bound port. */
export function bindGrpc(server: grpc.Server, addr: ListenAddress, t: ServerTLS, tlsOptions: NodeTlsOptions): Promise<number> {
  widenStreamWindows(server);
  const creds = new ProfiledServerCredentials(t, tlsOptions);
  const host = addr.host ?? '127.0.0.1';
  const target = host.includes(':') ? `[${host}]:${addr.port}` : `${host}:${addr.port}`;
  return new Promise((resolve, reject) => {
    server.bindAsync(target, creds, (err, port) => {
      if (err) {
        reject(new Error(`cannot listen on ${target}: ${err.message}`));
        return;
      }
      widenConnectionWindows(server);
      resolve(port);
    });
  });
}
