import http from 'node:http';
import https from 'node:https';
import type { Duplex } from 'node:stream';
import { TunnelDialError, type TunnelClient } from '../../tunnel/index.js';
import type { GatewayTarget } from './gateway-object.js';
import type { GatewayStore } from './gateway-store.js';
import { distinctHeaders, impersonationHeaders, isIdentityHeader, type CallerIdentity, type RequestHeaderNames } from './identity.js';
import { notFound, sendStatus, socketStatus } from './responses.js';
import { forwardedQuery } from './routing.js';
import type { TunnelSource } from './tunnel-source.js';
import { HOP_BY_HOP } from '../cluster-proxy/http-forward.js';

/** The managed cluster's API server names this in its certificate whatever address reaches it. */
export const CLUSTER_PROXY_SERVER_NAME = 'kubernetes.default.svc';

export interface ProxyOptions {
  /** Pass the caller's hub identity as Impersonate-* headers (ClientIdentityPenetration). */
  identityPenetration: boolean;
  headerNames: RequestHeaderNames;
}

/**
 * The request headers sent to the managed cluster: the client's own, less hop-by-hop and
 * identity headers; the gateway's credential; with penetration, the caller as Impersonate-*.
 */
export function outgoingHeaders(
  incoming: Record<string, string[] | undefined>,
  target: GatewayTarget,
  caller: CallerIdentity,
  options: ProxyOptions,
  upgrade: boolean,
): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, values] of Object.entries(incoming)) {
    if (!values || HOP_BY_HOP.has(name) || isIdentityHeader(name, options.headerNames)) continue;
    out[name] = values.length === 1 ? values[0]! : values;
  }
  if (upgrade) {
    out.connection = 'Upgrade';
    const up = incoming.upgrade?.[0];
    if (up) out.upgrade = up;
  }
  if (target.credentialType === 'ServiceAccountToken' && target.token) out.authorization = `Bearer ${target.token}`;
  if (options.identityPenetration) Object.assign(out, impersonationHeaders(caller));
  return out;
}

/** Path and query on the managed cluster: the endpoint's own path prefix, then the proxied path. */
export function upstreamPath(target: GatewayTarget, path: string, rawQuery: string): string {
  const prefix = new URL(target.endpoint).pathname.replace(/\/+$/, '');
  const query = forwardedQuery(rawQuery);
  return `${prefix}${path.startsWith('/') ? path : `/${path}`}${query ? `?${query}` : ''}`;
}

/**
 * Keep-alive agents per gateway (per version of its credentials): direct for Const,
 * through the cluster-proxy tunnel for ClusterProxy. Connections are reused across
 * requests, so a request pays no new tunnel dial or TLS handshake (seed 004's lesson).
 */
export class UpstreamAgents {
  private readonly agents = new Map<string, { target: GatewayTarget; key: string; agent: https.Agent }>();

  constructor(private readonly tunnel: () => Promise<TunnelClient>) {}

  async agentFor(target: GatewayTarget): Promise<https.Agent> {
    const have = this.agents.get(target.name);
    // The store replaces a target object only when its Secret changed: same object, same agent.
    if (have?.target === target) return have.agent;
    const key = JSON.stringify([target.endpointType, target.endpoint, target.caPem ?? '', target.certPem ?? '', target.keyPem ?? '', target.insecure]);
    if (have?.key === key) {
      have.target = target;
      return have.agent;
    }
    have?.agent.destroy();
    const tls: https.AgentOptions = {
      keepAlive: true,
      maxSockets: 64,
      ...(target.caPem ? { ca: target.caPem } : {}),
      ...(target.certPem && target.keyPem ? { cert: target.certPem, key: target.keyPem } : {}),
      rejectUnauthorized: !target.insecure,
    };
    const agent =
      target.endpointType === 'ClusterProxy'
        ? (await this.tunnel()).httpsAgent({ ...tls, ...(target.caPem ? { servername: CLUSTER_PROXY_SERVER_NAME } : {}) })
        : new https.Agent(tls);
    this.agents.set(target.name, { target, key, agent });
    return agent;
  }

  /** Forgets every agent (the tunnel client was replaced). */
  reset(): void {
    for (const { agent } of this.agents.values()) agent.destroy();
    this.agents.clear();
  }

  forget(name: string): void {
    this.agents.get(name)?.agent.destroy();
    this.agents.delete(name);
  }
}

export interface UpstreamRequest {
  target: GatewayTarget;
  method: string;
  path: string;
  headers: Record<string, string | string[]>;
  agent: https.Agent;
}

export function openUpstream(u: UpstreamRequest): http.ClientRequest {
  const url = new URL(u.target.endpoint);
  return https.request({
    method: u.method,
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port || 443,
    path: u.path,
    headers: u.headers,
    agent: u.agent,
  });
}

/** Response headers passed back to the client (hop-by-hop ones dropped). */
function responseHeaders(res: http.IncomingMessage): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(res.headers)) {
    if (value === undefined || HOP_BY_HOP.has(name)) continue;
    out[name] = value;
  }
  return out;
}

/** Writes a 101 (or any) response head onto a raw socket, from the upstream's raw header list. */
function rawResponseHead(statusCode: number, statusMessage: string, rawHeaders: string[]): string {
  let head = `HTTP/1.1 ${statusCode} ${statusMessage}\r\n`;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) head += `${rawHeaders[i]}: ${rawHeaders[i + 1]}\r\n`;
  return `${head}\r\n`;
}

/** Joins two upgraded connections; either side closing closes both. */
function splice(a: Duplex, b: Duplex): void {
  a.pipe(b);
  b.pipe(a);
  const close = () => {
    a.destroy();
    b.destroy();
  };
  a.on('error', close);
  b.on('error', close);
  a.on('close', close);
  b.on('close', close);
}

function tunnelTrouble(err: Error): boolean {
  return err instanceof TunnelDialError ? /proxy stream failed|closed the stream/.test(err.reason) : /tunnel to .* broke/.test(err.message);
}

export interface GatewayProxyParts {
  store: GatewayStore;
  agents: UpstreamAgents;
  /** Dropped when a request finds the tunnel broken. */
  tunnel: Pick<TunnelSource, 'invalidate'>;
  /** Pass the caller's hub identity to the cluster as Impersonate-* headers. */
  identityPenetration: boolean;
  /** The front proxy's header names, as last loaded. */
  headerNames: () => RequestHeaderNames;
}

/** The `proxy` subresource: plain and upgrade requests passed to the cluster behind a ClusterGateway. */
export class GatewayProxy {
  constructor(private readonly p: GatewayProxyParts) {}

  /**
   * The request to the cluster behind ClusterGateway `name`, with its credential and the
   * caller's identity as configured; or why there is none, as a Status to send.
   */
  private async upstreamFor(
    req: http.IncomingMessage,
    name: string,
    path: string,
    rawQuery: string,
    identity: CallerIdentity,
    upgrade: boolean,
  ): Promise<{ target: GatewayTarget; upstream: ReturnType<typeof openUpstream> } | [number, string, string]> {
    const entry = this.p.store.get(name);
    if (!entry) return [404, 'NotFound', notFound(name)[2]];
    const target = entry.target;
    let agent;
    try {
      agent = await this.p.agents.agentFor(target);
    } catch (err) {
      return [503, 'ServiceUnavailable', `cannot reach cluster ${name} through cluster-proxy: ${(err as Error).message}`];
    }
    const headers = outgoingHeaders(
      distinctHeaders(req as http.IncomingMessage & { headersDistinct?: Record<string, string[]> }),
      target,
      identity,
      { identityPenetration: this.p.identityPenetration, headerNames: this.p.headerNames() },
      upgrade,
    );
    return { target, upstream: openUpstream({ target, method: req.method ?? 'GET', path: upstreamPath(target, path, rawQuery), headers, agent }) };
  }

  async plain(req: http.IncomingMessage, res: http.ServerResponse, name: string, path: string, rawQuery: string, identity: CallerIdentity): Promise<void> {
    const opened = await this.upstreamFor(req, name, path, rawQuery, identity, false);
    if (Array.isArray(opened)) return opened[0] === 404 ? sendStatus(res, ...notFound(name)) : sendStatus(res, ...opened);
    const { target, upstream } = opened;
    upstream.on('response', (up) => {
      res.writeHead(up.statusCode ?? 502, up.statusMessage, responseHeaders(up));
      // A stream (watch, logs -f) has no length: its headers go out now, not with a first event
      // that may be minutes away. A sized answer goes out in one write with its body.
      if (up.headers['content-length'] === undefined) res.flushHeaders();
      up.pipe(res);
      up.on('error', () => res.destroy());
    });
    upstream.on('error', (err) => {
      if (tunnelTrouble(err)) this.p.tunnel.invalidate();
      if (!res.headersSent) sendStatus(res, 502, 'ServiceUnavailable', `the request to cluster ${name} (${target.endpointType}) failed: ${err.message}`);
      else res.destroy();
    });
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  }

  async upgrade(
    req: http.IncomingMessage,
    socket: Duplex,
    head: Buffer,
    name: string,
    path: string,
    rawQuery: string,
    identity: CallerIdentity,
  ): Promise<void> {
    const opened = await this.upstreamFor(req, name, path, rawQuery, identity, true);
    if (Array.isArray(opened)) return socketStatus(socket, ...opened);
    const { upstream } = opened;
    upstream.on('upgrade', (up, upSocket, upHead) => {
      socket.write(rawResponseHead(up.statusCode ?? 101, up.statusMessage ?? 'Switching Protocols', up.rawHeaders));
      if (upHead.length) socket.write(upHead);
      if (head.length) upSocket.write(head);
      splice(socket, upSocket);
    });
    upstream.on('response', (up) => {
      // The cluster refused the upgrade: pass its answer on, then close (the body is sent decoded).
      const pairs: string[] = [];
      for (let i = 0; i + 1 < up.rawHeaders.length; i += 2) {
        if (!/^(connection|transfer-encoding|keep-alive)$/i.test(up.rawHeaders[i]!)) pairs.push(up.rawHeaders[i]!, up.rawHeaders[i + 1]!);
      }
      socket.write(rawResponseHead(up.statusCode ?? 502, up.statusMessage ?? '', [...pairs, 'connection', 'close']));
      up.pipe(socket);
    });
    upstream.on('error', (err) => {
      if (tunnelTrouble(err)) this.p.tunnel.invalidate();
      socketStatus(socket, 502, 'ServiceUnavailable', `the upgrade request to cluster ${name} failed: ${err.message}`);
    });
    socket.on('error', () => upstream.destroy());
    upstream.end();
  }
}
