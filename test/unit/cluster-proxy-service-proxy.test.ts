import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  bearerToken,
  decideAuthentication,
  isImpersonationHeader,
  parseUserRequest,
  serviceProxyHost,
  splitSchemeNamePort,
  targetFromHeaders,
  targetHeaders,
  UserRequestError,
} from '../../src/addons/cluster-proxy/service-routing.js';
import { endToEndHeaders } from '../../src/addons/cluster-proxy/http-forward.js';
import { proxyAgentManifests } from '../../src/addons/cluster-proxy/manifests.js';
import { defaultProxyConfiguration, userServerEnabled } from '../../src/addons/cluster-proxy/configuration.js';
import { userServerDeployment, userServerNames, userServerService } from '../../src/addons/cluster-proxy/user-server-manifests.js';
import { managerObjects } from '../../src/addons/install.js';

const lower = (h: Record<string, string>) => Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));

describe('user server: what a path asks for', () => {
  it("reads upstream's Service example: cluster, scheme, namespace, name, port, path and query", () => {
    expect(parseUserRequest('/cluster1/api/v1/namespaces/default/services/https:helloworld:8080/proxy-service/ping?time-out=32s')).toEqual({
      kind: 'service',
      cluster: 'cluster1',
      proto: 'https',
      namespace: 'default',
      service: 'helloworld',
      port: '8080',
      path: '/ping',
      query: 'time-out=32s',
    });
  });

  it('defaults the scheme to https, keeps http, and forwards deeper paths whole', () => {
    expect(parseUserRequest('/c/api/v1/namespaces/ns/services/web:80/proxy-service/a/b/').proto).toBe('https');
    const t = parseUserRequest('/c/api/v1/namespaces/ns/services/http:web:80/proxy-service/a/b/');
    expect(t).toMatchObject({ proto: 'http', service: 'web', port: '80', path: '/a/b/', query: '' });
    expect(parseUserRequest('/c/api/v1/namespaces/ns/services/http:web:80/proxy-service/').path).toBe('/');
  });

  it('sends everything else to the API server, path from the second segment on', () => {
    expect(parseUserRequest('/cluster1/api/v1/pods?timeout=32s')).toMatchObject({
      kind: 'kube-apiserver',
      cluster: 'cluster1',
      proto: 'https',
      namespace: 'default',
      service: 'kubernetes',
      port: '443',
      path: '/api/v1/pods',
      query: 'timeout=32s',
    });
    // Exactly 9 parts (nothing after proxy-service) is not a Service request upstream either.
    expect(parseUserRequest('/c/api/v1/namespaces/ns/services/http:web:80/proxy-service').kind).toBe('kube-apiserver');
    expect(parseUserRequest('/c/').path).toBe('/');
  });

  it('refuses what it cannot route, naming the part and the fix', () => {
    expect(() => parseUserRequest('/c/api/v1/namespaces/ns/services/web/proxy-service/x')).toThrow(/names no port: add it, e\.g\. web:8080/);
    expect(() => parseUserRequest('/c/api/v1/namespaces/ns/services/ftp:web:21/proxy-service/x')).toThrow(UserRequestError);
    expect(() => parseUserRequest('/c/api/v1/namespaces/ns/services/a:b:c:d/proxy-service/x')).toThrow(/expected \[http:\|https:\]name:port/);
    expect(() => parseUserRequest('/cluster1')).toThrow(/expected \/<cluster>\//);
    expect(() => parseUserRequest('/')).toThrow(UserRequestError);
  });

  it("splits [scheme:]name[:port] as Kubernetes' SplitSchemeNamePort does", () => {
    expect(splitSchemeNamePort('web')).toEqual({ scheme: '', name: 'web', port: '' });
    expect(splitSchemeNamePort('web:http')).toEqual({ scheme: '', name: 'web', port: 'http' });
    expect(splitSchemeNamePort('https:web:443')).toEqual({ scheme: 'https', name: 'web', port: '443' });
    expect(splitSchemeNamePort(':80')).toBeNull();
    expect(splitSchemeNamePort('tcp:web:80')).toBeNull();
  });

  it("names a cluster's service proxy as upstream: cluster-<sha256>[:56].open-cluster-management.proxy", () => {
    const host = serviceProxyHost('cluster1');
    const hex = crypto.createHash('sha256').update('cluster1').digest('hex');
    expect(host).toBe(`cluster-${hex.slice(0, 48)}.open-cluster-management.proxy`);
    expect(host.split('.')[0]).toHaveLength(56);
    expect(serviceProxyHost('cluster2')).not.toBe(host);
  });
});

describe('service proxy: the Cluster-Proxy-* headers', () => {
  it('carries a Service target and reads it back as <proto>://<svc>.<ns>.svc:<port>', () => {
    const h = lower(targetHeaders({ proto: 'http', namespace: 'demo', service: 'web', port: '8080' }));
    expect(Object.keys(targetHeaders({ proto: 'http', namespace: 'demo', service: 'web', port: '8080' }))).toEqual([
      'Cluster-Proxy-Proto',
      'Cluster-Proxy-Namespace',
      'Cluster-Proxy-Service',
      'Cluster-Proxy-Port',
    ]);
    expect(targetFromHeaders(h)).toMatchObject({ kind: 'service', url: 'http://web.demo.svc:8080' });
  });

  it('reads https/kubernetes/default/443 as the API server', () => {
    expect(targetFromHeaders(lower(targetHeaders(parseUserRequest('/c/api')))).kind).toBe('kube-apiserver');
  });

  it('refuses missing or malformed headers by name', () => {
    expect(() => targetFromHeaders({ 'cluster-proxy-proto': 'http' })).toThrow(
      /missing header Cluster-Proxy-Namespace, Cluster-Proxy-Service, Cluster-Proxy-Port/,
    );
    const ok = lower(targetHeaders({ proto: 'http', namespace: 'demo', service: 'web', port: '8080' }));
    expect(() => targetFromHeaders({ ...ok, 'cluster-proxy-port': '99999' })).toThrow(/Cluster-Proxy-Port: "99999"/);
    expect(() => targetFromHeaders({ ...ok, 'cluster-proxy-service': 'web.evil.com' })).toThrow(/Cluster-Proxy-Service/);
    expect(() => targetFromHeaders({ ...ok, 'cluster-proxy-proto': 'gopher' })).toThrow(/Cluster-Proxy-Proto/);
  });
});

describe('service proxy: whose identity reaches the API server', () => {
  it("passes a managed cluster's own token unchanged", () => {
    expect(decideAuthentication({ username: 'system:serviceaccount:default:app' }, null)).toEqual({ action: 'pass' });
  });

  it('impersonates a hub ServiceAccount as cluster:hub:system:serviceaccount:… with its groups', () => {
    expect(decideAuthentication(null, { username: 'system:serviceaccount:team:bot', groups: ['system:serviceaccounts', 'system:authenticated'] })).toEqual({
      action: 'impersonate',
      user: 'cluster:hub:system:serviceaccount:team:bot',
      groups: ['system:serviceaccounts', 'system:authenticated'],
    });
  });

  it('impersonates another hub user by name, and refuses a token neither cluster knows', () => {
    expect(decideAuthentication(null, { username: 'alice' })).toEqual({ action: 'impersonate', user: 'alice', groups: [] });
    expect(decideAuthentication(null, null)).toMatchObject({ action: 'reject' });
  });

  it('reads bearer tokens only, and spots caller-chosen impersonation headers', () => {
    expect(bearerToken('Bearer abc')).toBe('abc');
    expect(bearerToken('Basic abc')).toBe('');
    expect(bearerToken(undefined)).toBe('');
    expect(['Impersonate-Group', 'impersonate-user', 'Impersonate-Extra-scopes', 'Impersonate-Uid'].every(isImpersonationHeader)).toBe(true);
    expect(isImpersonationHeader('Authorization')).toBe(false);
  });
});

describe('HTTP hops', () => {
  it('drop hop-by-hop headers and those Connection names, keep Authorization', () => {
    expect(
      endToEndHeaders({
        connection: 'keep-alive, x-drop',
        'keep-alive': '5',
        'x-drop': '1',
        'transfer-encoding': 'chunked',
        host: 'h',
        authorization: 'Bearer t',
        accept: '*/*',
      }),
    ).toEqual({ authorization: 'Bearer t', accept: '*/*' });
  });
});

describe('cluster-proxy manifests with spec.userServer', () => {
  const mpc = defaultProxyConfiguration('10.0.1.2');
  type Deployment = {
    spec: {
      template: {
        spec: {
          containers: { name: string; args: string[]; volumeMounts: { name: string }[] }[];
          volumes: { name: string; secret?: { secretName: string; optional?: boolean } }[];
        };
      };
    };
  };

  it('is on in the lab by default', () => {
    expect(userServerEnabled(mpc)).toBe(true);
    expect(userServerEnabled({ ...mpc, spec: { ...mpc.spec, userServer: undefined } })).toBe(false);
  });

  it('gives the agent pod the service proxy: identifier, loopback mapping, container, certificate, RBAC', () => {
    const objects = proxyAgentManifests('cluster1', mpc, { certPem: 'C', keyPem: 'K' }, 'CA', {
      cert: { certPem: 'SC', keyPem: 'SK' },
      tlsArgs: ['--tls-min-version=VersionTLS13'],
      agentNamespace: 'moved',
    });
    const host = serviceProxyHost('cluster1');
    const d = objects.find((o) => o.kind === 'Deployment') as unknown as Deployment;
    const [agent, sp] = d.spec.template.spec.containers;
    expect(agent!.args).toContain(`--agent-identifiers=host=cluster1&host=cluster1.open-cluster-management-cluster-proxy&host=${host}`);
    expect(agent!.args).toContain(`--host-mapping=${host}:7443=127.0.0.1:7443`);
    expect(sp!.name).toBe('service-proxy');
    expect(sp!.args).toEqual(
      expect.arrayContaining(['service-proxy', '--enable-impersonation=true', '--hub-kubeconfig=/etc/kubeconfig/kubeconfig', '--tls-min-version=VersionTLS13']),
    );
    expect(d.spec.template.spec.volumes.find((v) => v.name === 'hub-kubeconfig')?.secret).toEqual({
      secretName: 'cluster-proxy-hub-kubeconfig',
      optional: true,
    });
    expect(objects.find((o) => o.kind === 'Secret' && o.metadata.name === 'cluster-proxy-service-proxy-server-certificates')).toBeTruthy();
    const role = objects.find((o) => o.kind === 'ClusterRole') as unknown as { rules: { resources: string[]; verbs: string[] }[] };
    expect((objects.find((o) => o.kind === 'ClusterRoleBinding') as unknown as { subjects: { namespace: string }[] }).subjects[0]!.namespace).toBe('moved');
    expect(role.rules).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ resources: ['users', 'groups'], verbs: ['impersonate'] }),
        expect.objectContaining({ resources: ['tokenreviews'], verbs: ['create'] }),
      ]),
    );
  });

  it('leaves the agent pod as before without it', () => {
    const objects = proxyAgentManifests('cluster1', mpc, { certPem: 'C', keyPem: 'K' }, 'CA');
    const d = objects.find((o) => o.kind === 'Deployment') as unknown as Deployment;
    expect(d.spec.template.spec.containers.map((c) => c.name)).toEqual(['proxy-agent']);
    expect(objects.some((o) => o.kind === 'ClusterRole')).toBe(false);
  });

  it("names the user server's certificate as upstream: loopback, the Service's names, additionalSANs", () => {
    expect(userServerNames(['user.example', '192.0.2.7'])).toEqual({
      dnsNames: [
        'localhost',
        'cluster-proxy-addon-user',
        'cluster-proxy-addon-user.open-cluster-management-cluster-proxy',
        'cluster-proxy-addon-user.open-cluster-management-cluster-proxy.svc',
        'cluster-proxy-addon-user.open-cluster-management-cluster-proxy.svc.cluster.local',
        'user.example',
      ],
      ipAddresses: ['127.0.0.1', '192.0.2.7'],
    });
  });

  it('runs the user server in Deployment and Service cluster-proxy-addon-user on 9092 with the TLS profile', () => {
    const d = userServerDeployment(mpc, { tlsArgs: ['--tls-min-version=VersionTLS13'], certificateDigest: 'x' }) as unknown as Deployment & {
      metadata: { name: string };
    };
    expect(d.metadata.name).toBe('cluster-proxy-addon-user');
    const args = d.spec.template.spec.containers[0]!.args;
    expect(args).toEqual(
      expect.arrayContaining([
        'user-server',
        '--server-port=9092',
        '--host=proxy-entrypoint.open-cluster-management-cluster-proxy.svc',
        '--tls-min-version=VersionTLS13',
      ]),
    );
    expect(d.spec.template.spec.volumes.map((v) => v.secret?.secretName)).toEqual(['cluster-proxy-user-serving-cert', 'proxy-server-ca', 'proxy-client']);
    expect(userServerService().spec).toMatchObject({ ports: [{ port: 9092, targetPort: 9092 }] });
  });

  it("binds hub TokenReview to cluster-proxy's agents with the manager", () => {
    const crb = managerObjects('cluster-proxy', '10.0.1.2').find(
      (o) => o.kind === 'ClusterRoleBinding' && o.metadata.name === 'cluster-proxy-addon-agent-tokenreview',
    ) as unknown as { subjects: { name: string }[] };
    expect(crb.subjects[0]!.name).toBe('system:open-cluster-management:addon:cluster-proxy');
    expect(managerObjects('managed-serviceaccount', '').some((o) => o.metadata.name === 'cluster-proxy-addon-agent-tokenreview')).toBe(false);
  });
});
