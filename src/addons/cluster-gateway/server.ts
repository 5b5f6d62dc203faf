import type { IncomingMessage, ServerResponse } from 'node:http';
import https from 'node:https';
import type net from 'node:net';
import type { Duplex } from 'node:stream';
import type { KubeClient } from '../../kube/client.js';
import { forbiddenMessage, SubjectAccessReviewer, type ResourceAttributes } from './authorizer.js';
import { CREDENTIALS_NAMESPACE, GATEWAY_GROUP, GATEWAY_RESOURCE, GATEWAY_VERSION } from './constants.js';
import { authenticate } from './delegated-auth.js';
import type { ManagedClusterLike, SecretLike } from './gateway-object.js';
import { GatewayStore } from './gateway-store.js';
import type { CallerIdentity } from './identity.js';
import { Informer } from '../../kube/informer.js';
import { presentationFor } from './presentation.js';
import { GatewayProxy, UpstreamAgents } from './proxy.js';
import { routeTable, type AdmittedRequest, type RouteTable } from './handlers.js';
import { sendStatus, socketStatus } from './responses.js';
import { requestVerb, routeRequest, type Route } from './routing.js';
import { servingConfigInformers, ServingTls } from './tls-reload.js';
import { TunnelSource } from './tunnel-source.js';

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

/** Longer than Go's idle-connection timeout (net/http's 90 s, which the aggregator's transport keeps): the client closes first. */
const AGGREGATOR_KEEP_ALIVE_MS = 100_000;

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

function parse(req: IncomingMessage): { rawPath: string; rawQuery: string; query: URLSearchParams } {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const rawPath = q === -1 ? url : url.slice(0, q);
  const rawQuery = q === -1 ? '' : url.slice(q + 1);
  return { rawPath, rawQuery, query: new URLSearchParams(rawQuery) };
}

type ConfigMapInformer = ReturnType<typeof servingConfigInformers>['authConfigMaps'];

/**
 * The cluster-gateway aggregated API server: `cluster.core.oam.dev/v1alpha1`
 * ClusterGateways from cached Secrets (and ManagedClusters), their `health` and
 * `proxy` subresources, discovery and OpenAPI; authentication delegated to the hub
 * API server's front proxy, authorization by SubjectAccessReview.
 */
export class GatewayServer {
  port = 0;
  readonly store: GatewayStore;
  private readonly stop = new AbortController();
  private readonly credentialsNamespace: string;
  private readonly authConfigMaps: ConfigMapInformer;
  private readonly tlsProfiles: ConfigMapInformer;
  private readonly secrets: Informer<SecretLike & { metadata: { name: string } }>;
  private readonly clusters: Informer<ManagedClusterLike & { metadata: { name: string; resourceVersion?: string } }> | null;
  private readonly reviewer: SubjectAccessReviewer;
  private readonly tunnel: TunnelSource;
  private readonly agents: UpstreamAgents;
  private readonly sockets = new Set<net.Socket>();
  private tls!: ServingTls;
  private server!: https.Server;
  private routes!: RouteTable;

  constructor(private readonly o: GatewayServerOptions) {
    this.credentialsNamespace = o.credentialsNamespace ?? CREDENTIALS_NAMESPACE;
    ({ authConfigMaps: this.authConfigMaps, tlsProfiles: this.tlsProfiles } = servingConfigInformers(o.hub, o.log));
    this.secrets = new Informer(o.hub, `/api/v1/namespaces/${this.credentialsNamespace}/secrets`, o.log);
    this.clusters = o.ocmIntegration ? new Informer(o.hub, '/apis/cluster.open-cluster-management.io/v1/managedclusters', o.log) : null;
    this.store = new GatewayStore(this.secrets, this.clusters, o.log);
    this.reviewer = new SubjectAccessReviewer(o.hub);
    this.tunnel = new TunnelSource(o.hub, o.log);
    this.agents = new UpstreamAgents(() => this.tunnel.get());
  }

  /** Syncs the caches, then listens; resolves once the Secret (and ManagedCluster) caches have synced too. */
  async start(): Promise<void> {
    const o = this.o;
    for (const inf of [this.authConfigMaps, this.tlsProfiles, this.secrets, this.clusters]) void inf?.run(this.stop.signal);
    await Promise.all([this.authConfigMaps.waitForSync(), this.tlsProfiles.waitForSync()]);
    this.tls = new ServingTls(o.tls, this.authConfigMaps, this.tlsProfiles, o.log);
    this.tunnel.whenReset(() => this.agents.reset());
    this.secrets.onEvent((e) => {
      if (e.type === 'DELETED') this.agents.forget(e.object.metadata.name);
    });
    const proxy = new GatewayProxy({
      store: this.store,
      agents: this.agents,
      tunnel: this.tunnel,
      identityPenetration: o.identityPenetration,
      headerNames: () => this.tls.frontProxyConfig,
    });
    this.routes = routeTable({
      hub: o.hub,
      credentialsNamespace: this.credentialsNamespace,
      store: this.store,
      proxy,
      synced: () => this.synced(),
      stopSignal: this.stop.signal,
    });
    this.server = this.createServer(proxy);
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', (err) => reject(new Error(`cluster-gateway cannot listen on ${o.host}:${o.port}: ${err.message}`)));
      this.server.listen(o.port, o.host, resolve);
    });
    await Promise.all([this.secrets.waitForSync(), this.clusters?.waitForSync()]);
    this.port = (this.server.address() as net.AddressInfo).port;
    o.log(
      `cluster-gateway serving ${GATEWAY_GROUP}/${GATEWAY_VERSION} on ${o.host}:${this.port}; ` +
        `${this.store.list().length} ClusterGateways from ${this.credentialsNamespace}`,
    );
  }

  async close(): Promise<void> {
    this.stop.abort();
    this.tunnel.close();
    this.agents.reset();
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      for (const s of this.sockets) s.destroy();
    });
  }

  private createServer(proxy: GatewayProxy): https.Server {
    const server = https.createServer({ ...this.tls.secureContext(), requestCert: true, rejectUnauthorized: false });
    // The hub's aggregator (a Go client) keeps an idle connection 90 s; Node would close it after 5 s, so
    // a request after a pause paid a new TLS handshake, and one sent as the server closed failed.
    server.keepAliveTimeout = AGGREGATOR_KEEP_ALIVE_MS;
    this.tls.reloadInto(server);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      this.handle(req, res).catch((err: Error) => {
        this.o.log(`${req.method} ${req.url}: ${err.stack ?? err.message}`);
        if (!res.headersSent) sendStatus(res, 500, 'InternalError', err.message);
        else res.destroy();
      });
    });
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      void (async () => {
        const { rawPath, rawQuery, query } = parse(req);
        const route = routeRequest(rawPath, query);
        if (route.kind !== 'proxy') return socketStatus(socket, 400, 'BadRequest', `upgrades are served only on the proxy subresource, not on ${rawPath}`);
        const admitted = await this.admit(req, route);
        if ('code' in admitted) return socketStatus(socket, admitted.code, admitted.reason, admitted.message);
        await proxy.upgrade(req, socket, head, route.name, route.path, rawQuery, admitted.identity);
      })().catch((err: Error) => {
        this.o.log(`upgrade ${req.url}: ${err.message}`);
        socket.destroy();
      });
    });
    server.on('tlsClientError', () => undefined);
    server.on('connection', (s: net.Socket) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    return server;
  }

  private synced(): boolean {
    return this.secrets.hasSynced() && (this.clusters?.hasSynced() ?? true);
  }

  /** Authentication and authorization shared by plain and upgrade requests: the caller, or the refusal to send. */
  private async admit(req: IncomingMessage, route: Route): Promise<{ identity: CallerIdentity } | { code: number; reason: string; message: string }> {
    const authn = authenticate(req, this.tls.frontProxyConfig);
    if (!authn.ok) return { code: 401, reason: 'Unauthorized', message: authn.message };
    const attributes = attributesFor(route, req.method ?? 'GET');
    if (!attributes) return { identity: authn.identity };
    let decision;
    try {
      decision = await this.reviewer.authorize(authn.identity, attributes);
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

  /** Health checks unauthenticated; everything else admitted, then dispatched on the route table. */
  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { rawPath, rawQuery, query } = parse(req);
    const route = routeRequest(rawPath, query);
    if (route.kind === 'health') {
      const ready = route.check !== 'readyz' || this.synced();
      res.writeHead(ready ? 200 : 503, { 'content-type': 'text/plain; charset=utf-8' }).end(ready ? 'ok' : 'caches are not synced yet');
      return;
    }
    const admitted = await this.admit(req, route);
    if ('code' in admitted) return sendStatus(res, admitted.code, admitted.reason, admitted.message);
    const method = req.method ?? 'GET';
    const how = presentationFor(req.headers.accept);
    const handler = this.routes[route.kind] as (r: AdmittedRequest) => Promise<void> | void;
    return handler({ req, res, route, rawPath, rawQuery, query, identity: admitted.identity, method, how });
  }
}

export async function startGatewayServer(o: GatewayServerOptions): Promise<GatewayServer> {
  const server = new GatewayServer(o);
  await server.start();
  return server;
}
