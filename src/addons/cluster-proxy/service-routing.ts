import crypto from 'node:crypto';

/**
 * The pure rules of cluster-proxy's user server (hub) and service proxy (agent pod),
 * as upstream cluster-proxy v0.10.0 applies them: how a user's path names a cluster and a
 * Service, the `Cluster-Proxy-*` headers that carry the target through the tunnel, and
 * what the service proxy does with the caller's token on the API-server path.
 */

/** The service proxy's port in the proxy-agent pod (upstream's `ServiceProxyPort`). */
export const SERVICE_PROXY_PORT = 7443;
/** The user server's port on the hub (upstream's chart: `--server-port=9092`, Service port 9092). */
export const USER_SERVER_PORT = 9092;

export const TARGET_HEADERS = {
  proto: 'Cluster-Proxy-Proto',
  namespace: 'Cluster-Proxy-Namespace',
  service: 'Cluster-Proxy-Service',
  port: 'Cluster-Proxy-Port',
} as const;

/** The API server's target in those headers (upstream's fixed tuple for `kubernetes.default.svc`). */
const KUBE_APISERVER_TARGET = { proto: 'https', namespace: 'default', service: 'kubernetes', port: '443' } as const;

/**
 * The host the user server dials through the tunnel to reach a cluster's service proxy, and
 * that the cluster's agent announces as an identifier: `cluster-` + the SHA-256 of the
 * cluster name, cut to 56 characters, + `.open-cluster-management.proxy` (a DNS label stays
 * under 64 characters whatever the cluster name).
 */
export function serviceProxyHost(cluster: string): string {
  const hex = crypto.createHash('sha256').update(cluster).digest('hex');
  return `${`cluster-${hex}`.slice(0, 64 - 'cluster-'.length)}.open-cluster-management.proxy`;
}

export interface ServiceTarget {
  proto: string;
  namespace: string;
  service: string;
  port: string;
}

export interface UserRequestTarget extends ServiceTarget {
  kind: 'service' | 'kube-apiserver';
  cluster: string;
  /** The path the target receives (always starting with `/`), without the query. */
  path: string;
  /** The query as the user sent it (without `?`), or ''. */
  query: string;
}

export class UserRequestError extends Error {}

/**
 * `[scheme:]name[:port]` as Kubernetes' SplitSchemeNamePort reads it: one to three parts,
 * a non-empty name, scheme `http`, `https` or none.
 */
export function splitSchemeNamePort(id: string): { scheme: string; name: string; port: string } | null {
  const parts = id.split(':');
  let scheme = '';
  let name: string;
  let port = '';
  if (parts.length === 1) name = parts[0]!;
  else if (parts.length === 2) [name, port] = parts as [string, string];
  else if (parts.length === 3) [scheme, name, port] = parts as [string, string, string];
  else return null;
  if (!name || !['', 'http', 'https'].includes(scheme)) return null;
  return { scheme, name, port };
}

/**
 * What a request to the user server asks for. The path, split on `/` (part 0 is the empty
 * string before the leading slash), is a Service request when it has more than 9 parts and
 * part 8 is `proxy-service`:
 * `/<cluster>/api/v1/namespaces/<ns>/services/<[scheme:]name:port>/proxy-service/<path>`;
 * anything else goes to the cluster's API server: `/<cluster>/<api path>`.
 */
export function parseUserRequest(requestUri: string): UserRequestTarget {
  const q = requestUri.indexOf('?');
  const rawPath = q < 0 ? requestUri : requestUri.slice(0, q);
  const query = q < 0 ? '' : requestUri.slice(q + 1);
  const parts = rawPath.split('/');
  if (parts.length > 9 && parts[8] === 'proxy-service') {
    const cluster = parts[1]!;
    const namespace = parts[5]!;
    const id = splitSchemeNamePort(parts[7]!);
    if (!id) throw new UserRequestError(`service ${JSON.stringify(parts[7])} in ${rawPath}: expected [http:|https:]name:port, e.g. http:web:8080`);
    if (!id.port)
      throw new UserRequestError(
        `service ${JSON.stringify(parts[7])} in ${rawPath} names no port: add it, e.g. ${id.scheme ? `${id.scheme}:` : ''}${id.name}:8080`,
      );
    if (!cluster) throw new UserRequestError(`${rawPath}: the first path segment must name a managed cluster`);
    if (!namespace) throw new UserRequestError(`${rawPath}: the namespace (after /namespaces/) is empty`);
    return { kind: 'service', cluster, proto: id.scheme || 'https', namespace, service: id.name, port: id.port, path: `/${parts.slice(9).join('/')}`, query };
  }
  if (parts.length <= 2 || !parts[1]) {
    throw new UserRequestError(
      `${rawPath}: expected /<cluster>/<kube-apiserver path> or /<cluster>/api/v1/namespaces/<ns>/services/<[scheme:]name:port>/proxy-service/<path>`,
    );
  }
  return { kind: 'kube-apiserver', cluster: parts[1], ...KUBE_APISERVER_TARGET, path: `/${parts.slice(2).join('/')}`, query };
}

/** The headers that name the target for the service proxy. */
export function targetHeaders(t: ServiceTarget): Record<string, string> {
  return { [TARGET_HEADERS.proto]: t.proto, [TARGET_HEADERS.namespace]: t.namespace, [TARGET_HEADERS.service]: t.service, [TARGET_HEADERS.port]: t.port };
}

type Headers = Record<string, string | string[] | undefined>;

function header(headers: Headers, name: string): string {
  const v = headers[name.toLowerCase()];
  return (Array.isArray(v) ? v[0] : v) ?? '';
}

/**
 * The service proxy's reading of those headers: the API server (the fixed tuple) or
 * `<proto>://<service>.<namespace>.svc:<port>`. Missing or malformed values are errors that
 * name the header.
 */
export function targetFromHeaders(headers: Headers): { kind: 'kube-apiserver' } | { kind: 'service'; url: string; target: ServiceTarget } {
  const t: ServiceTarget = {
    proto: header(headers, TARGET_HEADERS.proto),
    namespace: header(headers, TARGET_HEADERS.namespace),
    service: header(headers, TARGET_HEADERS.service),
    port: header(headers, TARGET_HEADERS.port),
  };
  const missing = (Object.keys(TARGET_HEADERS) as (keyof ServiceTarget)[]).filter((k) => !t[k]).map((k) => TARGET_HEADERS[k]);
  if (missing.length)
    throw new UserRequestError(`missing header ${missing.join(', ')}: requests to the service proxy come from cluster-proxy's user server, which sets them`);
  if (
    t.proto === KUBE_APISERVER_TARGET.proto &&
    t.service === KUBE_APISERVER_TARGET.service &&
    t.namespace === KUBE_APISERVER_TARGET.namespace &&
    t.port === KUBE_APISERVER_TARGET.port
  )
    return { kind: 'kube-apiserver' };
  if (t.proto !== 'http' && t.proto !== 'https') throw new UserRequestError(`${TARGET_HEADERS.proto}: ${JSON.stringify(t.proto)} is neither http nor https`);
  const label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
  if (!label.test(t.service)) throw new UserRequestError(`${TARGET_HEADERS.service}: ${JSON.stringify(t.service)} is not a Service name`);
  if (!label.test(t.namespace)) throw new UserRequestError(`${TARGET_HEADERS.namespace}: ${JSON.stringify(t.namespace)} is not a namespace name`);
  if (!/^[0-9]{1,5}$/.test(t.port) || Number(t.port) < 1 || Number(t.port) > 65535)
    throw new UserRequestError(`${TARGET_HEADERS.port}: ${JSON.stringify(t.port)} is not a port number from 1 to 65535`);
  return { kind: 'service', url: `${t.proto}://${t.service}.${t.namespace}.svc:${t.port}`, target: t };
}

/** The bearer token of an Authorization header, or '' (upstream trims the `Bearer ` prefix only). */
export function bearerToken(authorization: string | undefined): string {
  const v = authorization ?? '';
  return v.startsWith('Bearer ') ? v.slice('Bearer '.length).trim() : '';
}

interface ReviewedUser {
  username: string;
  groups?: string[];
}

/** A TokenReview's answer: null when the token is not valid there. */
export type Review = ReviewedUser | null;

export type AuthDecision = { action: 'pass' } | { action: 'impersonate'; user: string; groups: string[] } | { action: 'reject'; reason: string };

/**
 * The API-server path with impersonation on: a token the managed cluster accepts goes on
 * unchanged; else one the hub accepts is sent on as that hub user (a hub ServiceAccount as
 * `cluster:hub:system:serviceaccount:<ns>:<name>`, so it cannot pass for the cluster's own
 * ServiceAccount of that name) with its groups; a token neither knows is refused. (The
 * hub is asked only when the managed cluster said no; pass null for it otherwise.)
 */
export function decideAuthentication(managed: Review, hub: Review): AuthDecision {
  if (managed) return { action: 'pass' };
  const user = hub;
  if (!user) return { action: 'reject', reason: 'the token is valid neither on the managed cluster nor on the hub' };
  const name = user.username.startsWith('system:serviceaccount:') ? `cluster:hub:${user.username}` : user.username;
  return { action: 'impersonate', user: name, groups: user.groups ?? [] };
}

/** Headers a caller could use to choose whom the agent's own token impersonates; dropped before impersonating. */
export function isImpersonationHeader(name: string): boolean {
  return /^impersonate-/i.test(name);
}
