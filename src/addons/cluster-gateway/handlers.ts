/** The gateway's route table: what each admitted request gets, by the kind of its route. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KubeClient } from '../../kube/client.js';
import { apiGroup, apiGroupList, apiResourceList, openApiV2, openApiV3, openApiV3Index, wantsOnlyAggregatedDiscovery } from './api-documents.js';
import { GATEWAY_RESOURCE, HEALTHY_ANNOTATION, HEALTHY_REASON_ANNOTATION } from './constants.js';
import type { GatewayStore } from './gateway-store.js';
import type { CallerIdentity } from './identity.js';
import { presentationFor, presentList, presentObject } from './presentation.js';
import type { GatewayProxy } from './proxy.js';
import { notFound, sendJson, sendStatus } from './responses.js';
import type { Route } from './routing.js';
import { streamWatch } from './watch-stream.js';

/** A request that passed authentication and authorization, parsed. */
export interface AdmittedRequest<R extends Route = Route> {
  req: IncomingMessage;
  res: ServerResponse;
  route: R;
  rawPath: string;
  rawQuery: string;
  query: URLSearchParams;
  identity: CallerIdentity;
  method: string;
  how: ReturnType<typeof presentationFor>;
}

/** What the handlers read and write. */
export interface HandlerParts {
  hub: KubeClient;
  credentialsNamespace: string;
  store: GatewayStore;
  proxy: GatewayProxy;
  /** Whether the Secret (and ManagedCluster) caches have synced. */
  synced: () => boolean;
  /** Aborted when the server closes: ends open watches. */
  stopSignal: AbortSignal;
}

type AdmittedKind = Exclude<Route['kind'], 'health'>;
type Handler<R extends Route> = (r: AdmittedRequest<R>) => Promise<void> | void;
export type RouteTable = { [K in AdmittedKind]: Handler<Extract<Route, { kind: K }>> };

/** One handler per route kind (health checks are answered before admission, by the server). */
export function routeTable(parts: HandlerParts): RouteTable {
  const read: Handler<Extract<Route, { kind: 'collection' | 'object' | 'health-subresource' }>> = (r) => readGateways(parts, r);
  return {
    version: ({ res }) => sendJson(res, 200, { major: '1', minor: '0', gitVersion: 'v1.0.0-ocm-lab', platform: `${process.platform}/${process.arch}` }),
    'openapi-v2': ({ res }) => sendJson(res, 200, openApiV2()),
    'openapi-v3-index': ({ res }) => sendJson(res, 200, openApiV3Index()),
    'openapi-v3': ({ res }) => sendJson(res, 200, openApiV3()),
    'api-groups': ({ req, res }) => {
      if (wantsOnlyAggregatedDiscovery(req.headers.accept))
        return sendStatus(res, 406, 'NotAcceptable', 'only legacy discovery is served here: ask /apis/cluster.core.oam.dev/v1alpha1');
      return sendJson(res, 200, apiGroupList());
    },
    'api-group': ({ res }) => sendJson(res, 200, apiGroup()),
    'api-resources': ({ res }) => sendJson(res, 200, apiResourceList()),
    'not-found': ({ res, method, rawPath }) => sendStatus(res, 404, 'NotFound', `the server could not find the requested resource (${method} ${rawPath})`),
    proxy: ({ req, res, route, rawQuery, identity }) => parts.proxy.plain(req, res, route.name, route.path, rawQuery, identity),
    'health-subresource': (r) => (r.method === 'PUT' || r.method === 'PATCH' ? writeHealth(parts, r.req, r.res, r.route.name) : read(r)),
    collection: read,
    object: read,
  };
}

/** GET (or watch) of the collection, one ClusterGateway, or its health: ClusterGateways are read-only. */
function readGateways(parts: HandlerParts, r: AdmittedRequest<Extract<Route, { kind: 'collection' | 'object' | 'health-subresource' }>>): void {
  const { res, route, query, method, how } = r;
  const store = parts.store;
  if (method !== 'GET' && method !== 'HEAD')
    return sendStatus(
      res,
      405,
      'MethodNotAllowed',
      `${method} is not supported on ${GATEWAY_RESOURCE}: ClusterGateways are read-only (they follow their Secrets)`,
    );
  if (!parts.synced()) return sendStatus(res, 503, 'ServiceUnavailable', 'the gateway is still loading its caches; try again in a moment');
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
        parts.stopSignal,
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

/** PUT/PATCH of a ClusterGateway's health: recorded as annotations on its Secret. */
async function writeHealth(parts: HandlerParts, req: IncomingMessage, res: ServerResponse, name: string): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  let body: { status?: { healthy?: boolean; healthyReason?: string } };
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as typeof body;
  } catch (err) {
    return sendStatus(res, 400, 'BadRequest', `the body is not JSON: ${(err as Error).message}`);
  }
  try {
    await parts.hub.mergePatch(`/api/v1/namespaces/${parts.credentialsNamespace}/secrets/${encodeURIComponent(name)}`, {
      metadata: { annotations: { [HEALTHY_ANNOTATION]: String(!!body.status?.healthy), [HEALTHY_REASON_ANNOTATION]: body.status?.healthyReason ?? null } },
    });
  } catch (err) {
    return sendStatus(res, 500, 'InternalError', `cannot record the health of ${name}: ${(err as Error).message}`);
  }
  const entry = parts.store.get(name);
  if (!entry) return sendStatus(res, ...notFound(name));
  sendJson(res, 200, {
    ...entry.gateway,
    status: { healthy: !!body.status?.healthy, ...(body.status?.healthyReason ? { healthyReason: body.status.healthyReason } : {}) },
  });
}
