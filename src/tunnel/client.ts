import { randomBytes } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type net from 'node:net';
import { Duplex } from 'node:stream';
import tls from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { DEFAULT_BACKOFF } from './agent.js';
import { PacketType, randomDialID } from './packet.js';
import { MAX_DATA_CHUNK, MAX_MESSAGE_BYTES, PROXY_METHOD, deserialize, serialize, type TunnelClientStream, type WirePacket } from './wire.js';

export interface TunnelClientOptions {
  /** Proxy server frontend, `host:port`. */
  address: string;
  tls: {
    certPem: string | Buffer;
    keyPem: string | Buffer;
    caPem: string | Buffer;
    /** Name checked in the proxy server's certificate, if not the host of `address`. */
    servername?: string;
  };
  /** How long a dial may take before it is cancelled (DIAL_CLS). Default 30 s. */
  dialTimeoutMs?: number;
}

/** The shape of undici's `connect` option (undici is not a dependency of ours). */
type UndiciConnector = (
  options: { hostname: string; port: string | number; protocol: string; servername?: string | null },
  callback: (err: Error | null, socket: Duplex | null) => void,
) => void;

export class TunnelDialError extends Error {
  constructor(
    readonly address: string,
    readonly reason: string,
  ) {
    super(`tunnel dial to ${address} failed: ${reason}`);
    this.name = 'TunnelDialError';
  }
}

export interface TunnelClient {
  /** Opens one TCP connection to `host:port` on the agent's side of the tunnel. */
  dial(address: string): Promise<TunnelSocket>;
  /** An https.Agent whose connections go through the tunnel; TLS is end-to-end with the target. */
  httpsAgent(tlsOptions?: https.AgentOptions): https.Agent;
  /** An http.Agent for plain HTTP through the tunnel. */
  httpAgent(options?: http.AgentOptions): http.Agent;
  /**
   * A `connect` function for undici (`new undici.Agent({ connect })`): undici
   * calls it with the origin's hostname/port/protocol and takes the socket.
   */
  undiciConnector(tlsOptions?: tls.ConnectionOptions): UndiciConnector;
  close(): void;
}

/**
 * One tunnelled connection. The protocol has no half-close: ending the
 * writable side closes the whole connection (CLOSE_REQ), like upstream.
 */
export class TunnelSocket extends Duplex {
  connectID = 0n;
  readonly remoteAddress: string;
  private closeSent = false;
  private remoteClosed = false;
  private readonly drainWaiters: (() => void)[] = [];

  constructor(
    private readonly call: TunnelClientStream,
    address: string,
  ) {
    super({ allowHalfOpen: false, readableHighWaterMark: 256 * 1024, writableHighWaterMark: 256 * 1024 });
    this.remoteAddress = address;
    call.on('drain', () => this.drainWaiters.splice(0).forEach((fn) => fn()));
  }

  /**
   * The far end closed the connection. A socket nobody reads emits neither 'end' nor 'close' for that
   * (its end-of-stream waits in the read buffer): a connection kept for later asks here before use.
   */
  get closedByFarEnd(): boolean {
    return this.remoteClosed;
  }

  /** @internal */
  established(connectID: bigint): void {
    this.connectID = connectID;
    this.call.on('data', (pkt: WirePacket) => {
      if (pkt.type === PacketType.DATA) {
        if (!this.push(pkt.data)) this.call.pause();
      } else if (pkt.type === PacketType.CLOSE_RSP) {
        this.remoteClosed = true;
        this.push(null);
        this.endCall();
      }
    });
    const gone = (): void => {
      if (this.remoteClosed) return;
      this.remoteClosed = true;
      this.push(null);
    };
    this.call.on('end', gone);
    this.call.on('error', (err: Error) => {
      if (!this.remoteClosed && !this.destroyed) this.destroy(new Error(`tunnel to ${this.remoteAddress} broke: ${err.message}`));
    });
  }

  override _read(): void {
    if (this.call.isPaused()) this.call.resume();
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    if (this.closeSent || this.remoteClosed) return cb(new Error(`tunnel connection to ${this.remoteAddress} is closed`));
    let ok = true;
    for (let off = 0; off < chunk.length; off += MAX_DATA_CHUNK) {
      ok = this.call.write({ type: PacketType.DATA, connectID: this.connectID, error: '', data: chunk.subarray(off, off + MAX_DATA_CHUNK) });
    }
    if (ok) cb();
    else this.drainWaiters.push(() => cb());
  }

  override _final(cb: (err?: Error | null) => void): void {
    this.sendClose();
    cb();
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    this.sendClose();
    this.drainWaiters.splice(0).forEach((fn) => fn());
    cb(err);
  }

  private sendClose(): void {
    if (this.closeSent) return;
    this.closeSent = true;
    if (!this.remoteClosed && !this.call.writableEnded && !this.call.destroyed) {
      this.call.write({ type: PacketType.CLOSE_REQ, connectID: this.connectID });
      // Wait for CLOSE_RSP (which ends the call), but never forever.
      setTimeout(() => this.call.cancel(), 10_000).unref();
    } else {
      this.endCall();
    }
  }

  private endCall(): void {
    if (!this.call.writableEnded && !this.call.destroyed) this.call.end();
  }

  // net.Socket look-alikes that http/https agents call.
  setKeepAlive(): this {
    return this;
  }
  setNoDelay(): this {
    return this;
  }
  setTimeout(ms: number, cb?: () => void): this {
    if (cb) this.once('timeout', cb);
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = ms > 0 ? setTimeout(() => this.emit('timeout'), ms).unref() : undefined;
    return this;
  }
  private idleTimer: NodeJS.Timeout | undefined;
  ref(): this {
    return this;
  }
  unref(): this {
    return this;
  }
}

class GrpcTunnelClient implements TunnelClient {
  private readonly client: grpc.Client;
  private readonly dialTimeoutMs: number;

  constructor(opts: TunnelClientOptions) {
    const creds = grpc.credentials.createSsl(Buffer.from(opts.tls.caPem), Buffer.from(opts.tls.keyPem), Buffer.from(opts.tls.certPem));
    const options: grpc.ChannelOptions = {
      'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
      'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
      'grpc.keepalive_time_ms': 30_000,
      // grpc-js's default (1 s, ×1.6 up to 120 s) left a long-lived client reconnecting up to ~8 s after
      // a restarted proxy-server was back (test/faults/tunnel.test.ts); the agent's schedule (DEFAULT_BACKOFF) keeps both ends within 2 s.
      'grpc.initial_reconnect_backoff_ms': DEFAULT_BACKOFF.initialMs,
      'grpc.max_reconnect_backoff_ms': DEFAULT_BACKOFF.capMs,
      'grpc-node.flow_control_window': 4 * 1024 * 1024,
    } as grpc.ChannelOptions;
    if (opts.tls.servername) {
      options['grpc.ssl_target_name_override'] = opts.tls.servername;
      options['grpc.default_authority'] = opts.tls.servername;
    }
    this.client = new grpc.Client(opts.address, creds, options);
    this.dialTimeoutMs = opts.dialTimeoutMs ?? 30_000;
  }

  dial(address: string): Promise<TunnelSocket> {
    const call = this.client.makeBidiStreamRequest(PROXY_METHOD, serialize, deserialize, new grpc.Metadata()) as TunnelClientStream;
    const random = randomDialID(randomBytes(8));
    const socket = new TunnelSocket(call, address);
    return new Promise((resolve, reject) => {
      let settled = false;
      const done = (err?: Error): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        call.off('data', onData);
        if (err) {
          if (!call.writableEnded) call.end();
          call.on('error', () => undefined);
          setTimeout(() => call.cancel(), 1000).unref();
          reject(err);
        } else {
          resolve(socket);
        }
      };
      const onData = (pkt: WirePacket): void => {
        if (pkt.type === PacketType.DIAL_RSP && pkt.random === random) {
          if (pkt.error) return done(new TunnelDialError(address, pkt.error));
          socket.established(pkt.connectID);
          done();
        } else if (pkt.type === PacketType.DIAL_CLS && pkt.random === random) {
          done(new TunnelDialError(address, 'dial closed by the proxy'));
        }
      };
      const timer = setTimeout(() => {
        call.write({ type: PacketType.DIAL_CLS, random });
        done(new TunnelDialError(address, `no answer within ${this.dialTimeoutMs} ms`));
      }, this.dialTimeoutMs);
      call.on('data', onData);
      call.on('error', (err: Error) => done(new TunnelDialError(address, `proxy stream failed: ${(err as grpc.ServiceError).details ?? err.message}`)));
      call.on('end', () => done(new TunnelDialError(address, 'proxy closed the stream before answering')));
      call.write({ type: PacketType.DIAL_REQ, protocol: 'tcp', address, random });
    });
  }

  httpsAgent(tlsOptions: https.AgentOptions = {}): https.Agent {
    const dial = (addr: string): Promise<TunnelSocket> => this.dial(addr);
    class TunnelHttpsAgent extends https.Agent {
      override createConnection(opts: https.RequestOptions, cb?: (err: Error | null, s: Duplex) => void): undefined {
        const options = opts as https.RequestOptions & tls.ConnectionOptions;
        const host = String(options.host ?? options.hostname ?? 'localhost');
        const port = options.port ?? 443;
        dial(`${host}:${port}`).then(
          (raw) => {
            // SNI carries names only, never IP addresses.
            const servername = options.servername ?? (/^[\d.]+$|:/.test(host) ? undefined : host);
            const secure = tls.connect({ ...options, socket: raw as unknown as net.Socket, ...(servername ? { servername } : {}) });
            cb?.(null, secure);
          },
          (err: Error) => cb?.(err, undefined as unknown as Duplex),
        );
        return undefined;
      }
    }
    return new TunnelHttpsAgent({ keepAlive: true, ...tlsOptions });
  }

  httpAgent(options: http.AgentOptions = {}): http.Agent {
    const dial = (addr: string): Promise<TunnelSocket> => this.dial(addr);
    class TunnelHttpAgent extends http.Agent {
      override createConnection(opts: http.ClientRequestArgs, cb?: (err: Error | null, s: Duplex) => void): undefined {
        dial(`${opts.host ?? opts.hostname ?? 'localhost'}:${opts.port ?? 80}`).then(
          (s) => cb?.(null, s),
          (err: Error) => cb?.(err, undefined as unknown as Duplex),
        );
        return undefined;
      }
    }
    return new TunnelHttpAgent({ keepAlive: true, ...options });
  }

  undiciConnector(tlsOptions: tls.ConnectionOptions = {}): UndiciConnector {
    return (options, callback) => {
      const https = options.protocol === 'https:';
      const port = options.port === '' || options.port === undefined ? (https ? 443 : 80) : Number(options.port);
      this.dial(`${options.hostname}:${port}`).then(
        (raw) => {
          if (!https) return callback(null, raw);
          const servername = options.servername ?? (/^[\d.]+$|:/.test(options.hostname) ? undefined : options.hostname);
          const secure = tls.connect({
            ...tlsOptions,
            socket: raw as unknown as net.Socket,
            ALPNProtocols: ['http/1.1'],
            ...(servername ? { servername } : {}),
          });
          const onError = (err: Error): void => callback(err, null);
          secure.once('error', onError);
          secure.once('secureConnect', () => {
            secure.off('error', onError);
            callback(null, secure);
          });
        },
        (err: Error) => callback(err, null),
      );
    };
  }

  close(): void {
    this.client.close();
  }
}

export function createTunnelClient(opts: TunnelClientOptions): TunnelClient {
  return new GrpcTunnelClient(opts);
}
