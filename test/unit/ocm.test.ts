import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { V1CertificateSigningRequest } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { renderClusters } from '../../src/cli/commands/get.js';
import { InvalidInputError, MissingPrerequisiteError } from '../../src/errors.js';
import { planCluster } from '../../src/lab/plan.js';
import { acceptClusters, acceptTimeoutReport, approvable, clusterState, csrState, type ManagedCluster } from '../../src/ocm/accept.js';
import type { KubeClients } from '../../src/ocm/kube.js';
import { BOOTSTRAP_TOKEN_SECONDS, BOOTSTRAP_USERNAME, CLIENT_SIGNER, CLUSTER_NAME_LABEL } from '../../src/ocm/constants.js';
import { ADDON_CONVERSION_CRDS, crdHash, hubCrds, readCrds, type Crd } from '../../src/ocm/crds.js';
import { bootstrapKubeconfigIsCurrent, tokenExpiry } from '../../src/ocm/join.js';
import { ocmLayout } from '../../src/ocm/layout.js';
import { hubProcessSpecs, klusterletSpec } from '../../src/ocm/processes.js';
import { checkWorkName, parseManifests } from '../../src/ocm/work.js';
import { renderKubeconfig } from '../../src/kube/kubeconfig.js';

function csr(opts: { name?: string; username?: string; cluster?: string; signer?: string; conditions?: string[]; certificate?: string }): V1CertificateSigningRequest {
  return {
    metadata: { name: opts.name ?? 'cluster1-abcde', labels: opts.cluster === undefined ? { [CLUSTER_NAME_LABEL]: 'cluster1' } : { [CLUSTER_NAME_LABEL]: opts.cluster } },
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
    expect(() => parseManifests('apiVersion: v1\nkind: ConfigMap\nmetadata: {generateName: a-}\n', 'f')).toThrowError(/document 1 \(ConfigMap\): missing field 'metadata.name'/);
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

  it('approves a cluster’s CSR only once its ManagedCluster exists (the agent cannot create it after bootstrap)', async () => {
    let managedCluster: ManagedCluster | null = null;
    const approvals: string[] = [];
    const hub = {
      certificates: {
        listCertificateSigningRequest: async () => ({ items: [csr({ name: 'cluster1-x' })] }),
        replaceCertificateSigningRequestApproval: async ({ name }: { name: string }) => approvals.push(name),
      },
      objects: {
        read: async () => {
          if (managedCluster) return managedCluster;
          throw Object.assign(new Error('not found'), { code: 404 });
        },
        patch: async () => undefined,
      },
    } as unknown as KubeClients;
    await expect(acceptClusters(hub, ['cluster1'], { timeoutMs: 50, intervalMs: 10 })).rejects.toThrow(/ManagedCluster cluster1 does not exist/);
    expect(approvals).toEqual([]);
    managedCluster = mc('cluster1', true, { HubAcceptedManagedCluster: 'True', ManagedClusterJoined: 'True', ManagedClusterConditionAvailable: 'True' });
    await acceptClusters(hub, ['cluster1'], { timeoutMs: 1_000, intervalMs: 10 });
    expect(approvals).toEqual(['cluster1-x']);
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

  it('reports a cluster that never registered, with its log tails', () => {
    const report = acceptTimeoutReport({
      cluster: 'cluster2',
      timeoutMs: 90_000,
      managedCluster: null,
      csrs: [],
      logs: [{ name: 'cluster2/klusterlet-agent', file: '/x/klusterlet-agent.log', tail: 'dial tcp 10.0.0.1:6443: connect: connection refused' }],
    });
    expect(report).toContain('cluster cluster2 was not accepted, joined and available within 90 s');
    expect(report).toContain('ManagedCluster cluster2 does not exist on the hub');
    expect(report).toContain('no CSR labelled open-cluster-management.io/cluster-name=cluster2 exists');
    expect(report).toContain('--- cluster2/klusterlet-agent: /x/klusterlet-agent.log (last lines) ---\ndial tcp 10.0.0.1:6443: connect: connection refused');
  });

  it('names exactly the conditions that are missing and who asked for each CSR', () => {
    const report = acceptTimeoutReport({
      cluster: 'cluster1',
      timeoutMs: 5_000,
      managedCluster: mc('cluster1', true, { HubAcceptedManagedCluster: 'True', ManagedClusterJoined: 'True', ManagedClusterConditionAvailable: 'False' }),
      csrs: [csr({ name: 'cluster1-good', conditions: ['Approved'], certificate: 'eA==' }), csr({ name: 'cluster1-evil', username: 'mallory' })],
      logs: [],
    });
    expect(report).not.toContain('hubAcceptsClient');
    expect(report).not.toContain('condition ManagedClusterJoined');
    expect(report).not.toContain('condition HubAcceptedManagedCluster');
    expect(report).toContain('missing: condition ManagedClusterConditionAvailable is False (ManagedClusterConditionAvailableReason: ManagedClusterConditionAvailable says hi)');
    expect(report).toContain('CSR cluster1-good: Issued, requested by the bootstrap identity');
    expect(report).toContain('CSR cluster1-evil: Pending, requested by mallory (not the bootstrap identity: not approved)');
  });

  it('reports a cluster the hub has not accepted and conditions never reported', () => {
    const report = acceptTimeoutReport({ cluster: 'c', timeoutMs: 1_000, managedCluster: mc('c', false, {}), csrs: [], logs: [] });
    expect(report).toContain('missing: spec.hubAcceptsClient is not true');
    expect(report).toContain('missing: condition HubAcceptedManagedCluster is not reported yet');
    expect(report).toContain('missing: condition ManagedClusterJoined is not reported yet');
    expect(report).toContain('missing: condition ManagedClusterConditionAvailable is not reported yet');
  });
});

describe('CRDs', () => {
  const crd = (name: string, spec: Record<string, unknown> = { group: 'g', scope: 'Cluster' }): Crd => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name },
    spec,
  });

  it('points only the two addon CRDs at the conversion webhook by URL and CA bundle', () => {
    const all = [crd('managedclusters.cluster.open-cluster-management.io'), ...ADDON_CONVERSION_CRDS.map((n) => crd(n))];
    const out = hubCrds(all, { url: 'https://10.0.0.1:9443/convert', caBundlePem: 'PEM' });
    expect(out[0]?.spec.conversion).toBeUndefined();
    for (const c of out.slice(1)) {
      expect(c.spec.conversion).toEqual({
        strategy: 'Webhook',
        webhook: { clientConfig: { url: 'https://10.0.0.1:9443/convert', caBundle: Buffer.from('PEM').toString('base64') }, conversionReviewVersions: ['v1', 'v1beta1'] },
      });
    }
    expect(all[1]?.spec.conversion).toBeUndefined(); // the input is not changed
  });

  it('hashes the desired spec, not the key order', () => {
    expect(crdHash(crd('a', { x: 1, y: { b: 2, a: 1 } }))).toBe(crdHash(crd('a', { y: { a: 1, b: 2 }, x: 1 })));
    expect(crdHash(crd('a', { x: 1 }))).not.toBe(crdHash(crd('a', { x: 2 })));
  });

  it('reads CRD files and says which one is missing', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-crds-'));
    try {
      await fs.mkdir(path.join(dir, 'g'), { recursive: true });
      await fs.writeFile(path.join(dir, 'g', 'a.yaml'), 'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: as.g}\nspec: {group: g}\n');
      await fs.writeFile(path.join(dir, 'g', 'b.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n');
      expect((await readCrds(dir, ['g/a.yaml']))[0]?.metadata.name).toBe('as.g');
      await expect(readCrds(dir, ['g/missing.yaml'])).rejects.toThrowError(MissingPrerequisiteError);
      await expect(readCrds(dir, ['g/missing.yaml'])).rejects.toThrowError(/g\/missing\.yaml is missing/);
      await expect(readCrds(dir, ['g/b.yaml'])).rejects.toThrowError(/is not a CustomResourceDefinition/);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
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

describe('process flags', () => {
  const hub = planCluster('/labs/x', { name: 'hub', vpc: 'vpc-1', hub: true }, { address: '10.9.1.10', netns: 'ns1', netnsPrefix: ['ip', 'netns', 'exec', 'ns1'], podCidr: '10.9.17.0/24' });
  const spoke = planCluster('/labs/x', { name: 'cluster1', vpc: 'vpc-2', hub: false }, { address: '10.9.2.10', netns: 'ns2', netnsPrefix: ['ip', 'netns', 'exec', 'ns2'], podCidr: '10.9.33.0/24' });
  const bins = { 'registration-operator': '/b/registration-operator', registration: '/b/registration', placement: '/b/placement', addon: '/b/addon' };
  const hubSpecs = Object.values(hubProcessSpecs(hub, bins, ocmLayout(hub)));
  const agent = klusterletSpec(spoke, bins, ocmLayout(spoke), 'agent-1');
  const flag = (args: string[], name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);

  it('binds every controller to its cluster address on a port of its own, and runs it in its VPC', () => {
    const controllers = [...hubSpecs.filter((s) => s.name !== 'addon-webhook'), agent];
    const listens = controllers.map((s) => flag(s.args, 'listen'));
    expect(listens).toEqual(['10.9.1.10:9441', '10.9.1.10:9442', '10.9.1.10:9444', '10.9.2.10:9450']);
    expect(new Set(listens).size).toBe(listens.length);
    for (const s of controllers) {
      expect(s.args).toContain('--disable-leader-election');
      expect(flag(s.args, 'kubeconfig')).toMatch(/^\/labs\/x\/clusters\/(hub|cluster1)\/kubeconfigs\/admin\.kubeconfig$/);
      expect(flag(s.args, 'namespace')).toBeTruthy();
    }
    expect(hubSpecs.every((s) => s.prefix.join(' ') === 'ip netns exec ns1')).toBe(true);
    expect(agent.prefix.join(' ')).toBe('ip netns exec ns2');
    expect(hubSpecs.map((s) => s.pidFile)).toEqual(hubSpecs.map((s) => `/labs/x/clusters/hub/run/${s.name}.pid`));
  });

  it('sets every path the klusterlet would otherwise take from a container mount', () => {
    expect(flag(agent.args, 'spoke-cluster-name')).toBe('cluster1');
    expect(flag(agent.args, 'agent-id')).toBe('agent-1');
    expect(flag(agent.args, 'bootstrap-kubeconfig')).toBe('/labs/x/clusters/cluster1/ocm/bootstrap.kubeconfig');
    expect(flag(agent.args, 'hub-kubeconfig-dir')).toBe('/labs/x/clusters/cluster1/ocm/hub-kubeconfig');
    expect(flag(agent.args, 'workload-source-config')).toBe('/labs/x/clusters/cluster1/ocm/hub-kubeconfig/kubeconfig');
    expect(flag(agent.args, 'spoke-kubeconfig')).toBe('/labs/x/clusters/cluster1/kubeconfigs/admin.kubeconfig');
    for (const s of [...hubSpecs, agent]) {
      expect(s.args.join(' ')).not.toMatch(/\/spoke\/|\/var\/run\/secrets|0\.0\.0\.0/);
      expect(s.env?.TMPDIR).toBe(`/labs/x/clusters/${s === agent ? 'cluster1' : 'hub'}/ocm/tmp/${s.name}`);
    }
  });

  it('never asks the hub to approve clusters by itself', () => {
    for (const s of hubSpecs) expect(s.args.join(' ')).not.toMatch(/auto-approv|ManagedClusterAutoApproval/);
  });

  it('gives the conversion webhook its certificate directory and port', () => {
    const webhook = hubSpecs.find((s) => s.name === 'addon-webhook')!;
    expect(webhook.args[0]).toBe('webhook-server');
    expect(flag(webhook.args, 'port')).toBe('9443');
    expect(flag(webhook.args, 'certdir')).toBe('/labs/x/clusters/hub/ocm/addon-webhook-certs');
  });
});

describe('get clusters', () => {
  it('renders the kubectl columns', () => {
    const text = renderClusters({ clusters: [{ name: 'cluster1', hubAccepted: true, joined: true, available: false }] });
    expect(text.split('\n')).toEqual(['NAME       HUB ACCEPTED   JOINED   AVAILABLE', 'cluster1   true           True     False']);
    expect(renderClusters({ clusters: [] })).toBe('No managed clusters.');
  });
});
