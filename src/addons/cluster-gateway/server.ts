import type { IncomingMessage, ServerResponse } from 'node:http';
import https from 'node:https';
import type net from 'node:net';
import type { Duplex } from 'node:stream';
import { TunnelDialError } from '../../tunnel/index.js';
import { DEFAULT_TLS_PROFILE, nodeTlsOptions, TLS_PROFILE_CONFIGMAP, tlsProfileFromData, type TlsProfile } from '../../tunnel/tls-profile.js';
import { ADDON_MANAGER_NAMESPACE } from '../framework/names.js';
import type { KubeClient } from '../../kube/client.js';
import { apiGroup, apiGroupList, apiResourceList, openApiV2, openApiV3, openApiV3Index, wantsOnlyAggregatedDiscovery } from './api-documents.js';
import { forbiddenMessage, SubjectAccessReviewer, type ResourceAttributes } from './authorizer.js';
import { CREDENTIALS_NAMESPACE, GATEWAY_GROUP, GATEWAY_RESOURCE, GATEWAY_VERSION, HEALTHY_ANNOTATION, HEALTHY_REASON_ANNOTATION } from './constants.js';
import { AUTH_CONFIGMAP_PATH, authenticate, frontProxyConfigFrom, type FrontProxyConfig } from './delegated-auth.js';
import type { GatewayTarget, ManagedClusterLike, SecretLike } from './gateway-object.js';
import { GatewayStore } from './gateway-store.js';
import { distinctHeaders, type CallerIdentity } from './identity.js';
import { Informer } from '../../kube/informer.js';
import { presentationFor, presentList, presentObject, statusObject } from './presentation.js';
import { openUpstream, outgoingHeaders, rawResponseHead, responseHeaders, splice, UpstreamAgents, upstreamPath } from './proxy.js';
import { requestVerb, routeRequest, type Route } from './routing.js';
import { TunnelSource } from './tunnel-source.js';
import { streamWatch } from './watch-stream.js';

export interface GatewayServerOptions {
  /** The hub, with the gateway's own identity (its pod's ServiceAccount). */
  hub: KubeClient;
  host: string;
  port: number;
  tls: { certPem: string; keyPem: string };
  credentialsNamespace?: string;
  /** Take endpoints from ManagedClusters and watch them (upstream's --ocm-integration). */
  ocmIntegration: boolean;
  /** Pass the caller's hub identity to the cluster as Impersonate-* headers. */
  identityPenetration: boolean;
  log: (line: string) => void;
}

export interface GatewayServer {
  port: number;
  store: GatewayStore;
  close(): Promise<void>;
}

const GR = { group: GATEWAY_GROUP, kind: GATEWAY_RESOURCE };
/** Longer than Go's idle-connection timeout (net/http's 90 s, which the aggregator's transport keeps): the client closes first. */
export const AGGREGATOR_KEEP_ALIVE_MS = 100_000;

function sendJson(res: ServerResponse, code: number, body: unknown, contentType = 'application/json'): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'content-type': contentType, 'content-length': Buffer.byteLength(text), 'cache-control': 'no-cache, private' });
  res.end(text);
}

function sendStatus(res: ServerResponse, code: number, reason: string, message: string, details?: Record<string, unknown>): void {
  sendJson(res, code, statusObject(code, reason, message, details));
}

/** An error answer on a raw socket (an upgrade request that will not be upgraded). */
function socketStatus(socket: Duplex, code: number, reason: string, message: string): void {
  const text = JSON.stringify(statusObject(code, reason, message));
  const phrase =
    { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 502: 'Bad Gateway', 503: 'Service Unavailable' }[code] ?? 'Error';
  socket.end(`HTTP/1.1 ${code} ${phrase}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`);
}

function notFound(name: string): [number, string, string, Record<string, unknown>] {
  return [404, 'NotFound', `${GATEWAY_RESOURCE}.${GATEWAY_GROUP} "${name}" not found`, { name, ...GR }];
}

function attributesFor(route: Route, method: string): ResourceAttributes | null {
  const base = { group: GATEWAY_GROUP, version: GATEWAY_VERSION, resource: GATEWAY_RESOURCE, verb: requestVerb(method, route) };
  switch (route.kind) {
    case 'collection':
      return base;
    case 'object':
      return { ...base, name: route.name };
    case 'health-subresource':
      return { ...base, name: route.name, subresource: 'health' };
    case 'proxy':
      return { ...base, name: route.name, subresource: 'proxy' };
    default:
      return null;
  }
}

/**
 * The cluster-gateway aggregated API server: `cluster.core.oam.dev/v1alpha1`
 * ClusterGateways from cached Secrets (and ManagedClusters), their `health` and
 * `proxy` subresources, discovery and OpenAPI; authentication delegated to the hub
 * API server's front proxy, authorization by SubjectAccessReview.
 */
export async function startGatewayServer(o: GatewayServerOptions): Promise<GatewayServer> {
  const stop = new AbortController();
  const credentialsNamespace = o.credentialsNamespace ?? CREDENTIALS_NAMESPACE;
  const authConfigMaps = new Informer<{ metadata: { name: string; resourceVersion?: string }; data?: Record<string, string> }>(
    o.hub,
    '/api/v1/namespaces/kube-system/configmaps',
    o.log,
    {
      fieldSelector: 'metadata.name=extension-apiserver-authentication',
    },
  );
  const secrets = new Informer<SecretLike & { metadata: { name: string } }>(o.hub, `/api/v1/namespaces/${credentialsNamespace}/secrets`, o.log);
  const clusters = o.ocmIntegration
    ? new Informer<ManagedClusterLike & { metadata: { name: string; resourceVersion?: string } }>(
        o.hub,
        '/apis/cluster.open-cluster-management.io/v1/managedclusters',
        o.log,
      )
    : null;
  // OCM's ocm-tls-profile, where our other addons' servers read it (the addon managers' namespace).
  const tlsProfiles = new Informer<{ metadata: { name: string; resourceVersion?: string }; data?: Record<string, string> }>(
    o.hub,
    `/api/v1/namespaces/${ADDON_MANAGER_NAMESPACE}/configmaps`,
    o.log,
    {
      fieldSelector: `metadata.name=${TLS_PROFILE_CONFIGMAP}`,
    },
  );
  const store = new GatewayStore(secrets, clusters, o.log);
  for (const inf of [authConfigMaps, tlsProfiles, secrets, clusters]) void inf?.run(stop.signal);
  await Promise.all([authConfigMaps.waitForSync(), tlsProfiles.waitForSync()]);
  let frontProxy: FrontProxyConfig = frontProxyConfigFrom(authConfigMaps.get('extension-apiserver-authentication')?.data);
  const profileOf = (data: Record<string, string> | undefined): TlsProfile | null => {
    try {
      return tlsProfileFromData(data);
    } catch (err) {
      o.log(`ignoring an unusable ${ADDON_MANAGER_NAMESPACE}/${TLS_PROFILE_CONFIGMAP}, keeping the last good profile: ${(err as Error).message}`);
      return null;
    }
  };
  const initial = tlsProfiles.get(TLS_PROFILE_CONFIGMAP);
  // Serving weaker than the operator asked is worse than not serving: a malformed profile at start is fatal.
  let tlsProfile: TlsProfile = initial ? tlsProfileFromData(initial.data) : DEFAULT_TLS_PROFILE;
  const secureContext = () => ({ cert: o.tls.certPem, key: o.tls.keyPem, ca: frontProxy.caPem, ...nodeTlsOptions(tlsProfile) });

  const reviewer = new SubjectAccessReviewer(o.hub);
  const tunnel = new TunnelSource(o.hub, o.log);
  const agents = new UpstreamAgents(() => tunnel.get());
  tunnel.whenReset(() => agents.reset());
  secrets.onEvent((e) => {
    if (e.type === 'DELETED') agents.forget(e.object.metadata.name);
  });

  const server = https.createServer({ ...secureContext(), requestCert: true, rejectUnauthorized: false });
  // The hub's aggregator (a Go client) keeps an idle connection 90 s; Node would close it after 5 s, so
  // a request after a pause paid a new TLS handshake, and one sent as the server closed failed.
  server.keepAliveTimeout = AGGREGATOR_KEEP_ALIVE_MS;
  authConfigMaps.onEvent((e) => {
    if (e.type === 'DELETED') return;
    try {
      const next = frontProxyConfigFrom(e.object.data);
      const changed = next.caPem !== frontProxy.caPem;
      frontProxy = next;
      if (changed) server.setSecureContext(secureContext());
      o.log(`front-proxy configuration reloaded (${AUTH_CONFIGMAP_PATH})`);
    } catch (err) {
      o.log(`ignoring an unusable ${AUTH_CONFIGMAP_PATH}: ${(err as Error).message}`);
    }
  });

  tlsProfiles.onEvent((e) => {
    const next = e.type === 'DELETED' ? DEFAULT_TLS_PROFILE : profileOf(e.object.data);
    if (!next || JSON.stringify(next) === JSON.stringify(tlsProfile)) return;
    tlsProfile = next;
    server.setSecureContext(secureContext());
    o.log(
      `TLS profile from ${ADDON_MANAGER_NAMESPACE}/${TLS_PROFILE_CONFIGMAP}: minimum ${next.minVersion}${next.cipherSuites.length ? `, cipher suites ${next.cipherSuites.join(',')}` : ''}`,
    );
  });

  const synced = () => secrets.hasSynced() && (clusters?.hasSynced() ?? true);

  /** Authentication and authorization shared by plain and upgrade requests: the caller, or the refusal to send. */
  async function admit(req: IncomingMessage, route: Route): Promise<{ identity: CallerIdentity } | { code: number; reason: string; message: string }> {
    const authn = authenticate(req, frontProxy);
    if (!authn.ok) return { code: 401, reason: 'Unauthorized', message: authn.message };
    const attributes = attributesFor(route, req.method ?? 'GET');
    if (!attributes) return { identity: authn.identity };
    let decision;
    try {
      decision = await reviewer.authorize(authn.identity, attributes);
    } catch (err) {
      return {
        code: 500,
        reason: 'InternalError',
        message: `authorization failed: the SubjectAccessReview on the hub did not answer: ${(err as Error).message}`,
      };
    }
    if (!decision.allowed) return { code: 403, reason: 'Forbidden', message: forbiddenMessage(authn.identity, attributes, decision.reason) };
    return { identity: authn.identity };
  }

  function parse(req: IncomingMessage): { rawPath: string; rawQuery: string; query: URLSearchParams } {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const rawPath = q === -1 ? url : url.slice(0, q);
    const rawQuery = q === -1 ? '' : url.slice(q + 1);
    return { rawPath, rawQuery, query: new URLSearchParams(rawQuery) };
  }

  function tunnelTrouble(err: Error): boolean {
    return err instanceof TunnelDialError ? /proxy stream failed|closed the stream/.test(err.reason) : /tunnel to .* broke/.test(err.message);
  }

  /**
   * The request to the cluster behind ClusterGateway `name`, with its credential and the
   * caller's identity as configured; or why there is none, as a Status to send.
   */
  async function upstreamFor(
    req: IncomingMessage,
    name: string,
    path: string,
    rawQuery: string,
    identity: CallerIdentity,
    upgrade: boolean,
  ): Promise<{ target: GatewayTarget; upstream: ReturnType<typeof openUpstream> } | [number, string, string]> {
    const entry = store.get(name);
    if (!entry) return [404, 'NotFound', notFound(name)[2]];
    const target = entry.target;
    let agent;
    try {
      agent = await agents.agentFor(target);
    } catch (err) {
      return [503, 'ServiceUnavailable', `cannot reach cluster ${name} through cluster-proxy: ${(err as Error).message}`];
    }
    const headers = outgoingHeaders(
      distinctHeaders(req as IncomingMessage & { headersDistinct?: Record<string, string[]> }),
      target,
      identity,
      { identityPenetration: o.identityPenetration, headerNames: frontProxy },
      upgrade,
    );
    return { target, upstream: openUpstream({ target, method: req.method ?? 'GET', path: upstreamPath(target, path, rawQuery), headers, agent }) };
  }

  async function proxyPlain(req: IncomingMessage, res: ServerResponse, name: string, path: string, rawQuery: string, identity: CallerIdentity): Promise<void> {
    const opened = await upstreamFor(req, name, path, rawQuery, identity, false);
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
      if (tunnelTrouble(err)) tunnel.invalidate();
      if (!res.headersSent) sendStatus(res, 502, 'ServiceUnavailable', `the request to cluster ${name} (${target.endpointType}) failed: ${err.message}`);
      else res.destroy();
    });
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  }

  async function proxyUpgrade(
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    name: string,
    path: string,
    rawQuery: string,
    identity: CallerIdentity,
  ): Promise<void> {
    const opened = await upstreamFor(req, name, path, rawQuery, identity, true);
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
      if (tunnelTrouble(err)) tunnel.invalidate();
      socketStatus(socket, 502, 'ServiceUnavailable', `the upgrade request to cluster ${name} failed: ${err.message}`);
    });
    socket.on('error', () => upstream.destroy());
    upstream.end();
  }

  async function writeHealth(req: IncomingMessage, res: ServerResponse, name: string): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    let body: { status?: { healthy?: boolean; healthyReason?: string } };
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as typeof body;
    } catch (err) {
      return sendStatus(res, 400, 'BadRequest', `the body is not JSON: ${(err as Error).message}`);
    }
    try {
      await o.hub.mergePatch(`/api/v1/namespaces/${credentialsNamespace}/secrets/${encodeURIComponent(name)}`, {
        metadata: { annotations: { [HEALTHY_ANNOTATION]: String(!!body.status?.healthy), [HEALTHY_REASON_ANNOTATION]: body.status?.healthyReason ?? null } },
      });
    } catch (err) {
      return sendStatus(res, 500, 'InternalError', `cannot record the health of ${name}: ${(err as Error).message}`);
    }
    const entry = store.get(name);
    if (!entry) return sendStatus(res, ...notFound(name));
    sendJson(res, 200, {
      ...entry.gateway,
      status: { healthy: !!body.status?.healthy, ...(body.status?.healthyReason ? { healthyReason: body.status.healthyReason } : {}) },
    });
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { rawPath, rawQuery, query } = parse(req);
    const route = routeRequest(rawPath, query);
    if (route.kind === 'health') {
      const ready = route.check !== 'readyz' || synced();
      res.writeHead(ready ? 200 : 503, { 'content-type': 'text/plain; charset=utf-8' }).end(ready ? 'ok' : 'caches are not synced yet');
      return;
    }
    const admitted = await admit(req, route);
    if ('code' in admitted) return sendStatus(res, admitted.code, admitted.reason, admitted.message);
    const method = req.method ?? 'GET';
    const how = presentationFor(req.headers.accept);
    switch (route.kind) {
      case 'version':
        return sendJson(res, 200, { major: '1', minor: '0', gitVersion: 'v1.0.0-ocm-lab', platform: `${process.platform}/${process.arch}` });
      case 'openapi-v2':
        return sendJson(res, 200, openApiV2());
      case 'openapi-v3-index':
        return sendJson(res, 200, openApiV3Index());
      case 'openapi-v3':
        return sendJson(res, 200, openApiV3());
      case 'api-groups':
        if (wantsOnlyAggregatedDiscovery(req.headers.accept))
          return sendStatus(res, 406, 'NotAcceptable', 'only legacy discovery is served here: ask /apis/cluster.core.oam.dev/v1alpha1');
        return sendJson(res, 200, apiGroupList());
      case 'api-group':
        return sendJson(res, 200, apiGroup());
      case 'api-resources':
        return sendJson(res, 200, apiResourceList());
      case 'not-found':
        return sendStatus(res, 404, 'NotFound', `the server could not find the requested resource (${method} ${rawPath})`);
      case 'proxy':
        return proxyPlain(req, res, route.name, route.path, rawQuery, admitted.identity);
      case 'health-subresource':
        if (method === 'PUT' || method === 'PATCH') return writeHealth(req, res, route.name);
        break;
      default:
        break;
    }
    if (method !== 'GET' && method !== 'HEAD')
      return sendStatus(
        res,
        405,
        'MethodNotAllowed',
        `${method} is not supported on ${GATEWAY_RESOURCE}: ClusterGateways are read-only (they follow their Secrets)`,
      );
    if (!synced()) return sendStatus(res, 503, 'ServiceUnavailable', 'the gateway is still loading its caches; try again in a moment');
    const fieldSelector = query.get('fieldSelector') ?? '';
    let selectedName: string | undefined;
    if (fieldSelector) {
      const m = /^metadata\.name(?:==?)(.+)$/.exec(fieldSelector);
      if (!m) return sendStatus(res, 400, 'BadRequest', `field selector ${JSON.stringify(fieldSelector)} is not supported: only metadata.name=<name>`);
      selectedName = m[1];
    }
    if (route.kind === 'collection' || route.kind === 'object') {
      const name = route.kind === 'object' ? route.name : selectedName;
      if (route.watch) {
        const timeout = Number(query.get('timeoutSeconds') ?? '0');
        return streamWatch(
          res,
          store,
          { ...(name ? { name } : {}), resourceVersion: query.get('resourceVersion') ?? '', timeoutSeconds: Number.isFinite(timeout) ? timeout : 0, how },
          stop.signal,
        );
      }
      if (route.kind === 'collection') {
        const items = store.list().filter((g) => !selectedName || g.metadata.name === selectedName);
        return sendJson(res, 200, presentList(items, store.resourceVersion(), how));
      }
    }
    const name = route.kind === 'object' || route.kind === 'health-subresource' ? route.name : '';
    const entry = store.get(name);
    if (!entry) return sendStatus(res, ...notFound(name));
    return sendJson(res, 200, presentObject(entry.gateway, how));
  }

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res).catch((err: Error) => {
      o.log(`${req.method} ${req.url}: ${err.stack ?? err.message}`);
      if (!res.headersSent) sendStatus(res, 500, 'InternalError', err.message);
      else res.destroy();
    });
  });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    void (async () => {
      const { rawPath, rawQuery, query } = parse(req);
      const route = routeRequest(rawPath, query);
      if (route.kind !== 'proxy') return socketStatus(socket, 400, 'BadRequest', `upgrades are served only on the proxy subresource, not on ${rawPath}`);
      const admitted = await admit(req, route);
      if ('code' in admitted) return socketStatus(socket, admitted.code, admitted.reason, admitted.message);
      await proxyUpgrade(req, socket, head, route.name, route.path, rawQuery, admitted.identity);
    })().catch((err: Error) => {
      o.log(`upgrade ${req.url}: ${err.message}`);
      socket.destroy();
    });
  });
  server.on('tlsClientError', () => undefined);
  const sockets = new Set<net.Socket>();
  server.on('connection', (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) => reject(new Error(`cluster-gateway cannot listen on ${o.host}:${o.port}: ${err.message}`)));
    server.listen(o.port, o.host, resolve);
  });
  await Promise.all([secrets.waitForSync(), clusters?.waitForSync()]);
  o.log(
    `cluster-gateway serving ${GATEWAY_GROUP}/${GATEWAY_VERSION} on ${o.host}:${(server.address() as net.AddressInfo).port}; ${store.list().length} ClusterGateways from ${credentialsNamespace}`,
  );
  return {
    port: (server.address() as net.AddressInfo).port,
    store,
    close: async () => {
      stop.abort();
      tunnel.close();
      agents.reset();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      });
    },
  };
}
