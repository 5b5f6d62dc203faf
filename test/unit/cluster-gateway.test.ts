import { describe, expect, it } from 'vitest';
import { apiResourceList, openApiV3, openApiV3Index, wantsOnlyAggregatedDiscovery } from '../../src/addons/cluster-gateway/api-documents.js';
import { availableCondition, credentialSecret, healthAnnotationPatch } from '../../src/addons/cluster-gateway/addon.js';
import { forbiddenMessage } from '../../src/addons/cluster-gateway/authorizer.js';
import { frontProxyConfigFrom } from '../../src/addons/cluster-gateway/delegated-auth.js';
import { gatewayFromSecret, type SecretLike } from '../../src/addons/cluster-gateway/gateway-object.js';
import { GatewayStore } from '../../src/addons/cluster-gateway/gateway-store.js';
import { DEFAULT_HEADER_NAMES, identityFromHeaders, impersonationHeaders, isIdentityHeader } from '../../src/addons/cluster-gateway/identity.js';
import type { Informer, InformerEvent } from '../../src/kube/informer.js';
import { gatewayKubeconfigEntry } from '../../src/addons/cluster-gateway/kubeconfig.js';
import { gatewayTable, presentationFor } from '../../src/addons/cluster-gateway/presentation.js';
import { outgoingHeaders, upstreamPath } from '../../src/addons/cluster-gateway/proxy.js';
import { forwardedQuery, requestVerb, routeRequest } from '../../src/addons/cluster-gateway/routing.js';
import { enabledFeatureGates } from '../../src/cli/commands/internal/cluster-gateway.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const GV = '/apis/cluster.core.oam.dev/v1alpha1';

function secret(name: string, labels: Record<string, string>, data: Record<string, string>, extra: Partial<SecretLike['metadata']> = {}): SecretLike {
  return {
    metadata: { name, namespace: 'open-cluster-management-credentials', resourceVersion: '10', labels, ...extra },
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
  };
}
const TOKEN_PROXY = { 'cluster.core.oam.dev/cluster-credential-type': 'ServiceAccountToken', 'cluster.core.oam.dev/cluster-endpoint-type': 'ClusterProxy' };

describe('cluster-gateway routing', () => {
  const q = (s = '') => new URLSearchParams(s);
  it('routes discovery, openapi, collection, object, watch and subresources', () => {
    expect(routeRequest('/apis', q())).toEqual({ kind: 'api-groups' });
    expect(routeRequest('/apis/cluster.core.oam.dev', q())).toEqual({ kind: 'api-group' });
    expect(routeRequest(`${GV}`, q())).toEqual({ kind: 'api-resources' });
    expect(routeRequest(`${GV}/`, q())).toEqual({ kind: 'api-resources' });
    expect(routeRequest('/openapi/v3', q())).toEqual({ kind: 'openapi-v3-index' });
    expect(routeRequest(`/openapi/v3/apis/cluster.core.oam.dev/v1alpha1`, q())).toEqual({ kind: 'openapi-v3' });
    expect(routeRequest(`${GV}/clustergateways`, q())).toEqual({ kind: 'collection', watch: false });
    expect(routeRequest(`${GV}/clustergateways`, q('watch=true'))).toEqual({ kind: 'collection', watch: true });
    expect(routeRequest(`${GV}/watch/clustergateways/c1`, q())).toEqual({ kind: 'object', name: 'c1', watch: true });
    expect(routeRequest(`${GV}/clustergateways/c1`, q())).toEqual({ kind: 'object', name: 'c1', watch: false });
    expect(routeRequest(`${GV}/clustergateways/c1/health`, q())).toEqual({ kind: 'health-subresource', name: 'c1' });
    expect(routeRequest(`${GV}/clustergateways/c1/proxy`, q())).toEqual({ kind: 'proxy', name: 'c1', path: '/' });
    expect(routeRequest(`${GV}/clustergateways/c1/proxy/`, q())).toEqual({ kind: 'proxy', name: 'c1', path: '/' });
    expect(routeRequest('/healthz', q())).toEqual({ kind: 'health', check: 'healthz' });
    expect(routeRequest(`${GV}/widgets`, q())).toEqual({ kind: 'not-found' });
    expect(routeRequest(`${GV}/clustergateways/c1/status`, q())).toEqual({ kind: 'not-found' });
    expect(routeRequest('/api/v1/pods', q())).toEqual({ kind: 'not-found' });
  });

  it('keeps the proxied path byte for byte (encoding, trailing slash)', () => {
    expect(routeRequest(`${GV}/clustergateways/c1/proxy/api/v1/namespaces/a%2Fb/pods/`, q())).toEqual({
      kind: 'proxy',
      name: 'c1',
      path: '/api/v1/namespaces/a%2Fb/pods/',
    });
    expect(routeRequest(`${GV}/clustergateways/c1/proxy/healthz`, q())).toEqual({ kind: 'proxy', name: 'c1', path: '/healthz' });
  });

  it('derives verbs as the API server does', () => {
    const proxy = routeRequest(`${GV}/clustergateways/c1/proxy/api`, q());
    expect(requestVerb('GET', proxy)).toBe('get');
    expect(requestVerb('POST', proxy)).toBe('create');
    expect(requestVerb('PUT', proxy)).toBe('update');
    expect(requestVerb('PATCH', proxy)).toBe('patch');
    expect(requestVerb('DELETE', proxy)).toBe('delete');
    expect(requestVerb('GET', { kind: 'collection', watch: false })).toBe('list');
    expect(requestVerb('GET', { kind: 'collection', watch: true })).toBe('watch');
    expect(requestVerb('GET', { kind: 'object', name: 'x', watch: true })).toBe('watch');
  });

  it('turns upstream clients’ __dryRun back into dryRun and leaves the rest alone', () => {
    expect(forwardedQuery('__dryRun=All&fieldManager=kubectl')).toBe('dryRun=All&fieldManager=kubectl');
    expect(forwardedQuery('dryRun=All&watch=1')).toBe('dryRun=All&watch=1');
    expect(forwardedQuery('')).toBe('');
  });
});

describe('cluster-gateway identity', () => {
  it('reads user, groups (one per header line) and extras from the front-proxy headers', () => {
    const who = identityFromHeaders(
      {
        'x-remote-user': ['alice'],
        'x-remote-group': ['team-a', 'with,comma', 'system:authenticated'],
        'x-remote-extra-scopes': ['s1', 's2'],
        'x-remote-extra-authentication.kubernetes.io%2fpod-name': ['p'],
      },
      DEFAULT_HEADER_NAMES,
    );
    expect(who).toEqual({
      user: 'alice',
      groups: ['team-a', 'with,comma', 'system:authenticated'],
      extra: { scopes: ['s1', 's2'], 'authentication.kubernetes.io/pod-name': ['p'] },
    });
    expect(identityFromHeaders({ 'x-remote-group': ['g'] }, DEFAULT_HEADER_NAMES)).toBeNull();
  });

  it('impersonates the caller with encoded extra keys', () => {
    expect(impersonationHeaders({ user: 'alice', groups: ['a', 'b'], extra: { 'authentication.kubernetes.io/pod-name': ['p'] } })).toEqual({
      'Impersonate-User': 'alice',
      'Impersonate-Group': ['a', 'b'],
      'Impersonate-Extra-authentication.kubernetes.io%2Fpod-name': ['p'],
    });
  });

  it('never forwards identity headers as they came', () => {
    for (const h of ['Authorization', 'X-Remote-User', 'x-remote-group', 'X-Remote-Extra-foo', 'Impersonate-User', 'impersonate-group'])
      expect(isIdentityHeader(h, DEFAULT_HEADER_NAMES)).toBe(true);
    expect(isIdentityHeader('Accept', DEFAULT_HEADER_NAMES)).toBe(false);
  });

  it('reads the front-proxy configuration from extension-apiserver-authentication', () => {
    const c = frontProxyConfigFrom({
      'requestheader-client-ca-file': 'PEM',
      'requestheader-allowed-names': '["front-proxy-client"]',
      'requestheader-username-headers': '["X-Remote-User"]',
      'requestheader-group-headers': '["X-Remote-Group"]',
      'requestheader-extra-headers-prefix': '["X-Remote-Extra-"]',
    });
    expect(c).toMatchObject({
      caPem: 'PEM',
      allowedNames: ['front-proxy-client'],
      usernameHeaders: ['X-Remote-User'],
      groupHeaders: ['X-Remote-Group'],
      extraHeaderPrefixes: ['X-Remote-Extra-'],
    });
    expect(() => frontProxyConfigFrom({})).toThrow(/requestheader-client-ca-file/);
  });

  it('reads upstream’s --feature-gates spelling', () => {
    expect([...enabledFeatureGates('ClientIdentityPenetration=true,HealthinessCheck=false')]).toEqual(['ClientIdentityPenetration']);
    expect(enabledFeatureGates('').size).toBe(0);
    expect(() => enabledFeatureGates('ClientIdentityPenetration')).toThrow(/Name=true or Name=false/);
  });

  it('words a refusal like the API server', () => {
    const who = { user: 'bob', groups: [], extra: {} };
    expect(
      forbiddenMessage(
        who,
        { group: 'cluster.core.oam.dev', version: 'v1alpha1', resource: 'clustergateways', subresource: 'proxy', name: 'c1', verb: 'get' },
        '',
      ),
    ).toBe(
      'clustergateways.cluster.core.oam.dev "c1" is forbidden: User "bob" cannot get resource "clustergateways/proxy" in API group "cluster.core.oam.dev" at the cluster scope',
    );
  });
});

describe('cluster-gateway objects', () => {
  it('a ServiceAccountToken/ClusterProxy Secret becomes a gateway whose token stays out of the object', () => {
    const r = gatewayFromSecret(
      secret('cluster1', TOKEN_PROXY, { token: 'sekret', 'ca.crt': 'CA' }, { annotations: { 'status.cluster.core.oam.dev/healthy': 'true' } }),
    );
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.gateway).toMatchObject({
      apiVersion: 'cluster.core.oam.dev/v1alpha1',
      kind: 'ClusterGateway',
      metadata: { name: 'cluster1' },
      spec: { provider: '', access: { endpoint: { type: 'ClusterProxy' }, credential: { type: 'ServiceAccountToken' } } },
      status: { healthy: true },
    });
    expect(JSON.stringify(r.gateway)).not.toContain('sekret');
    expect(r.target).toMatchObject({ endpoint: 'https://cluster1', token: 'sekret', caPem: 'CA', insecure: false });
  });

  it('Const takes the endpoint from the Secret, or from the ManagedCluster with OCM', () => {
    const s = secret(
      'c2',
      { 'cluster.core.oam.dev/cluster-credential-type': 'X509Certificate' },
      { endpoint: 'https://10.0.0.1:6443/prefix\n', 'tls.crt': 'C', 'tls.key': 'K' },
    );
    const plain = gatewayFromSecret(s);
    expect(plain.ok && plain.target).toMatchObject({
      endpointType: 'Const',
      endpoint: 'https://10.0.0.1:6443/prefix',
      insecure: true,
      certPem: 'C',
      keyPem: 'K',
    });
    const ocm = gatewayFromSecret(s, {
      metadata: { name: 'c2' },
      spec: { managedClusterClientConfigs: [{ url: 'https://10.9.9.9:6443', caBundle: b64('MCCA') }] },
    });
    expect(ocm.ok && ocm.target).toMatchObject({ endpoint: 'https://10.9.9.9:6443', caPem: 'MCCA', insecure: false });
  });

  it('explains Secrets that are not (valid) gateways', () => {
    expect(gatewayFromSecret(secret('x', {}, {}))).toMatchObject({
      ok: false,
      reason: expect.stringContaining('no cluster.core.oam.dev/cluster-credential-type'),
    });
    expect(gatewayFromSecret(secret('x', { ...TOKEN_PROXY, 'cluster.core.oam.dev/cluster-credential-type': 'Password' }, {}))).toMatchObject({
      ok: false,
      reason: expect.stringContaining('not one of ServiceAccountToken, X509Certificate'),
    });
    expect(gatewayFromSecret(secret('x', TOKEN_PROXY, {}))).toMatchObject({ ok: false, reason: expect.stringContaining('needs data.token') });
    expect(gatewayFromSecret(secret('x', { 'cluster.core.oam.dev/cluster-credential-type': 'ServiceAccountToken' }, { token: 't' }))).toMatchObject({
      ok: false,
      reason: expect.stringContaining('needs data.endpoint'),
    });
  });

  it('renders the kubectl table: NAME PROVIDER CREDENTIAL-TYPE ENDPOINT-TYPE HEALTHY', () => {
    const r = gatewayFromSecret(secret('cluster1', TOKEN_PROXY, { token: 't' }));
    if (!r.ok) throw new Error(r.reason);
    const table = gatewayTable([r.gateway], { resourceVersion: '5' }) as {
      columnDefinitions: { name: string }[];
      rows: { cells: string[]; object: { kind: string } }[];
    };
    expect(table.columnDefinitions.map((c) => c.name.toUpperCase())).toEqual(['NAME', 'PROVIDER', 'CREDENTIAL-TYPE', 'ENDPOINT-TYPE', 'HEALTHY']);
    expect(table.rows[0]!.cells).toEqual(['cluster1', '', 'ServiceAccountToken', 'ClusterProxy', 'Unknown']);
    expect(table.rows[0]!.object.kind).toBe('PartialObjectMetadata');
  });

  it('picks the representation from kubectl’s Accept header', () => {
    expect(presentationFor('application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json')).toEqual({
      presentation: 'table',
      version: 'v1',
    });
    expect(presentationFor('application/json')).toEqual({ presentation: 'object', version: '' });
    expect(presentationFor('application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io')).toEqual({ presentation: 'metadata', version: 'v1' });
    expect(presentationFor(undefined)).toEqual({ presentation: 'object', version: '' });
  });

  it('serves discovery and an OpenAPI schema kubectl explain can find by kind', () => {
    const resources = (apiResourceList() as { resources: { name: string; verbs: string[] }[] }).resources;
    expect(resources.map((r) => r.name)).toEqual(['clustergateways', 'clustergateways/health', 'clustergateways/proxy']);
    const schemas = (openApiV3() as { components: { schemas: Record<string, { 'x-kubernetes-group-version-kind'?: unknown[] }> } }).components.schemas;
    expect(
      Object.values(schemas).some(
        (s) =>
          JSON.stringify(s['x-kubernetes-group-version-kind']) ===
          JSON.stringify([{ group: 'cluster.core.oam.dev', version: 'v1alpha1', kind: 'ClusterGateway' }]),
      ),
    ).toBe(true);
    expect(Object.keys((openApiV3Index() as { paths: Record<string, unknown> }).paths)).toEqual(['apis/cluster.core.oam.dev/v1alpha1']);
    expect(
      wantsOnlyAggregatedDiscovery(
        'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList',
      ),
    ).toBe(true);
    expect(wantsOnlyAggregatedDiscovery('application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json')).toBe(false);
  });
});

describe('cluster-gateway proxying', () => {
  const r = gatewayFromSecret(secret('cluster1', TOKEN_PROXY, { token: 'tok', 'ca.crt': 'CA' }));
  if (!r.ok) throw new Error(r.reason);
  const caller = { user: 'alice', groups: ['devs'], extra: {} };
  const incoming = {
    accept: ['application/json'],
    authorization: ['Bearer hub-token'],
    'x-remote-user': ['alice'],
    'impersonate-user': ['mallory'],
    connection: ['keep-alive'],
    host: ['hub'],
    'content-type': ['application/json'],
    upgrade: ['websocket'],
  };

  it('sends the gateway credential, drops identity and hop-by-hop headers', () => {
    expect(outgoingHeaders(incoming, r.target, caller, { identityPenetration: false, headerNames: DEFAULT_HEADER_NAMES }, false)).toEqual({
      accept: 'application/json',
      'content-type': 'application/json',
      authorization: 'Bearer tok',
    });
  });

  it('with identity penetration the cluster judges the caller; upgrades keep Connection/Upgrade', () => {
    expect(outgoingHeaders(incoming, r.target, caller, { identityPenetration: true, headerNames: DEFAULT_HEADER_NAMES }, true)).toEqual({
      accept: 'application/json',
      'content-type': 'application/json',
      authorization: 'Bearer tok',
      connection: 'Upgrade',
      upgrade: 'websocket',
      'Impersonate-User': 'alice',
      'Impersonate-Group': ['devs'],
    });
  });

  it('keeps the endpoint’s path prefix and the query', () => {
    expect(upstreamPath({ ...r.target, endpoint: 'https://h:6443/base/' }, '/api/v1/pods', 'watch=1&__dryRun=All')).toBe(
      '/base/api/v1/pods?watch=1&dryRun=All',
    );
    expect(upstreamPath(r.target, '/healthz', '')).toBe('/healthz');
  });

  it('the seed-001 kubeconfig: the hub entry with the server ending in …/proxy', () => {
    expect(gatewayKubeconfigEntry({ name: 'hub', server: 'https://10.0.0.1:6443', caPem: 'CA', token: 't' }, 'cluster1')).toEqual({
      name: 'cluster1-via-gateway',
      server: 'https://10.0.0.1:6443/apis/cluster.core.oam.dev/v1alpha1/clustergateways/cluster1/proxy',
      caPem: 'CA',
      token: 't',
    });
  });
});

describe('cluster-gateway addon mode', () => {
  it('copies the MSA token into a ServiceAccountToken/ClusterProxy Secret, keeping health annotations', () => {
    const token = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'cluster-gateway', namespace: 'cluster1' },
      data: { token: b64('t'), 'ca.crt': b64('CA') },
    };
    const existing = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: 'cluster1',
        namespace: 'open-cluster-management-credentials',
        resourceVersion: '7',
        annotations: { 'status.cluster.core.oam.dev/healthy': 'true' },
      },
    };
    const s = credentialSecret('cluster1', token, existing);
    expect(s.metadata).toMatchObject({
      name: 'cluster1',
      resourceVersion: '7',
      annotations: { 'status.cluster.core.oam.dev/healthy': 'true' },
      labels: TOKEN_PROXY,
    });
    expect(s.data).toEqual({ token: b64('t'), 'ca.crt': b64('CA') });
  });

  it('writes health annotations only when they change; Available follows the probe', () => {
    const s = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'c', annotations: { 'status.cluster.core.oam.dev/healthy': 'true' } } };
    expect(healthAnnotationPatch(s, { healthy: true, reason: '' })).toBeNull();
    expect(healthAnnotationPatch(s, { healthy: false, reason: 'timeout' })).toEqual({
      metadata: { annotations: { 'status.cluster.core.oam.dev/healthy': 'false', 'status.cluster.core.oam.dev/healthy-reason': 'timeout' } },
    });
    expect(availableCondition('c', { healthy: true, reason: '' })).toMatchObject({ type: 'Available', status: 'True' });
    expect(availableCondition('c', { healthy: false, reason: 'no agent' })).toMatchObject({ status: 'False', message: expect.stringContaining('no agent') });
    expect(availableCondition('c', undefined)).toMatchObject({ status: 'Unknown' });
  });
});

/** A hand-fed stand-in for an Informer: the store only reads get/list/lastResourceVersion and subscribes. */
function fakeInformer<T extends { metadata: { name: string; resourceVersion?: string } }>() {
  const items = new Map<string, T>();
  const listeners: ((e: InformerEvent<T>) => void)[] = [];
  let rv = '0';
  const inf = {
    get: (n: string) => items.get(n),
    list: () => [...items.values()],
    lastResourceVersion: () => rv,
    onEvent: (l: (e: InformerEvent<T>) => void) => (listeners.push(l), () => undefined),
  };
  const feed = (type: InformerEvent<T>['type'], obj: T) => {
    rv = obj.metadata.resourceVersion ?? rv;
    if (type === 'DELETED') items.delete(obj.metadata.name);
    else items.set(obj.metadata.name, obj);
    for (const l of listeners) l({ type, object: obj });
  };
  return { inf: inf as unknown as Informer<T>, feed };
}

describe('cluster-gateway store', () => {
  it('emits ADDED/MODIFIED/DELETED from Secret changes, ignores unrelated ManagedCluster churn, and replays from a resourceVersion', () => {
    const secrets = fakeInformer<SecretLike>();
    const clusters = fakeInformer<{ metadata: { name: string; resourceVersion?: string } }>();
    const store = new GatewayStore(secrets.inf, clusters.inf);
    const seen: string[] = [];
    store.watch(null, (e) => seen.push(`${e.type} ${e.object.metadata.name} ${e.rv}`));
    secrets.feed('ADDED', secret('cluster1', TOKEN_PROXY, { token: 't' }, { resourceVersion: '11' }));
    clusters.feed('ADDED', { metadata: { name: 'cluster1', resourceVersion: '12' } });
    secrets.feed(
      'MODIFIED',
      secret('cluster1', TOKEN_PROXY, { token: 't' }, { resourceVersion: '13', annotations: { 'status.cluster.core.oam.dev/healthy': 'true' } }),
    );
    secrets.feed('ADDED', secret('not-a-gateway', {}, {}, { resourceVersion: '14' }));
    secrets.feed('DELETED', secret('cluster1', TOKEN_PROXY, { token: 't' }, { resourceVersion: '15' }));
    expect(seen).toEqual(['ADDED cluster1 11', 'MODIFIED cluster1 13', 'DELETED cluster1 15']);
    expect(store.list()).toEqual([]);
    expect(store.resourceVersion()).toBe('15');
    const resumed = store.watch(11n, () => undefined);
    expect(resumed?.replay.map((e) => e.type)).toEqual(['MODIFIED', 'DELETED']);
  });
});
