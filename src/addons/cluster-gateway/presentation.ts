import type { ClusterGateway } from './gateway-object.js';
import { GATEWAY_API, GATEWAY_KIND } from './constants.js';

/** The shapes a client may ask for in its Accept header. */
export type Presentation = 'object' | 'table' | 'metadata';

/**
 * Picks the representation from an Accept header as the API server does: the first
 * acceptable entry wins; `as=Table` (meta.k8s.io v1/v1beta1) gives a Table,
 * `as=PartialObjectMetadata[List]` metadata only, anything else JSON.
 */
export function presentationFor(accept: string | undefined): { presentation: Presentation; version: string } {
  for (const entry of (accept ?? '').split(',')) {
    const params = new Map(
      entry
        .split(';')
        .slice(1)
        .map((p) => p.trim().split('=') as [string, string]),
    );
    const as = params.get('as');
    if (!as) {
      const type = entry.split(';')[0]?.trim();
      if (type === 'application/json' || type === '*/*' || type === 'application/*') return { presentation: 'object', version: '' };
      continue;
    }
    if (params.get('g') !== 'meta.k8s.io') continue;
    const version = params.get('v') ?? 'v1';
    if (as === 'Table' && (version === 'v1' || version === 'v1beta1')) return { presentation: 'table', version };
    if ((as === 'PartialObjectMetadata' || as === 'PartialObjectMetadataList') && (version === 'v1' || version === 'v1beta1'))
      return { presentation: 'metadata', version };
  }
  return { presentation: 'object', version: '' };
}

const TABLE_COLUMNS = [
  { name: 'Name', type: 'string', format: 'name', description: 'the name of the cluster', priority: 0 },
  { name: 'Provider', type: 'string', format: '', description: 'the cluster provider type', priority: 0 },
  { name: 'Credential-Type', type: 'string', format: '', description: 'the credential type', priority: 0 },
  { name: 'Endpoint-Type', type: 'string', format: '', description: 'the endpoint type', priority: 0 },
  { name: 'Healthy', type: 'string', format: '', description: 'whether the cluster answered its last /healthz probe', priority: 0 },
];

function partialMetadata(gw: ClusterGateway, version: string) {
  return { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${version || 'v1'}`, metadata: gw.metadata };
}

/** One Table row per gateway, as `kubectl get clustergateway` prints it. */
export function gatewayTable(
  gateways: ClusterGateway[],
  options: { version?: string; resourceVersion?: string; headers?: boolean } = {},
): Record<string, unknown> {
  const version = options.version || 'v1';
  return {
    kind: 'Table',
    apiVersion: `meta.k8s.io/${version}`,
    metadata: options.resourceVersion ? { resourceVersion: options.resourceVersion } : {},
    columnDefinitions: options.headers === false ? [] : TABLE_COLUMNS,
    rows: gateways.map((gw) => ({
      cells: [
        gw.metadata.name,
        gw.spec.provider,
        gw.spec.access.credential.type || '<none>',
        gw.spec.access.endpoint.type,
        gw.status.healthy ? 'True' : gw.status.healthyReason ? 'False' : 'Unknown',
      ],
      object: partialMetadata(gw, version),
    })),
  };
}

/** A single object in the asked-for representation. */
export function presentObject(gw: ClusterGateway, how: { presentation: Presentation; version: string }, headers = true): unknown {
  if (how.presentation === 'table')
    return gatewayTable([gw], { version: how.version, headers, ...(gw.metadata.resourceVersion ? { resourceVersion: gw.metadata.resourceVersion } : {}) });
  if (how.presentation === 'metadata') return partialMetadata(gw, how.version);
  return gw;
}

/** A list in the asked-for representation. */
export function presentList(gateways: ClusterGateway[], resourceVersion: string, how: { presentation: Presentation; version: string }): unknown {
  if (how.presentation === 'table') return gatewayTable(gateways, { version: how.version, resourceVersion });
  if (how.presentation === 'metadata') {
    return {
      kind: 'PartialObjectMetadataList',
      apiVersion: `meta.k8s.io/${how.version || 'v1'}`,
      metadata: { resourceVersion },
      items: gateways.map((g) => partialMetadata(g, how.version)),
    };
  }
  return { kind: `${GATEWAY_KIND}List`, apiVersion: GATEWAY_API, metadata: { resourceVersion }, items: gateways };
}

/** A Kubernetes Status object for an error answer. */
export function statusObject(code: number, reason: string, message: string, details?: Record<string, unknown>): Record<string, unknown> {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, ...(details ? { details } : {}), code };
}
