import { describe, expect, it } from 'vitest';
import { renderClusters } from '../../src/cli/commands/get.js';
import { InvalidInputError } from '../../src/errors.js';
import { ApiError, type KubeClient, type RequestOptions } from '../../src/kube/client.js';
import {
  acceptClusters,
  acceptTimeoutReport,
  approvable,
  clusterState,
  csrState,
  type CertificateSigningRequest,
  type ManagedCluster,
} from '../../src/ocm/accept.js';
import { BOOTSTRAP_TOKEN_SECONDS, BOOTSTRAP_USERNAME, CLIENT_SIGNER, CLUSTER_NAME_LABEL } from '../../src/ocm/constants.js';
import { clusterManagerObject, clusterManagerReady, hubBootstrapObjects } from '../../src/ocm/cluster-manager.js';
import { bootstrapKubeconfigIsCurrent, klusterletObject, tokenExpiry } from '../../src/ocm/klusterlet.js';
import { pinOperatorImage } from '../../src/ocm/operators.js';
import { checkWorkName, createWork, parseManifests, type ManifestWork } from '../../src/ocm/work.js';
import { ConflictError } from '../../src/errors.js';
import { renderKubeconfig } from '../../src/kube/kubeconfig.js';

function csr(opts: {
  name?: string;
  username?: string;
  cluster?: string;
  signer?: string;
  conditions?: string[];
  certificate?: string;
}): CertificateSigningRequest {
  return {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: {
      name: opts.name ?? 'cluster1-abcde',
      labels: opts.cluster === undefined ? { [CLUSTER_NAME_LABEL]: 'cluster1' } : { [CLUSTER_NAME_LABEL]: opts.cluster },
    },
    spec: { request: 'cmVx', signerName: opts.signer ?? CLIENT_SIGNER, username: opts.username ?? BOOTSTRAP_USERNAME },
    status: { conditions: (opts.conditions ?? []).map((type) => ({ type, status: 'True' })), ...(opts.certificate ? { certificate: opts.certificate } : {}) },
  };
}

function mc(name: string, accepts: boolean, conditions: Record<string, string>): ManagedCluster {
  return {
    apiVersion: 'cluster.open-cluster-management.io/v1',
    kind: 'ManagedCluster',
    metadata: { name },
    spec: { hubAcceptsClient: accepts },
    status: { conditions: Object.entries(conditions).map(([type, status]) => ({ type, status, reason: `${type}Reason`, message: `${type} says hi` })) },
  };
}

function jwt(expSeconds: number): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${part({ alg: 'RS256' })}.${part({ exp: expSeconds, sub: 'x' })}.sig`;
}

describe('ManifestWork manifests', () => {
  it('reads several documents, skips empty ones and unrolls a List', () => {
    const text = [
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: default',
      '',
      'apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Secret\n  metadata: {name: b, namespace: default}\n- apiVersion: rbac.authorization.k8s.io/v1\n  kind: ClusterRole\n  metadata: {name: c}',
      '',
    ].join('\n---\n');
    const manifests = parseManifests(text, 'in.yaml');
    expect(manifests.map((m) => `${m.kind}/${m.metadata.name}`)).toEqual(['ConfigMap/a', 'Secret/b', 'ClusterRole/c']);
  });

  it('names the document and the missing field', () => {
    const text = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nmetadata: {name: b}\n';
    expect(() => parseManifests(text, 'in.yaml')).toThrowError(/in\.yaml: document 2: missing field 'kind'/);
    expect(() => parseManifests('kind: ConfigMap\nmetadata: {name: a}\n', '-')).toThrowError(/document 1: missing field 'apiVersion'/);
    expect(() => parseManifests('apiVersion: v1\nkind: ConfigMap\nmetadata: {generateName: a-}\n', 'f')).toThrowError(
      /document 1 \(ConfigMap\): missing field 'metadata.name'/,
    );
    expect(() => parseManifests('apiVersion: v1\nkind: List\nitems:\n- kind: X\n', 'f')).toThrowError(/document 1, item 1: missing field 'apiVersion'/);
  });

  it('refuses input that is not objects, with exit code 2', () => {
    for (const text of ['', '---\n', '- a\n- b\n', 'just text', 'a: [1\n']) {
      let caught: unknown;
      try {
        parseManifests(text, 'x');
      } catch (err) {
        caught = err;
      }
      expect(caught, JSON.stringify(text)).toBeInstanceOf(InvalidInputError);
      expect((caught as InvalidInputError).exitCode).toBe(2);
    }
  });

  /** The hub calls create work makes: read the ManagedCluster and the work, then POST or PUT it. */
  function workHub(existing: ManifestWork | null, refuse?: ApiError) {
    const writes: { method: string; path: string; body: unknown; query: unknown }[] = [];
    const notFound = (path: string) => new ApiError(404, 'NotFound', `GET ${path}: 404 NotFound: not found`);
    const write = async (method: string, path: string, body: unknown, query: unknown) => {
      if (refuse) throw refuse;
      writes.push({ method, path, body, query });
      return body;
    };
    const hub = {
      get: async (path: string) => {
        if (path === '/apis/cluster.open-cluster-management.io/v1/managedclusters/cluster1') return mc('cluster1', true, {});
        if (path === '/apis/work.open-cluster-management.io/v1/namespaces/cluster1/manifestworks/w1' && existing) return existing;
        throw notFound(path);
      },
      post: (path: string, body: unknown, query: unknown) => write('POST', path, body, query),
      request: (method: string, path: string, opts: RequestOptions) => write(method, path, opts.body, opts.query),
    } as unknown as KubeClient;
    return { hub, writes };
  }
  const manifests = parseManifests('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: default}\n', 'in.yaml');

  it('creates a work as ocm-lab, replaces it only with overwrite, and shows the hub’s refusal in its words', async () => {
    const created = workHub(null);
    expect((await createWork(created.hub, { name: 'w1', cluster: 'cluster1', manifests })).action).toBe('created');
    expect(created.writes).toEqual([
      {
        method: 'POST',
        path: '/apis/work.open-cluster-management.io/v1/namespaces/cluster1/manifestworks',
        body: expect.objectContaining({ kind: 'ManifestWork', spec: { workload: { manifests } } }),
        query: { fieldManager: 'ocm-lab' },
      },
    ]);

    const old: ManifestWork = {
      apiVersion: 'work.open-cluster-management.io/v1',
      kind: 'ManifestWork',
      metadata: { name: 'w1', namespace: 'cluster1', resourceVersion: '7' },
      spec: { workload: { manifests: [] } },
    };
    await expect(createWork(workHub(old).hub, { name: 'w1', cluster: 'cluster1', manifests })).rejects.toThrow(ConflictError);
    const replaced = workHub(old);
    expect((await createWork(replaced.hub, { name: 'w1', cluster: 'cluster1', manifests, overwrite: true })).action).toBe('updated');
    expect(replaced.writes).toEqual([
      {
        method: 'PUT',
        path: '/apis/work.open-cluster-management.io/v1/namespaces/cluster1/manifestworks/w1',
        body: { ...old, spec: { workload: { manifests } } },
        query: { fieldManager: 'ocm-lab' },
      },
    ]);

    const refusal = new ApiError(
      422,
      'Invalid',
      'POST /apis/work.open-cluster-management.io/v1/namespaces/cluster1/manifestworks: 422 Invalid: ManifestWork "w1" is invalid: spec.workload: too big',
    );
    const refused = createWork(workHub(null, refusal).hub, { name: 'w1', cluster: 'cluster1', manifests });
    await expect(refused).rejects.toThrow(InvalidInputError);
    await expect(refused).rejects.toThrow(/the hub refused ManifestWork cluster1\/w1: .*422 Invalid: ManifestWork "w1" is invalid: spec.workload: too big/);
  });

  it('checks work names', () => {
    expect(() => checkWorkName('dep-role')).not.toThrow();
    expect(() => checkWorkName('Dep_Role')).toThrowError(/not a valid Kubernetes name/);
    expect(() => checkWorkName('')).toThrowError(InvalidInputError);
  });
});

describe('accept', () => {
  it('approves only pending client CSRs of the bootstrap identity for the named cluster', () => {
    expect(approvable(csr({}), 'cluster1')).toBe(true);
    expect(approvable(csr({ username: 'intruder' }), 'cluster1')).toBe(false);
    expect(approvable(csr({ username: 'system:serviceaccount:default:default' }), 'cluster1')).toBe(false);
    expect(approvable(csr({ cluster: 'cluster2' }), 'cluster1')).toBe(false);
    expect(approvable(csr({ signer: 'kubernetes.io/kubelet-serving' }), 'cluster1')).toBe(false);
    expect(approvable(csr({ conditions: ['Approved'] }), 'cluster1')).toBe(false);
    expect(approvable(csr({ conditions: ['Denied'] }), 'cluster1')).toBe(false);
  });

  /** The few hub calls accept makes: read the ManagedCluster, list CSRs, and record every write. */
  function fakeHub(state: { managedCluster: ManagedCluster | null; csrs: CertificateSigningRequest[] }) {
    const writes: { method: string; path: string; opts: RequestOptions }[] = [];
    const hub = {
      get: async (path: string, query?: RequestOptions['query']) => {
        if (path === '/apis/cluster.open-cluster-management.io/v1/managedclusters/cluster1') {
          if (state.managedCluster) return state.managedCluster;
          throw new ApiError(404, 'NotFound', `GET ${path}: 404 NotFound: managedclusters.cluster.open-cluster-management.io "cluster1" not found`);
        }
        if (path === '/apis/certificates.k8s.io/v1/certificatesigningrequests' && query?.labelSelector === `${CLUSTER_NAME_LABEL}=cluster1`)
          return { items: state.csrs };
        throw new Error(`unexpected GET ${path}`);
      },
      request: async (method: string, path: string, opts: RequestOptions) => {
        writes.push({ method, path, opts });
        return {};
      },
    } as unknown as KubeClient;
    return { hub, writes };
  }

  it('approves a cluster’s CSR only once its ManagedCluster exists (the agent cannot create it after bootstrap)', async () => {
    const state = { managedCluster: null as ManagedCluster | null, csrs: [csr({ name: 'cluster1-x' }), csr({ name: 'cluster1-evil', username: 'mallory' })] };
    const { hub, writes } = fakeHub(state);
    await expect(acceptClusters(hub, ['cluster1'], { timeoutMs: 50, intervalMs: 10 })).rejects.toThrow(/ManagedCluster cluster1 does not exist/);
    expect(writes).toEqual([]);
    state.managedCluster = mc('cluster1', true, { HubAcceptedManagedCluster: 'True', ManagedClusterJoined: 'True', ManagedClusterConditionAvailable: 'True' });
    await acceptClusters(hub, ['cluster1'], { timeoutMs: 1_000, intervalMs: 10 });
    expect(writes.map((w) => `${w.method} ${w.path}`)).toEqual(['PUT /apis/certificates.k8s.io/v1/certificatesigningrequests/cluster1-x/approval']);
    const approval = writes[0]!.opts;
    expect(approval.query).toEqual({ fieldManager: 'ocm-lab' });
    const conditions = (approval.body as CertificateSigningRequest).status?.conditions ?? [];
    expect(conditions).toEqual([expect.objectContaining({ type: 'Approved', status: 'True', reason: 'AcceptedByOcmLab' })]);
    expect(conditions[0]!.lastUpdateTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  it('sets hubAcceptsClient with a merge patch as ocm-lab', async () => {
    const { hub, writes } = fakeHub({ managedCluster: mc('cluster1', false, {}), csrs: [] });
    await expect(acceptClusters(hub, ['cluster1'], { timeoutMs: 30, intervalMs: 10 })).rejects.toThrow(/not accepted/);
    expect(writes[0]).toEqual({
      method: 'PATCH',
      path: '/apis/cluster.open-cluster-management.io/v1/managedclusters/cluster1',
      opts: { body: { spec: { hubAcceptsClient: true } }, contentType: 'application/merge-patch+json', query: { fieldManager: 'ocm-lab' } },
    });
  });

  it('tells CSR states apart', () => {
    expect(csrState(csr({}))).toBe('Pending');
    expect(csrState(csr({ conditions: ['Approved'] }))).toBe('Approved');
    expect(csrState(csr({ conditions: ['Approved'], certificate: 'Y2VydA==' }))).toBe('Issued');
    expect(csrState(csr({ conditions: ['Denied'] }))).toBe('Denied');
  });

  it('reads the kubectl view of a ManagedCluster', () => {
    expect(clusterState(mc('c1', true, { ManagedClusterJoined: 'True', ManagedClusterConditionAvailable: 'Unknown' }))).toEqual({
      name: 'c1',
      hubAccepted: true,
      joined: true,
      available: false,
    });
  });

  it('reports a cluster that never registered, with what the clusters said', () => {
    const report = acceptTimeoutReport({
      cluster: 'cluster2',
      timeoutMs: 90_000,
      managedCluster: null,
      csrs: [],
      diagnostics:
        'cluster2:\n  Deployment open-cluster-management-agent/klusterlet-registration-agent: 0/1 available\n    dial tcp 10.0.0.1:6443: connect: connection refused',
    });
    expect(report).toContain('cluster cluster2 was not accepted, joined and available within 90 s');
    expect(report).toContain('ManagedCluster cluster2 does not exist on the hub');
    expect(report).toContain('no CSR labelled open-cluster-management.io/cluster-name=cluster2 exists');
    expect(report).toContain('klusterlet-registration-agent: 0/1 available\n    dial tcp 10.0.0.1:6443: connect: connection refused');
  });

  it('names exactly the conditions that are missing and who asked for each CSR', () => {
    const report = acceptTimeoutReport({
      cluster: 'cluster1',
      timeoutMs: 5_000,
      managedCluster: mc('cluster1', true, { HubAcceptedManagedCluster: 'True', ManagedClusterJoined: 'True', ManagedClusterConditionAvailable: 'False' }),
      csrs: [csr({ name: 'cluster1-good', conditions: ['Approved'], certificate: 'eA==' }), csr({ name: 'cluster1-evil', username: 'mallory' })],
      diagnostics: '',
    });
    expect(report).not.toContain('hubAcceptsClient');
    expect(report).not.toContain('condition ManagedClusterJoined');
    expect(report).not.toContain('condition HubAcceptedManagedCluster');
    expect(report).toContain(
      'missing: condition ManagedClusterConditionAvailable is False (ManagedClusterConditionAvailableReason: ManagedClusterConditionAvailable says hi)',
    );
    expect(report).toContain('CSR cluster1-good: Issued, requested by the bootstrap identity');
    expect(report).toContain('CSR cluster1-evil: Pending, requested by mallory (not the bootstrap identity: not approved)');
  });

  it('reports a cluster the hub has not accepted and conditions never reported', () => {
    const report = acceptTimeoutReport({ cluster: 'c', timeoutMs: 1_000, managedCluster: mc('c', false, {}), csrs: [], diagnostics: '' });
    expect(report).toContain('missing: spec.hubAcceptsClient is not true');
    expect(report).toContain('missing: condition HubAcceptedManagedCluster is not reported yet');
    expect(report).toContain('missing: condition ManagedClusterJoined is not reported yet');
    expect(report).toContain('missing: condition ManagedClusterConditionAvailable is not reported yet');
  });
});

describe('bootstrap kubeconfig', () => {
  const now = Date.UTC(2026, 0, 1);
  const fresh = jwt(now / 1000 + BOOTSTRAP_TOKEN_SECONDS);
  const text = (server: string, ca: string, token: string) => renderKubeconfig([{ name: 'hub', server, caPem: ca, token }]);

  it('reads the expiry of a token', () => {
    expect(tokenExpiry(jwt(1000))).toBe(1_000_000);
    expect(tokenExpiry('not-a-jwt')).toBeNull();
  });

  it('is kept while it names the same hub and CA and its token has time left', () => {
    expect(bootstrapKubeconfigIsCurrent(text('https://h:6443', 'CA', fresh), 'https://h:6443', 'CA', now)).toBe(true);
    expect(bootstrapKubeconfigIsCurrent(text('https://other:6443', 'CA', fresh), 'https://h:6443', 'CA', now)).toBe(false);
    expect(bootstrapKubeconfigIsCurrent(text('https://h:6443', 'OLD CA', fresh), 'https://h:6443', 'CA', now)).toBe(false);
    expect(bootstrapKubeconfigIsCurrent(text('https://h:6443', 'CA', jwt(now / 1000 + 60)), 'https://h:6443', 'CA', now)).toBe(false);
    expect(bootstrapKubeconfigIsCurrent(null, 'https://h:6443', 'CA', now)).toBe(false);
    expect(bootstrapKubeconfigIsCurrent('{{{', 'https://h:6443', 'CA', now)).toBe(false);
  });
});

describe('OCM as clusteradm installs it', () => {
  it('pins the operator image to the lab OCM version and leaves every other object alone', () => {
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'klusterlet', namespace: 'open-cluster-management' },
      spec: {
        template: {
          spec: {
            containers: [
              { name: 'klusterlet', image: 'quay.io/open-cluster-management/registration-operator:latest' },
              { name: 'other', image: 'busybox' },
            ],
          },
        },
      },
    };
    const namespace = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'open-cluster-management' } };
    const [ns, pinned] = pinOperatorImage([namespace, deployment], 'v1.2.1');
    expect(ns).toBe(namespace);
    const containers = (pinned!.spec as typeof deployment.spec).template.spec.containers;
    expect(containers.map((c) => c.image)).toEqual(['quay.io/open-cluster-management/registration-operator:v1.2.1', 'busybox']);
  });

  it('asks for every image at the lab OCM version, in Default mode', () => {
    const cm = clusterManagerObject('v1.2.1');
    expect(cm.metadata.name).toBe('cluster-manager');
    expect(cm.spec).toMatchObject({
      registrationImagePullSpec: 'quay.io/open-cluster-management/registration:v1.2.1',
      workImagePullSpec: 'quay.io/open-cluster-management/work:v1.2.1',
      placementImagePullSpec: 'quay.io/open-cluster-management/placement:v1.2.1',
      addOnManagerImagePullSpec: 'quay.io/open-cluster-management/addon-manager:v1.2.1',
      deployOption: { mode: 'Default' },
    });
    const k = klusterletObject('cluster1', 'https://10.9.2.10:6443', 'v1.2.1');
    expect(k.spec).toMatchObject({
      clusterName: 'cluster1',
      namespace: 'open-cluster-management-agent',
      deployOption: { mode: 'Default' },
      imagePullSpec: 'quay.io/open-cluster-management/registration-operator:v1.2.1',
      externalServerURLs: [{ url: 'https://10.9.2.10:6443' }],
    });
  });

  it('binds the bootstrap identity clusteradm uses, and the user accept trusts is that ServiceAccount', () => {
    const [sa, role, binding] = hubBootstrapObjects();
    expect(sa!.metadata).toEqual({ name: 'cluster-bootstrap', namespace: 'open-cluster-management' });
    expect(role!.metadata.name).toBe('system:open-cluster-management:bootstrap');
    expect(binding).toMatchObject({
      roleRef: { name: 'system:open-cluster-management:bootstrap' },
      subjects: [{ kind: 'ServiceAccount', name: 'cluster-bootstrap', namespace: 'open-cluster-management' }],
    });
    expect(BOOTSTRAP_USERNAME).toBe('system:serviceaccount:open-cluster-management:cluster-bootstrap');
  });

  it('calls the hub up to date only when applied, rolled out and not degraded, and says what is missing', () => {
    const cm = (conditions: Record<string, string>) => ({
      ...clusterManagerObject('v1.2.1'),
      status: { conditions: Object.entries(conditions).map(([type, status]) => ({ type, status, reason: `${type}Reason`, message: '' })) },
    });
    expect(clusterManagerReady(null)).toEqual({ ready: false, why: 'no ClusterManager yet' });
    expect(clusterManagerReady(cm({ Applied: 'True', Progressing: 'True', HubRegistrationDegraded: 'False', HubPlacementDegraded: 'False' })).why).toBe(
      'Progressing is True (ProgressingReason)',
    );
    expect(clusterManagerReady(cm({ Applied: 'True', Progressing: 'False', HubRegistrationDegraded: 'False' })).why).toBe(
      'HubPlacementDegraded is not reported yet',
    );
    expect(clusterManagerReady(cm({ Applied: 'True', Progressing: 'False', HubRegistrationDegraded: 'False', HubPlacementDegraded: 'False' }))).toEqual({
      ready: true,
      why: '',
    });
  });
});

describe('get clusters', () => {
  it('renders the kubectl columns', () => {
    const text = renderClusters({ clusters: [{ name: 'cluster1', hubAccepted: true, joined: true, available: false }] });
    expect(text.split('\n')).toEqual(['NAME       HUB ACCEPTED   JOINED   AVAILABLE', 'cluster1   true           True     False']);
    expect(renderClusters({ clusters: [] })).toBe('No managed clusters.');
  });
});
