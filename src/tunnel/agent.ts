import net from 'node:net';
import tls from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { DialTargetError, checkDialTarget } from './dial-target.js';
import { PacketType, UNRECOGNIZED } from './packet.js';
import { CONNECT_METHOD, Header, MAX_MESSAGE_BYTES, deserialize, firstMetadataValue, serialize, type TunnelClientStream, type WirePacket } from './wire.js';
import { formatAgentIdentifiers, type AgentIdentifiers } from './identifiers.js';

export interface ProxyAgentOptions {
  proxyServerHost: string;
  proxyServerPort: number;
  agentID: string;
  /** URL-query text (`host=cluster1&host=cluster1.ns`) or its parts. */
  agentIdentifiers?: string | Partial<AgentIdentifiers>;
  tls: {
    certPem: string | Buffer;
    keyPem: string | Buffer;
    caPem: string | Buffer;
    /** Name checked in the server certificate; defaults to proxyServerHost. */
    servername?: string;
  };
  /** Dial targets rewritten before dialing: `{'cluster1:443': '10.0.0.2:6443'}`. */
  hostMappings?: Record<string, string>;
  /** Wait between connection attempts: starts at initialMs, doubles on failure up to capMs, ±20% jitter (DEFAULT_BACKOFF). */
  backoff?: { initialMs?: number; capMs?: number };
  dialTimeoutMs?: number;
  log?: (line: string) => void;
}

/**
 * Reconnection: the first attempt after a lost server within 240 ms, and never
 * more than 1.2 s apart while the server is away, so a tunnel is back within
 * 2 s of its server with room for the handshake on a busy machine (a 1.5 s cap,
 * up to 1.8 s with jitter, left too little: test/faults/tunnel.test.ts).
 * Upstream's agent defaults to 1 s doubling up to 10 s.
 */
export const DEFAULT_BACKOFF = { initialMs: 200, capMs: 1000 } as const;

/** The wait before attempt `failures + 1`: initialMs doubled per failure, capped, ±20% jitter. */
export function reconnectDelay(failures: number, backoff: { initialMs?: number; capMs?: number } = {}, random: () => number = Math.random): number {
  const initial = backoff.initialMs ?? DEFAULT_BACKOFF.initialMs;
  const cap = backoff.capMs ?? DEFAULT_BACKOFF.capMs;
  const base = Math.min(cap, initial * 2 ** Math.min(failures, 20));
  return Math.round(base * (0.8 + random() * 0.4));
}

/**
 * A server name for TLS when the server is dialled by IP address: RFC 6066
 * allows no address as SNI (Node warns, DEP0123; Go sends none), and grpc-js
 * always sends one, so this reserved name stands in while the certificate is
 * still checked against the address.
 */
const SNI_FOR_ADDRESS = 'proxy-server.invalid';

export interface ProxyAgent {
  readonly agentID: string;
  /** IDs of the proxy servers this agent holds a tunnel to. */
  connectedServerIDs(): string[];
  /** The serverCount the servers announced (1 until one answered). */
  desiredServerCount(): number;
  /** Tunnelled TCP connections currently open. */
  activeConnections(): number;
  /** Resolves once `count` distinct servers are connected. */
  waitForServers(count: number, timeoutMs?: number): Promise<void>;
  /** Tells every server to stop sending new dials here; open connections continue. */
  drain(): void;
  close(): Promise<void>;
}

interface Endpoint {
  socket: net.Socket;
  /** Paused because the server asked (FLOW) or because our stream to it is full. */
  pausedByServer: boolean;
  pausedByStream: boolean;
}

/** One tunnel to one proxy server. */
class ServerLink {
  readonly endpoints = new Map<bigint, Endpoint>();
  /** Dials in progress, by dial ID; value is the socket being connected. */
  readonly dialing = new Map<bigint, net.Socket>();
  private nextConnID = 0n;
  private readonly streamBlocked = new Set<Endpoint>();
  private socketsBlocking = 0;
  serverID = '';
  serverCount = 1;
  flowControl = false;
  private closed = false;
  private warnedUnrecognized = false;

  constructor(
    private readonly agent: TunnelProxyAgent,
    readonly client: grpc.Client,
    readonly call: TunnelClientStream,
  ) {
    call.on('drain', () => {
      for (const ep of this.streamBlocked) {
        ep.pausedByStream = false;
        if (!ep.pausedByServer) ep.socket.resume();
      }
      this.streamBlocked.clear();
    });
  }

  send(p: Parameters<TunnelClientStream['write']>[0]): boolean {
    if (this.closed || this.call.destroyed || this.call.writableEnded) return true;
    return this.call.write(p);
  }

  onPacket(pkt: WirePacket): void {
    switch (pkt.type) {
      case PacketType.DIAL_REQ:
        this.dial(pkt.protocol, pkt.address, pkt.random);
        return;
      case PacketType.DATA: {
        const ep = this.endpoints.get(pkt.connectID);
        if (!ep) {
          if (pkt.connectID !== 0n) this.send({ type: PacketType.CLOSE_RSP, connectID: pkt.connectID, error: 'unrecognized connectID' });
          return;
        }
        if (!ep.socket.write(pkt.data)) this.throttleServerSide(ep, pkt.connectID);
        return;
      }
      case PacketType.CLOSE_REQ: {
        const ep = this.endpoints.get(pkt.connectID);
        if (!ep) {
          this.send({ type: PacketType.CLOSE_RSP, connectID: pkt.connectID, error: 'Unknown connectID' });
          return;
        }
        this.endpoints.delete(pkt.connectID);
        this.send({ type: PacketType.CLOSE_RSP, connectID: pkt.connectID, error: '' });
        // Flush what the client wrote before closing, then release the socket.
        ep.socket.end(() => ep.socket.destroy());
        ep.socket.resume();
        setTimeout(() => ep.socket.destroy(), 10_000).unref();
        return;
      }
      case PacketType.DIAL_CLS: {
        // The client gave up on a dial: drop the socket whether or not it connected yet.
        const sock = this.dialing.get(pkt.random);
        if (sock) {
          this.dialing.delete(pkt.random);
          sock.destroy();
        }
        return;
      }
      case PacketType.FLOW: {
        const ep = this.endpoints.get(pkt.connectID);
        if (!ep) return;
        ep.pausedByServer = pkt.paused;
        if (pkt.paused) ep.socket.pause();
        else if (!ep.pausedByStream) ep.socket.resume();
        return;
      }
      case UNRECOGNIZED:
        if (!this.warnedUnrecognized) {
          this.warnedUnrecognized = true;
          this.agent.log(
            `agent ${this.agent.agentID}: proxy server ${this.serverID} sent a packet of unknown type ${pkt.declaredType}; ` +
              'ignored (logged once per server connection)',
          );
        }
        return;
      default:
        return;
    }
  }

  /** The target reads slower than the client sends. */
  private throttleServerSide(ep: Endpoint, connectID: bigint): void {
    if (this.flowControl) {
      this.send({ type: PacketType.FLOW, connectID, paused: true });
      ep.socket.once('drain', () => {
        if (this.endpoints.get(connectID) === ep) this.send({ type: PacketType.FLOW, connectID, paused: false });
      });
      return;
    }
    // An upstream server cannot pause one connection: stop reading the tunnel until the target catches up.
    this.socketsBlocking++;
    if (this.socketsBlocking === 1) this.call.pause();
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      this.socketsBlocking--;
      if (this.socketsBlocking === 0) this.call.resume();
    };
    ep.socket.once('drain', release);
    ep.socket.once('close', release);
  }

  private dial(protocol: string, address: string, random: bigint): void {
    const target = this.agent.mapAddress(address);
    let dest: { host: string; port: number };
    try {
      dest = checkDialTarget(protocol, target);
    } catch (err) {
      if (!(err instanceof DialTargetError)) throw err;
      this.agent.log(`agent ${this.agent.agentID}: refused a dial from proxy server ${this.serverID}: ${err.message}`);
      this.send({ type: PacketType.DIAL_RSP, random, connectID: 0n, error: err.message });
      return;
    }
    const socket = net.connect({ host: dest.host, port: dest.port, noDelay: true });
    this.dialing.set(random, socket);
    const timer = setTimeout(() => socket.destroy(new Error(`dial tcp ${target}: timed out after ${this.agent.dialTimeoutMs} ms`)), this.agent.dialTimeoutMs);
    const onError = (err: Error): void => {
      clearTimeout(timer);
      if (this.dialing.get(random) !== socket) return; // cancelled by DIAL_CLS
      this.dialing.delete(random);
      this.send({ type: PacketType.DIAL_RSP, random, connectID: 0n, error: `dial tcp ${target}: ${err.message}` });
    };
    socket.once('error', onError);
    socket.once('close', () => {
      if (this.dialing.get(random) === socket) onError(new Error('connection closed while dialing'));
    });
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.off('error', onError);
      if (this.dialing.get(random) !== socket || this.closed) {
        socket.destroy();
        return;
      }
      this.dialing.delete(random);
      const connectID = ++this.nextConnID;
      const ep: Endpoint = { socket, pausedByServer: false, pausedByStream: false };
      this.endpoints.set(connectID, ep);
      this.agent.connectionOpened();
      this.send({ type: PacketType.DIAL_RSP, random, connectID, error: '' });
      socket.on('data', (chunk: Buffer) => {
        if (this.endpoints.get(connectID) !== ep) return;
        if (!this.send({ type: PacketType.DATA, connectID, error: '', data: chunk })) {
          ep.pausedByStream = true;
          socket.pause();
          this.streamBlocked.add(ep);
        }
      });
      socket.on('error', () => undefined);
      socket.on('close', () => {
        this.agent.connectionClosed();
        this.streamBlocked.delete(ep);
        if (this.endpoints.get(connectID) === ep) {
          this.endpoints.delete(connectID);
          // Unsolicited CLOSE_RSP: the remote end closed.
          this.send({ type: PacketType.CLOSE_RSP, connectID, error: '' });
        }
      });
      socket.on('end', () => socket.end());
    });
  }

  /** The tunnel is gone: release every socket it carried. */
  shutdown(): void {
    if (this.closed) return;
    this.closed = true;
    for (const s of this.dialing.values()) s.destroy();
    this.dialing.clear();
    for (const ep of this.endpoints.values()) ep.socket.destroy();
    this.endpoints.clear();
    if (!this.call.destroyed) this.call.cancel();
    this.client.close();
  }
}

class TunnelProxyAgent implements ProxyAgent {
  readonly agentID: string;
  readonly dialTimeoutMs: number;
  private readonly identifiers: string;
  private readonly links = new Map<string, ServerLink>();
  private serverCount = 1;
  private closed = false;
  private draining = false;
  private active = 0;
  private loopTimer: NodeJS.Timeout | undefined;
  private attempt: Promise<void> | undefined;
  private failures = 0;
  private readonly waiters = new Set<() => void>();
  readonly log: (line: string) => void;
  private readonly creds: grpc.ChannelCredentials;

  constructor(private readonly opts: ProxyAgentOptions) {
    this.agentID = opts.agentID;
    this.dialTimeoutMs = opts.dialTimeoutMs ?? 10_000;
    this.identifiers = typeof opts.agentIdentifiers === 'string' ? opts.agentIdentifiers : formatAgentIdentifiers(opts.agentIdentifiers ?? {});
    this.log = opts.log ?? (() => undefined);
    const address = opts.tls.servername ? null : net.isIP(opts.proxyServerHost) ? opts.proxyServerHost : null;
    this.creds = grpc.credentials.createSsl(
      Buffer.from(opts.tls.caPem),
      Buffer.from(opts.tls.keyPem),
      Buffer.from(opts.tls.certPem),
      address ? { checkServerIdentity: (_name, cert) => tls.checkServerIdentity(address, cert) } : undefined,
    );
  }

  mapAddress(address: string): string {
    return this.opts.hostMappings?.[address] ?? address;
  }

  connectionOpened(): void {
    this.active++;
  }

  connectionClosed(): void {
    this.active--;
  }

  connectedServerIDs(): string[] {
    return [...this.links.keys()];
  }

  desiredServerCount(): number {
    return this.serverCount;
  }

  activeConnections(): number {
    return this.active;
  }

  start(): void {
    this.schedule(0);
  }

  waitForServers(count: number, timeoutMs = 30_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (this.links.size >= count) {
          this.waiters.delete(check);
          clearTimeout(timer);
          resolve();
        }
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`agent ${this.agentID}: connected to ${this.links.size} of ${count} proxy servers at ${this.target()} after ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.add(check);
      check();
    });
  }

  drain(): void {
    if (this.draining) return;
    this.draining = true;
    for (const link of this.links.values()) link.send({ type: PacketType.DRAIN });
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.loopTimer) clearTimeout(this.loopTimer);
    for (const link of this.links.values()) link.shutdown();
    this.links.clear();
    await this.attempt?.catch(() => undefined);
  }

  private target(): string {
    const h = this.opts.proxyServerHost;
    return `${h.includes(':') ? `[${h}]` : h}:${this.opts.proxyServerPort}`;
  }

  private schedule(ms: number): void {
    if (this.closed) return;
    if (this.loopTimer) clearTimeout(this.loopTimer);
    this.loopTimer = setTimeout(() => this.sync(), ms);
  }

  private nextDelay(): number {
    return reconnectDelay(this.failures, this.opts.backoff);
  }

  private get capMs(): number {
    return this.opts.backoff?.capMs ?? DEFAULT_BACKOFF.capMs;
  }

  /** Keeps `serverCount` distinct servers connected; one attempt at a time. */
  private sync(): void {
    if (this.closed || this.attempt) return;
    if (this.links.size >= this.serverCount) {
      this.schedule(this.capMs);
      return;
    }
    this.attempt = this.connectOnce()
      .then((result) => {
        if (result === 'duplicate') this.failures++;
        else this.failures = 0;
      })
      .catch((err: unknown) => {
        this.failures++;
        this.log(`agent ${this.agentID}: cannot connect to proxy server ${this.target()}: ${(err as Error).message}`);
      })
      .finally(() => {
        this.attempt = undefined;
        const more = this.links.size < this.serverCount;
        this.schedule(more ? (this.failures === 0 ? 0 : this.nextDelay()) : this.capMs);
      });
  }

  private connectOnce(): Promise<'connected' | 'duplicate'> {
    const servername = this.opts.tls.servername ?? (net.isIP(this.opts.proxyServerHost) ? undefined : this.opts.proxyServerHost);
    const client = new grpc.Client(this.target(), this.creds, {
      // A fresh TCP connection per attempt, so a load balancer may lead us to another server.
      'grpc.use_local_subchannel_pool': 1,
      ...(servername
        ? { 'grpc.ssl_target_name_override': servername, 'grpc.default_authority': servername }
        : { 'grpc.ssl_target_name_override': SNI_FOR_ADDRESS }),
      'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
      'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
      'grpc.keepalive_time_ms': 30_000,
      'grpc.keepalive_timeout_ms': 20_000,
      'grpc.initial_reconnect_backoff_ms': 1000,
      'grpc-node.flow_control_window': 4 * 1024 * 1024,
    } as grpc.ChannelOptions);
    const md = new grpc.Metadata();
    md.set(Header.agentID, this.agentID);
    md.set(Header.agentIdentifiers, this.identifiers);
    md.set(Header.flowControl, '1');
    const call = client.makeBidiStreamRequest(CONNECT_METHOD, serialize, deserialize, md) as TunnelClientStream;
    const link = new ServerLink(this, client, call);
    return new Promise((resolve, reject) => {
      let settled = false;
      const timer = setTimeout(() => fail(new Error('no answer within 15 s')), 15_000);
      const fail = (err: Error): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        link.shutdown();
        reject(err);
      };
      call.on('metadata', (m: grpc.Metadata) => {
        if (settled) return;
        const serverID = firstMetadataValue(m, Header.serverID);
        const count = Number.parseInt(firstMetadataValue(m, Header.serverCount) ?? '', 10);
        if (!serverID) return fail(new Error('server sent no serverID header'));
        settled = true;
        clearTimeout(timer);
        if (Number.isInteger(count) && count > 0) this.serverCount = count;
        if (this.links.has(serverID) || this.closed) {
          link.shutdown();
          resolve('duplicate');
          return;
        }
        link.serverID = serverID;
        link.flowControl = firstMetadataValue(m, Header.flowControl) === '1';
        this.links.set(serverID, link);
        this.log(`agent ${this.agentID}: connected to proxy server ${serverID} (${this.links.size}/${this.serverCount})`);
        if (this.draining) link.send({ type: PacketType.DRAIN });
        for (const w of [...this.waiters]) w();
        resolve('connected');
      });
      call.on('data', (pkt: WirePacket) => link.onPacket(pkt));
      const lost = (why: string): void => {
        if (!settled) return fail(new Error(why));
        if (this.links.get(link.serverID) === link) {
          this.links.delete(link.serverID);
          this.log(`agent ${this.agentID}: lost proxy server ${link.serverID}: ${why}`);
          link.shutdown();
          this.failures = 0;
          this.schedule(this.nextDelay());
        }
      };
      call.on('error', (err: Error) => lost(err.message));
      call.on('end', () => lost('stream ended'));
      call.on('close', () => lost('stream closed'));
    });
  }
}

export async function startProxyAgent(opts: ProxyAgentOptions): Promise<ProxyAgent> {
  if (!opts.agentID) throw new Error('proxy agent: agentID must not be empty');
  const a = new TunnelProxyAgent(opts);
  a.start();
  return a;
}
