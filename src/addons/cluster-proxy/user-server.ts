import http from 'node:http';
import https from 'node:https';
import type { Duplex } from 'node:stream';
import { listen } from '../../util/listen.js';
import { nodeTlsOptions, type TlsProfile } from '../../tunnel/tls-profile.js';
import type { TunnelClient } from '../../tunnel/index.js';
import { endToEndHeaders, forwardRequest, forwardUpgrade, socketError, type HopTarget } from './http-forward.js';
import {
  parseUserRequest,
  serviceProxyHost,
  SERVICE_PROXY_PORT,
  TARGET_HEADERS,
  targetHeaders,
  UserRequestError,
  type UserRequestTarget,
} from './service-routing.js';

export interface UserServerOptions {
  /** A tunnel client of the hub's proxy-server (the `proxy-client` certificate). */
  tunnel: TunnelClient;
  /** The CA the service proxies' serving certificates are verified against (the signer's, `proxy-server-ca`). */
  serviceProxyCaPem: string;
  serving: { certPem: string; keyPem: string };
  tlsProfile: TlsProfile;
  port: number;
  host?: string;
  log?: (line: string) => void;
}

export interface UserServer {
  port: number;
  close(): Promise<void>;
}

/** Why a tunnelled hop failed, in words a user can act on. */
function hopFailure(cluster: string, err: Error): string {
  if (/No agent available/i.test(err.message)) {
    return (
      `cluster ${cluster}: no cluster-proxy agent with the service proxy is connected ` +
      '(is the addon Available there, and spec.userServer set on ManagedProxyConfiguration cluster-proxy?)'
    );
  }
  return `proxy to cluster ${cluster} failed: ${err.message}`;
}

/**
 * cluster-proxy's user server: an HTTPS endpoint on the hub that takes
 * `/<cluster>/…` requests (see parseUserRequest), opens a connection through the tunnel
 * to that cluster's service proxy and forwards the request there with the target in the
 * `Cluster-Proxy-*` headers. The caller's Authorization goes on unchanged: the service
 * proxy and the cluster decide what it may do.
 */
export async function startUserServer(opts: UserServerOptions): Promise<UserServer> {
  const log = opts.log ?? (() => undefined);
  // TLS to the service proxy is end to end through the tunnel, verified as its host name.
  const agent = opts.tunnel.httpsAgent({ ca: opts.serviceProxyCaPem, keepAlive: true });

  const route = (req: http.IncomingMessage): { t: UserRequestTarget; hop: HopTarget } => {
    const t = parseUserRequest(req.url ?? '/');
    const headers = endToEndHeaders(req.headers);
    for (const name of Object.values(TARGET_HEADERS)) delete headers[name.toLowerCase()];
    Object.assign(headers, targetHeaders(t));
    const path = `${t.path}${t.query ? `?${t.query}` : ''}`;
    return { t, hop: { protocol: 'https:', host: serviceProxyHost(t.cluster), port: SERVICE_PROXY_PORT, path, headers, agent } };
  };
  const describe = (req: http.IncomingMessage, t: UserRequestTarget) =>
    `${req.method} ${t.cluster} ${t.kind === 'service' ? `${t.proto}:${t.namespace}/${t.service}:${t.port}` : 'kube-apiserver'} ${t.path}`;

  const server = https.createServer({ cert: opts.serving.certPem, key: opts.serving.keyPem, ...nodeTlsOptions(opts.tlsProfile) }, (req, res) => {
    let routed: ReturnType<typeof route>;
    try {
      routed = route(req);
    } catch (err) {
      if (!(err instanceof UserRequestError)) throw err;
      res.writeHead(400, { 'content-type': 'text/plain; charset=utf-8' }).end(`${err.message}\n`);
      return;
    }
    res.on('finish', () => log(`${describe(req, routed.t)} → ${res.statusCode}`));
    forwardRequest(req, res, routed.hop, (err) => {
      log(`${describe(req, routed.t)}: ${err.message}`);
      res.writeHead(502, { 'content-type': 'text/plain; charset=utf-8' }).end(`${hopFailure(routed.t.cluster, err)}\n`);
    });
  });
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    let routed: ReturnType<typeof route>;
    try {
      routed = route(req);
    } catch (err) {
      socketError(socket, 400, (err as Error).message);
      return;
    }
    log(`${describe(req, routed.t)} (upgrade ${String(req.headers.upgrade)})`);
    forwardUpgrade(req, socket, head, routed.hop, (status, message) => socketError(socket, status, hopFailure(routed.t.cluster, new Error(message))));
  });
  // Idle connections outlive a Go client's (90 s), as our cluster-gateway's do.
  server.keepAliveTimeout = 100_000;
  const port = await listen(server, opts.port, opts.host ?? '0.0.0.0');
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        agent.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
