/** The tunnel server's agent side: agents' Connect streams, the dials sent to them, and the listeners of both sides. */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type net from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { PacketType, UNRECOGNIZED, type DataPacket, type CloseResponsePacket } from './packet.js';
import {
  Header,
  agentServiceDefinition,
  proxyServiceDefinition,
  firstMetadataValue,
  type MalformedPacket,
  type TunnelServerStream,
  type WirePacket,
} from './wire.js';
import { parseAgentIdentifiers, type AgentIdentifiers } from './identifiers.js';
import { chooseAgent, type Strategy } from './strategy.js';
import { Metrics } from './metrics.js';
import { DEFAULT_TLS_PROFILE, nodeTlsOptions, type TlsProfile } from './tls-profile.js';
import { Backend, closeWithStatus, type DialBroker, type Frontend } from './backend.js';
import { GrpcFrontend } from './frontend-grpc.js';
import { serveHttpConnect } from './frontend-http.js';
import { bindGrpc, grpcServerOptions } from './grpc-tuning.js';

export const NO_AGENT_AVAILABLE = 'No agent available';

export interface ListenAddress {
  /** Bind address; 127.0.0.1 unless told otherwise. */
  host?: string;
  /** 0 = ephemeral. */
  port: number;
}

export interface ServerTLS {
  certPem: string | Buffer;
  keyPem: string | Buffer;
  /** CA whose client certificates are accepted; required (mTLS). */
  clientCaPem: string | Buffer;
}

export interface ProxyServerOptions {
  serverID?: string;
  serverCount?: number;
  /** 'grpc' (default), 'http-connect' or 'both' (then httpConnect needs its own port). */
  mode?: 'grpc' | 'http-connect' | 'both';
  strategies?: Strategy[];
  agent: ListenAddress & { tls: ServerTLS };
  /** Frontend for gRPC clients (/ProxyService/Proxy). */
  frontend?: ListenAddress & { tls: ServerTLS };
  /** Frontend for HTTP CONNECT clients; in mode 'http-connect' defaults to `frontend`'s address and TLS. */
  httpConnect?: ListenAddress & { tls: ServerTLS };
  health?: ListenAddress;
  admin?: ListenAddress;
  /** How long a dial may wait for its agent's answer. */
  dialTimeoutMs?: number;
  /** Minimum TLS version and cipher suites of every TLS listener (agent, gRPC and HTTP CONNECT frontends); default TLS 1.2. */
  tlsProfile?: TlsProfile;
  log?: (line: string) => void;
}

export interface ProxyServer {
  readonly serverID: string;
  readonly ports: { agent: number; frontend?: number; httpConnect?: number; health?: number; admin?: number };
  readonly metrics: Metrics;
  /** Agent IDs currently connected (one entry per agent connection). */
  agents(): { agentID: string; identifiers: AgentIdentifiers; draining: boolean }[];
  ready(): boolean;
  close(): Promise<void>;
}

interface PendingDial {
  frontend: Frontend;
  backend: Backend;
  address: string;
  started: number;
  timer: NodeJS.Timeout;
}

const METRIC_PREFIX = 'konnectivity_network_proxy_server';

class TunnelProxyServer implements ProxyServer, DialBroker {
  readonly serverID: string;
  readonly ports: ProxyServer['ports'] = { agent: 0 };
  readonly metrics = new Metrics(METRIC_PREFIX);
  private readonly backends = new Set<Backend>();
  private readonly pendingDials = new Map<bigint, PendingDial>();
  private readonly strategies: Strategy[];
  private readonly serverCount: number;
  private readonly dialTimeoutMs: number;
  readonly log: (line: string) => void;
  private agentServer?: grpc.Server;
  private frontendServer?: grpc.Server;
  private readonly httpServers: http.Server[] = [];
  readonly openSockets = new Set<net.Socket>();
  private closed = false;

  constructor(private readonly opts: ProxyServerOptions) {
    this.serverID = opts.serverID ?? randomUUID();
    this.serverCount = opts.serverCount ?? 1;
    this.strategies = opts.strategies ?? ['default'];
    this.dialTimeoutMs = opts.dialTimeoutMs ?? 30_000;
    this.log = opts.log ?? (() => undefined);
    this.metrics.define('ready_backend_connections', 'gauge', 'Agent connections currently registered');
    this.metrics.define('pending_backend_dials', 'gauge', 'Dials waiting for an agent answer');
    this.metrics.define('established_connections', 'gauge', 'Tunnelled connections currently open');
    this.metrics.define('dial_failure_count', 'counter', 'Dials that failed, by reason');
    this.metrics.define('dial_total', 'counter', 'Dials requested by frontends');
    this.metrics.define('grpc_connections', 'gauge', 'Open gRPC streams by method');
    this.metrics.define('http_connections', 'gauge', 'Open HTTP CONNECT connections');
    this.metrics.define('flow_pauses_total', 'counter', 'Times a connection was paused because its reader was slow');
  }

  async start(): Promise<void> {
    const o = this.opts;
    const grpcOptions = grpcServerOptions();
    this.agentServer = new grpc.Server(grpcOptions);
    this.agentServer.addService(agentServiceDefinition, { Connect: (call: TunnelServerStream) => this.onAgentConnect(call) });
    const tlsOptions = nodeTlsOptions(o.tlsProfile ?? DEFAULT_TLS_PROFILE);
    this.ports.agent = await bindGrpc(this.agentServer, o.agent, o.agent.tls, tlsOptions);

    const mode = o.mode ?? 'grpc';
    if (mode === 'grpc' || mode === 'both') {
      if (!o.frontend) throw new Error('proxy server: mode grpc needs frontend listen address and TLS');
      this.frontendServer = new grpc.Server(grpcOptions);
      this.frontendServer.addService(proxyServiceDefinition, { Proxy: (call: TunnelServerStream) => new GrpcFrontend(call, this) });
      this.ports.frontend = await bindGrpc(this.frontendServer, o.frontend, o.frontend.tls, tlsOptions);
    }
    if (mode === 'http-connect' || mode === 'both') {
      const addr = o.httpConnect ?? (mode === 'http-connect' ? o.frontend : undefined);
      if (!addr) throw new Error('proxy server: mode http-connect needs an HTTP CONNECT listen address and TLS');
      const server = https.createServer({
        cert: addr.tls.certPem,
        key: addr.tls.keyPem,
        ca: addr.tls.clientCaPem,
        requestCert: true,
        rejectUnauthorized: true,
        ...tlsOptions,
      });
      server.on('connect', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => serveHttpConnect(this, req, socket, head));
      server.on('request', (_req: http.IncomingMessage, res: http.ServerResponse) => {
        res.writeHead(405, { 'content-type': 'text/plain' }).end('this proxy only supports CONNECT\n');
      });
      this.httpServers.push(server);
      const port = await listenHttp(server, addr);
      if (mode === 'http-connect') this.ports.frontend = port;
      this.ports.httpConnect = port;
    }
    if (o.health) this.ports.health = await listenHttp(this.healthServer(), o.health);
    if (o.admin) this.ports.admin = await listenHttp(this.healthServer(), o.admin);
  }

  agents(): { agentID: string; identifiers: AgentIdentifiers; draining: boolean }[] {
    return [...this.backends].map((b) => ({ agentID: b.agentID, identifiers: b.identifiers, draining: b.draining }));
  }

  ready(): boolean {
    return this.backends.size > 0;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const s of this.openSockets) s.destroy();
    for (const b of [...this.backends]) b.call.destroy();
    const shut = (s: grpc.Server | undefined): Promise<void> =>
      new Promise((resolve) => {
        if (!s) return resolve();
        s.forceShutdown();
        resolve();
      });
    await shut(this.agentServer);
    await shut(this.frontendServer);
    await Promise.all(
      this.httpServers.map(
        (s) =>
          new Promise<void>((resolve) => {
            s.closeAllConnections?.();
            s.close(() => resolve());
          }),
      ),
    );
    for (const p of this.pendingDials.values()) clearTimeout(p.timer);
    this.pendingDials.clear();
  }

  // ------------------------------------------------------------------ agents

  private onAgentConnect(call: TunnelServerStream): void {
    const md = call.metadata;
    const ids = md.get(Header.agentID);
    if (ids.length !== 1) {
      call.emit('error', { code: grpc.status.INVALID_ARGUMENT, details: `expected exactly one agentID in metadata, got ${ids.length}` });
      return;
    }
    const agentID = String(ids[0]);
    if (agentID.includes(',')) {
      // Node's HTTP/2 joins a repeated header into one value, "a, b".
      call.emit('error', {
        code: grpc.status.INVALID_ARGUMENT,
        details: `agentID ${JSON.stringify(agentID)} holds a comma: more than one agentID was sent, or one that cannot be told apart from several`,
      });
      return;
    }
    let identifiers: AgentIdentifiers;
    try {
      identifiers = parseAgentIdentifiers(firstMetadataValue(md, Header.agentIdentifiers) ?? '');
    } catch (err) {
      call.emit('error', { code: grpc.status.INVALID_ARGUMENT, details: (err as Error).message });
      return;
    }
    const flow = firstMetadataValue(md, Header.flowControl) === '1';
    const response = new grpc.Metadata();
    response.set(Header.serverID, this.serverID);
    response.set(Header.serverCount, String(this.serverCount));
    if (flow) response.set(Header.flowControl, '1');
    call.sendMetadata(response);

    const backend = new Backend(agentID, identifiers, call, flow);
    this.backends.add(backend);
    this.metrics.add('grpc_connections', 1, { service_method: 'Connect' });
    this.metrics.set('ready_backend_connections', this.backends.size);
    this.log(`agent ${agentID} connected (${firstMetadataValue(md, Header.agentIdentifiers) ?? ''})`);

    let gone = false;
    const onGone = (why: string): void => {
      if (gone) return;
      gone = true;
      this.backends.delete(backend);
      this.metrics.add('grpc_connections', -1, { service_method: 'Connect' });
      this.metrics.set('ready_backend_connections', this.backends.size);
      this.log(`agent ${agentID} disconnected: ${why}`);
      // Fail the dials still waiting for this agent now, instead of letting them time out.
      for (const random of backend.pending) {
        const pd = this.pendingDials.get(random);
        if (!pd) continue;
        this.removePending(random);
        this.metrics.add('dial_failure_count', 1, { reason: 'backend_close' });
        pd.frontend.dialFailed(`agent ${agentID} disconnected before the dial to ${pd.address} completed`, random);
      }
      backend.pending.clear();
      for (const [connectID, f] of backend.conns) {
        this.metrics.add('established_connections', -1);
        f.remoteClosed(undefined, connectID, `agent ${agentID} disconnected`);
      }
      backend.conns.clear();
      if (!call.writableEnded) call.end();
    };
    call.on('data', (pkt: WirePacket | MalformedPacket) => {
      if (pkt.type !== 'malformed') return this.onAgentPacket(backend, pkt);
      this.log(`agent ${agentID} sent a malformed packet; closing its stream: ${pkt.reason}`);
      closeWithStatus(call, grpc.status.INVALID_ARGUMENT, pkt.reason);
    });
    call.on('end', () => onGone('stream ended'));
    call.on('error', (err: Error) => onGone(err.message));
    call.on('cancelled', () => onGone('cancelled'));
    call.on('close', () => onGone('closed'));
  }

  private onAgentPacket(backend: Backend, pkt: WirePacket): void {
    switch (pkt.type) {
      case PacketType.DIAL_RSP: {
        const pd = this.pendingDials.get(pkt.random);
        if (!pd || pd.backend !== backend) {
          this.metrics.add('dial_failure_count', 1, { reason: 'unrecognized_response' });
          this.log(
            `agent ${backend.agentID} answered dial ${pkt.random}, which it was never sent; ` +
              `${pkt.connectID !== 0n ? `asked it to close connection ${pkt.connectID}` : 'ignored'}`,
          );
          if (pkt.connectID !== 0n && !backend.conns.has(pkt.connectID)) backend.send({ type: PacketType.CLOSE_REQ, connectID: pkt.connectID });
          return;
        }
        this.removePending(pkt.random);
        if (pkt.error) {
          this.metrics.add('dial_failure_count', 1, { reason: 'error_response' });
          pd.frontend.dialFailed(pkt.error, pkt.random);
          return;
        }
        if (backend.conns.has(pkt.connectID)) {
          // Taking it would hand the open connection's bytes to this client.
          const why = `agent ${backend.agentID} answered with connection ID ${pkt.connectID}, which is already open`;
          this.metrics.add('dial_failure_count', 1, { reason: 'duplicate_connection_id' });
          this.log(`${why}; failed the dial to ${pd.address}`);
          pd.frontend.dialFailed(why, pkt.random);
          return;
        }
        backend.conns.set(pkt.connectID, pd.frontend);
        this.metrics.add('established_connections', 1);
        pd.frontend.dialSucceeded(pkt as WirePacket & { type: 1 });
        return;
      }
      case PacketType.DIAL_CLS: {
        const pd = this.pendingDials.get(pkt.random);
        if (!pd || pd.backend !== backend) return;
        this.removePending(pkt.random);
        this.metrics.add('dial_failure_count', 1, { reason: 'backend_close' });
        pd.frontend.dialFailed('dial closed by the agent', pkt.random);
        return;
      }
      case PacketType.DATA: {
        const f = backend.conns.get(pkt.connectID);
        if (!f) {
          if (pkt.connectID !== 0n) backend.send({ type: PacketType.CLOSE_REQ, connectID: pkt.connectID });
          return;
        }
        if (!f.deliver(pkt as WirePacket & DataPacket)) this.throttleAgentSide(backend, f, pkt.connectID);
        return;
      }
      case PacketType.CLOSE_RSP: {
        const f = backend.conns.get(pkt.connectID);
        if (!f) return;
        backend.conns.delete(pkt.connectID);
        this.metrics.add('established_connections', -1);
        f.remoteClosed(pkt as WirePacket & CloseResponsePacket, pkt.connectID);
        return;
      }
      case PacketType.DRAIN:
        backend.draining = true;
        this.log(`agent ${backend.agentID} is draining; no new dials go to it`);
        return;
      case PacketType.FLOW: {
        const f = backend.conns.get(pkt.connectID);
        if (!f) return;
        if (pkt.paused) f.pauseSource();
        else f.resumeSource();
        return;
      }
      case UNRECOGNIZED:
        if (!backend.warnedUnrecognized) {
          backend.warnedUnrecognized = true;
          this.log(`agent ${backend.agentID} sent a packet of unknown type ${pkt.declaredType}; ignored (logged once per agent stream)`);
        }
        return;
      default:
        return;
    }
  }

  /**
   * The client of `f` reads slower than its agent sends. Peers that speak FLOW
   * pause just that connection; others get their whole stream paused until the
   * client catches up, which bounds memory at the cost of stalling that agent.
   */
  private throttleAgentSide(backend: Backend, f: Frontend, connectID: bigint): void {
    this.metrics.add('flow_pauses_total');
    if (backend.flowControl) {
      backend.send({ type: PacketType.FLOW, connectID, paused: true });
      f.onceWritable(() => {
        if (backend.conns.get(connectID) === f) backend.send({ type: PacketType.FLOW, connectID, paused: false });
      });
      return;
    }
    backend.blockedBy++;
    if (backend.blockedBy === 1) backend.call.pause();
    f.onceWritable(() => {
      backend.blockedBy--;
      if (backend.blockedBy === 0) backend.call.resume();
    });
  }

  private removePending(random: bigint): PendingDial | undefined {
    const pd = this.pendingDials.get(random);
    if (!pd) return undefined;
    clearTimeout(pd.timer);
    this.pendingDials.delete(random);
    pd.backend.pending.delete(random);
    this.metrics.set('pending_backend_dials', this.pendingDials.size);
    return pd;
  }

  /** Sends a DIAL_REQ to a chosen agent, or returns an error message. */
  startDial(frontend: Frontend, address: string, random: bigint, raw: Buffer | undefined): Backend | string {
    this.metrics.add('dial_total');
    const backend = chooseAgent([...this.backends], address, this.strategies);
    if (!backend) {
      this.metrics.add('dial_failure_count', 1, { reason: 'no_agent' });
      return NO_AGENT_AVAILABLE;
    }
    if (this.pendingDials.has(random)) return `dial ID ${random} is already in use`;
    const timer = setTimeout(() => {
      const pd = this.removePending(random);
      if (!pd) return;
      this.metrics.add('dial_failure_count', 1, { reason: 'backend_dial_timeout' });
      backend.send({ type: PacketType.DIAL_CLS, random });
      pd.frontend.dialFailed(`timed out after ${this.dialTimeoutMs} ms waiting for agent ${backend.agentID} to dial ${address}`, random);
    }, this.dialTimeoutMs);
    this.pendingDials.set(random, { frontend, backend, address, started: Date.now(), timer });
    backend.pending.add(random);
    this.metrics.set('pending_backend_dials', this.pendingDials.size);
    backend.send(raw ?? { type: PacketType.DIAL_REQ, protocol: 'tcp', address, random });
    return backend;
  }

  /** The client went away or cancelled: tell the agent to drop whatever it holds for it. */
  abandon(backend: Backend | undefined, random: bigint | undefined, connectID: bigint | undefined): void {
    if (!backend) return;
    if (random !== undefined && this.removePending(random)) {
      this.metrics.add('dial_failure_count', 1, { reason: 'frontend_close' });
      backend.send({ type: PacketType.DIAL_CLS, random });
    }
    if (connectID !== undefined && backend.conns.has(connectID)) {
      backend.conns.delete(connectID);
      this.metrics.add('established_connections', -1);
      backend.send({ type: PacketType.CLOSE_REQ, connectID });
    }
  }

  // ------------------------------------------------------------------ health and metrics

  private healthServer(): http.Server {
    const server = http.createServer((req, res) => {
      const url = (req.url ?? '/').split('?')[0];
      if (url === '/healthz') {
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      } else if (url === '/readyz' || url === '/ready') {
        if (this.ready()) res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
        else res.writeHead(500, { 'content-type': 'text/plain' }).end('not ready: no agent is connected');
      } else if (url === '/metrics') {
        res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(this.metrics.render());
      } else {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      }
    });
    this.httpServers.push(server);
    return server;
  }
}

function listenHttp(server: http.Server | https.Server, addr: ListenAddress): Promise<number> {
  return new Promise((resolve, reject) => {
    const host = addr.host ?? '127.0.0.1';
    server.once('error', (err) => reject(new Error(`cannot listen on ${host}:${addr.port}: ${err.message}`)));
    server.listen(addr.port, host, () => {
      const a = server.address();
      resolve(typeof a === 'object' && a ? a.port : addr.port);
    });
  });
}

export async function startProxyServer(opts: ProxyServerOptions): Promise<ProxyServer> {
  const s = new TunnelProxyServer(opts);
  try {
    await s.start();
  } catch (err) {
    await s.close();
    throw err;
  }
  return s;
}
