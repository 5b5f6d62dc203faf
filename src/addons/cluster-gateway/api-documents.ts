import { createHash } from 'node:crypto';
import { GATEWAY_API, GATEWAY_GROUP, GATEWAY_KIND, GATEWAY_RESOURCE, GATEWAY_VERSION } from './constants.js';

const groupVersion = { groupVersion: GATEWAY_API, version: GATEWAY_VERSION };

/** GET /apis: the one group this server serves. */
export function apiGroupList(): Record<string, unknown> {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: [{ name: GATEWAY_GROUP, versions: [groupVersion], preferredVersion: groupVersion }] };
}

/** GET /apis/cluster.core.oam.dev */
export function apiGroup(): Record<string, unknown> {
  return { kind: 'APIGroup', apiVersion: 'v1', name: GATEWAY_GROUP, versions: [groupVersion], preferredVersion: groupVersion };
}

/** GET /apis/cluster.core.oam.dev/v1alpha1: what kubectl's discovery (and the aggregator's) reads. */
export function apiResourceList(): Record<string, unknown> {
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: GATEWAY_API,
    resources: [
      { name: GATEWAY_RESOURCE, singularName: 'clustergateway', namespaced: false, kind: GATEWAY_KIND, verbs: ['get', 'list', 'watch'] },
      { name: `${GATEWAY_RESOURCE}/health`, singularName: '', namespaced: false, kind: GATEWAY_KIND, verbs: ['get', 'update'] },
      {
        name: `${GATEWAY_RESOURCE}/proxy`,
        singularName: '',
        namespaced: false,
        kind: 'ClusterGatewayProxy',
        verbs: ['create', 'delete', 'get', 'patch', 'update'],
      },
    ],
  };
}

/**
 * True when an Accept header asks only for aggregated discovery (apidiscovery.k8s.io): this
 * server answers 406 and the hub's aggregator falls back to the per-version document.
 */
export function wantsOnlyAggregatedDiscovery(accept: string | undefined): boolean {
  if (!accept) return false;
  const entries = accept
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  return entries.length > 0 && entries.every((e) => /g=apidiscovery\.k8s\.io/.test(e));
}

const str = (description: string) => ({ type: 'string', description });

/** The ClusterGateway schema, written once for both OpenAPI versions (`ref` turns a name into a reference). */
function schemas(ref: (name: string) => string): Record<string, unknown> {
  const gvk = [{ group: GATEWAY_GROUP, version: GATEWAY_VERSION, kind: GATEWAY_KIND }];
  return {
    [`${PREFIX}.ClusterGateway`]: {
      type: 'object',
      description:
        'ClusterGateway is a managed cluster as the gateway reaches it: where its API server is, ' +
        'how (directly or through cluster-proxy) and with which credential. ' +
        'Built from a Secret in the credentials namespace; not stored. ' +
        'Its proxy subresource forwards Kubernetes API requests to the cluster.',
      properties: {
        apiVersion: str('APIVersion defines the versioned schema of this representation of an object.'),
        kind: str('Kind is a string value representing the REST resource this object represents.'),
        metadata: { description: "Standard object's metadata; the name is the managed cluster's name.", allOf: [{ $ref: ref(`${PREFIX}.ObjectMeta`) }] },
        spec: { description: 'How the cluster is reached.', allOf: [{ $ref: ref(`${PREFIX}.ClusterGatewaySpec`) }] },
        status: { description: 'Health as last probed.', allOf: [{ $ref: ref(`${PREFIX}.ClusterGatewayStatus`) }] },
      },
      'x-kubernetes-group-version-kind': gvk,
    },
    [`${PREFIX}.ClusterGatewayList`]: {
      type: 'object',
      description: 'A list of ClusterGateways.',
      required: ['items'],
      properties: {
        apiVersion: str('APIVersion of the list.'),
        kind: str('Kind of the list.'),
        metadata: { type: 'object', description: 'Standard list metadata.', properties: { resourceVersion: str('Resource version of the list.') } },
        items: { type: 'array', items: { $ref: ref(`${PREFIX}.ClusterGateway`) }, description: 'The ClusterGateways.' },
      },
      'x-kubernetes-group-version-kind': [{ ...gvk[0], kind: `${GATEWAY_KIND}List` }],
    },
    [`${PREFIX}.ObjectMeta`]: {
      type: 'object',
      description: 'Metadata of a ClusterGateway, taken from its Secret.',
      properties: {
        name: str('Name of the managed cluster (and of its Secret).'),
        uid: str("UID of the gateway's Secret."),
        resourceVersion: str('Resource version; changes with the Secret or the ManagedCluster.'),
        creationTimestamp: { type: 'string', format: 'date-time', description: 'When the Secret was created.' },
      },
    },
    [`${PREFIX}.ClusterGatewaySpec`]: {
      type: 'object',
      required: ['provider', 'access'],
      properties: {
        provider: str('The cluster provider type (empty unless set).'),
        access: { description: 'Endpoint and credential.', allOf: [{ $ref: ref(`${PREFIX}.ClusterAccess`) }] },
      },
    },
    [`${PREFIX}.ClusterAccess`]: {
      type: 'object',
      properties: {
        endpoint: {
          type: 'object',
          description: 'Where the cluster API server is.',
          properties: {
            type: str('Const: a fixed address the hub can dial. ClusterProxy: through the cluster-proxy tunnel to <name>:443.'),
            const: {
              type: 'object',
              description: 'For type Const.',
              properties: {
                address: str("The API server's URL."),
                caBundle: { type: 'string', format: 'byte', description: 'PEM CA bundle, base64.' },
                insecure: { type: 'boolean', description: 'Skip verification (no CA known).' },
              },
            },
          },
        },
        credential: {
          type: 'object',
          description: 'The kind of credential the gateway presents; the credential itself stays in the Secret.',
          properties: { type: str('ServiceAccountToken or X509Certificate.') },
        },
      },
    },
    [`${PREFIX}.ClusterGatewayStatus`]: {
      type: 'object',
      properties: {
        healthy: { type: 'boolean', description: 'Whether the cluster answered its last /healthz probe with ok.' },
        healthyReason: str('Why it is not healthy.'),
      },
    },
  };
}

const PREFIX = 'dev.oam.core.cluster.v1alpha1';

/**
 * The read paths, each operation tagged with its kind: `kubectl explain` finds the kind of
 * a resource by scanning the paths for it before it looks at the schemas.
 */
function paths(v3: boolean): Record<string, unknown> {
  const gvk = { group: GATEWAY_GROUP, version: GATEWAY_VERSION, kind: GATEWAY_KIND };
  const base = `/apis/${GATEWAY_GROUP}/${GATEWAY_VERSION}/${GATEWAY_RESOURCE}`;
  const response = (schema: string) =>
    v3
      ? { '200': { description: 'OK', content: { 'application/json': { schema: { $ref: `#/components/schemas/${PREFIX}.${schema}` } } } } }
      : { '200': { description: 'OK', schema: { $ref: `#/definitions/${PREFIX}.${schema}` } } };
  const nameParam = v3
    ? { name: 'name', in: 'path', required: true, description: 'name of the ClusterGateway', schema: { type: 'string' } }
    : { name: 'name', in: 'path', required: true, description: 'name of the ClusterGateway', type: 'string' };
  return {
    [base]: {
      get: {
        description: 'list or watch ClusterGateways',
        operationId: 'listClusterCoreOamDevV1alpha1ClusterGateway',
        responses: response('ClusterGatewayList'),
        'x-kubernetes-action': 'list',
        'x-kubernetes-group-version-kind': { ...gvk },
      },
    },
    [`${base}/{name}`]: {
      get: {
        description: 'read the specified ClusterGateway',
        operationId: 'readClusterCoreOamDevV1alpha1ClusterGateway',
        responses: response('ClusterGateway'),
        'x-kubernetes-action': 'get',
        'x-kubernetes-group-version-kind': { ...gvk },
      },
      parameters: [nameParam],
    },
  };
}

/** /openapi/v2 (swagger 2.0): definitions only, enough for the hub to merge. */
export function openApiV2(): Record<string, unknown> {
  return {
    swagger: '2.0',
    info: { title: 'cluster-gateway (ocm-lab)', version: GATEWAY_VERSION },
    paths: paths(false),
    definitions: schemas((n) => `#/definitions/${n}`),
  };
}

/** /openapi/v3/apis/cluster.core.oam.dev/v1alpha1: what `kubectl explain clustergateway` reads. */
export function openApiV3(): Record<string, unknown> {
  return {
    openapi: '3.0.0',
    info: { title: 'cluster-gateway (ocm-lab)', version: GATEWAY_VERSION },
    paths: paths(true),
    components: { schemas: schemas((n) => `#/components/schemas/${n}`) },
  };
}

const OPENAPI_V3_HASH = createHash('sha512').update(JSON.stringify(openApiV3())).digest('hex').slice(0, 64).toUpperCase();

/** /openapi/v3: the index of group-version documents. */
export function openApiV3Index(): Record<string, unknown> {
  return {
    paths: {
      [`apis/${GATEWAY_GROUP}/${GATEWAY_VERSION}`]: { serverRelativeURL: `/openapi/v3/apis/${GATEWAY_GROUP}/${GATEWAY_VERSION}?hash=${OPENAPI_V3_HASH}` },
    },
  };
}
