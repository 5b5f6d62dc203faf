import { GATEWAY_GROUP, GATEWAY_RESOURCE, GATEWAY_VERSION } from './constants.js';
import { verbOfMethod } from '../../kube/verbs.js';

/** What a request to the gateway asks for, from its method and path alone. */
export type Route =
  | { kind: 'health'; check: 'healthz' | 'readyz' | 'livez' }
  | { kind: 'version' }
  | { kind: 'openapi-v2' }
  | { kind: 'openapi-v3-index' }
  | { kind: 'openapi-v3' }
  | { kind: 'api-groups' }
  | { kind: 'api-group' }
  | { kind: 'api-resources' }
  | { kind: 'collection'; watch: boolean }
  | { kind: 'object'; name: string; watch: boolean }
  | { kind: 'health-subresource'; name: string }
  | { kind: 'proxy'; name: string; path: string }
  | { kind: 'not-found' };

const GV_PREFIX = `/apis/${GATEWAY_GROUP}/${GATEWAY_VERSION}`;

/**
 * Routes a request path (still percent-encoded, query split off). The proxy path is
 * returned exactly as it arrived, so the managed cluster sees the bytes the client sent.
 */
export function routeRequest(rawPath: string, query: URLSearchParams): Route {
  const path = rawPath.length > 1 ? rawPath.replace(/\/+$/, '') : rawPath;
  const watchParam = query.get('watch') === 'true' || query.get('watch') === '1';
  switch (path) {
    case '/healthz':
    case '/readyz':
    case '/livez':
      return { kind: 'health', check: path.slice(1) as 'healthz' | 'readyz' | 'livez' };
    case '/version':
      return { kind: 'version' };
    case '/openapi/v2':
      return { kind: 'openapi-v2' };
    case '/openapi/v3':
      return { kind: 'openapi-v3-index' };
    case `/openapi/v3/apis/${GATEWAY_GROUP}/${GATEWAY_VERSION}`:
      return { kind: 'openapi-v3' };
    case '/apis':
      return { kind: 'api-groups' };
    case `/apis/${GATEWAY_GROUP}`:
      return { kind: 'api-group' };
    case GV_PREFIX:
      return { kind: 'api-resources' };
  }
  if (!rawPath.startsWith(`${GV_PREFIX}/`)) return { kind: 'not-found' };
  const rest = rawPath.slice(GV_PREFIX.length + 1);
  // Legacy watch paths: /watch/clustergateways[/name].
  const legacyWatch = /^watch\/([^/]+)(?:\/([^/]+))?\/?$/.exec(rest);
  if (legacyWatch) {
    if (legacyWatch[1] !== GATEWAY_RESOURCE) return { kind: 'not-found' };
    return legacyWatch[2] ? { kind: 'object', name: decodeURIComponent(legacyWatch[2]), watch: true } : { kind: 'collection', watch: true };
  }
  const slash = rest.indexOf('/');
  const resource = slash === -1 ? rest : rest.slice(0, slash);
  if (resource !== GATEWAY_RESOURCE) return { kind: 'not-found' };
  if (slash === -1 || rest.length === slash + 1) return { kind: 'collection', watch: watchParam };
  const afterResource = rest.slice(slash + 1);
  const nameEnd = afterResource.indexOf('/');
  const name = decodeURIComponent(nameEnd === -1 ? afterResource : afterResource.slice(0, nameEnd));
  if (!name) return { kind: 'not-found' };
  if (nameEnd === -1 || afterResource.length === nameEnd + 1) return { kind: 'object', name, watch: watchParam };
  const sub = afterResource.slice(nameEnd + 1);
  const subEnd = sub.indexOf('/');
  const subresource = subEnd === -1 ? sub : sub.slice(0, subEnd);
  if (subresource === 'proxy') return { kind: 'proxy', name, path: subEnd === -1 ? '/' : sub.slice(subEnd) };
  if (subresource === 'health' && subEnd === -1) return { kind: 'health-subresource', name };
  return { kind: 'not-found' };
}

/** The Kubernetes verb of a request (as the API server's RequestInfo derives it). */
export function requestVerb(method: string, route: Route): string {
  const upper = method.toUpperCase();
  if (upper === 'GET' || upper === 'HEAD') {
    if (route.kind === 'collection') return route.watch ? 'watch' : 'list';
    return route.kind === 'object' && route.watch ? 'watch' : 'get';
  }
  if (upper === 'DELETE' && route.kind === 'collection') return 'deletecollection';
  return verbOfMethod(method) ?? method.toLowerCase();
}

/**
 * The query string forwarded to the managed cluster. Clients of upstream's gateway
 * send `__dryRun` where they mean `dryRun` (upstream's generic filters reject dryRun on
 * proxy paths); it is turned back here. Everything else passes unchanged.
 */
export function forwardedQuery(rawQuery: string): string {
  if (!rawQuery) return '';
  return rawQuery
    .split('&')
    .map((pair) => (pair === '__dryRun' || pair.startsWith('__dryRun=') ? pair.slice(2) : pair))
    .join('&');
}
