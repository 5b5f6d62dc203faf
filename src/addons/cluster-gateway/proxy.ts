import http from 'node:http';
import https from 'node:https';
import type { Duplex } from 'node:stream';
import type { TunnelClient } from '../../tunnel/index.js';
import type { GatewayTarget } from './gateway-object.js';
import { impersonationHeaders, isIdentityHeader, type CallerIdentity, type RequestHeaderNames } from './identity.js';
import { forwardedQuery } from './routing.js';

/** Hop-by-hop headers (RFC 9110 §7.6.1) and the ones the gateway sets itself. */
const HOP_BY_HOP = new Set([
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
export function responseHeaders(res: http.IncomingMessage): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(res.headers)) {
    if (value === undefined || HOP_BY_HOP.has(name)) continue;
    out[name] = value;
  }
  return out;
}

/** Writes a 101 (or any) response head onto a raw socket, from the upstream's raw header list. */
export function rawResponseHead(statusCode: number, statusMessage: string, rawHeaders: string[]): string {
  let head = `HTTP/1.1 ${statusCode} ${statusMessage}\r\n`;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) head += `${rawHeaders[i]}: ${rawHeaders[i + 1]}\r\n`;
  return `${head}\r\n`;
}

/** Joins two upgraded connections; either side closing closes both. */
export function splice(a: Duplex, b: Duplex): void {
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
