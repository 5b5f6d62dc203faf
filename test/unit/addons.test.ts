import { webcrypto } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decideAddonCsr, type CertificateSigningRequest } from '../../src/addons/framework/csr.js';
import { deployWork, desiredAddonStatus, hubPermissionObjects, type ManagedClusterAddOn } from '../../src/addons/framework/manager.js';
import { agentSubject, ADDON_NAME_LABEL, CLUSTER_NAME_LABEL } from '../../src/addons/framework/names.js';
import { desiredHash, setCondition, type Condition, type KubeObject } from '../../src/kube/objects.js';
import type { AddonDefinition } from '../../src/addons/framework/types.js';
import { proxyServerNames } from '../../src/addons/cluster-proxy/certificates.js';
import { proxyAgentManifests } from '../../src/addons/cluster-proxy/manifests.js';
import { defaultProxyConfiguration } from '../../src/addons/cluster-proxy/configuration.js';
import { refreshDueAt, refreshReason, requestedSeconds } from '../../src/addons/managed-serviceaccount/rotation.js';
import { parseGoDuration } from '../../src/util/duration.js';
import { splitCommandLine } from '../../src/addons/proxy-kubectl.js';
import { ttlDeadline, ttlExpired } from '../../src/addons/managed-serviceaccount/ttl.js';
import { x509 } from '../../src/pki/x509.js';

async function csrPem(cn: string, orgs: string[]): Promise<string> {
  const keys = (await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const req = await x509.Pkcs10CertificateRequestGenerator.create({
    name: [...orgs.map((o) => ({ O: [o] })), { CN: [cn] }],
    keys,
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
  });
  return Buffer.from(req.toString('pem')).toString('base64');
}

async function csr(
  overrides: { cn?: string; orgs?: string[]; username?: string; signer?: string; labels?: Record<string, string>; decided?: boolean } = {},
): Promise<CertificateSigningRequest> {
  const want = agentSubject('cluster1', 'managed-serviceaccount');
  return {
    metadata: { name: 'addon-csr', labels: overrides.labels ?? { [ADDON_NAME_LABEL]: 'managed-serviceaccount', [CLUSTER_NAME_LABEL]: 'cluster1' } },
    spec: {
      request: await csrPem(overrides.cn ?? want.user, overrides.orgs ?? want.groups),
      signerName: overrides.signer ?? 'kubernetes.io/kube-apiserver-client',
      username: overrides.username ?? 'system:open-cluster-management:cluster1:agent-x',
    },
    ...(overrides.decided ? { status: { conditions: [{ type: 'Approved', status: 'True' }] } } : {}),
  };
}

const addon: AddonDefinition = {
  name: 'managed-serviceaccount',
  displayName: 'msa',
  description: 'd',
  installNamespace: 'open-cluster-management-managed-serviceaccount',
  hubPermissions: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }],
  agentManifests: async () => [],
};

describe('addon CSR approval', () => {
  it('approves the agent certificate a cluster asks for with the published subject', async () => {
    expect(decideAddonCsr(await csr(), 'managed-serviceaccount')).toEqual({ approve: true });
  });

  it('leaves anything else alone, saying why', async () => {
    const why = async (c: Promise<CertificateSigningRequest>, addonName = 'managed-serviceaccount') => {
      const d = decideAddonCsr(await c, addonName);
      expect(d.approve).toBe(false);
      return d.approve ? '' : d.why;
    };
    expect(await why(csr(), 'cluster-proxy')).toMatch(/not labelled/);
    expect(await why(csr({ username: 'system:open-cluster-management:cluster2:agent' }))).toMatch(/not by cluster cluster1's agent/);
    expect(await why(csr({ username: 'alice' }))).toMatch(/requested by alice/);
    expect(await why(csr({ cn: 'system:admin' }))).toMatch(/subject CN system:admin/);
    expect(await why(csr({ orgs: ['system:masters'] }))).toMatch(/groups system:masters/);
    expect(await why(csr({ signer: 'example.com/other' }))).toMatch(/signer example.com\/other/);
    expect(await why(csr({ decided: true }))).toBe('already decided');
  });
});

describe('addon manager objects and status', () => {
  const mca: ManagedClusterAddOn = {
    apiVersion: 'addon.open-cluster-management.io/v1alpha1',
    kind: 'ManagedClusterAddOn',
    metadata: { name: 'managed-serviceaccount', namespace: 'cluster1', uid: 'u-1' },
    status: {
      conditions: [{ type: 'Available', status: 'True', reason: 'ManagedClusterAddOnLeaseUpdated', message: 'ok', lastTransitionTime: '2026-01-01T00:00:00Z' }],
    },
  };
  const work = (status: string | null): KubeObject => ({
    apiVersion: 'work.open-cluster-management.io/v1',
    kind: 'ManifestWork',
    metadata: { name: 'w' },
    ...(status ? { status: { conditions: [{ type: 'Applied', status, reason: 'r', message: 'm' }] } } : {}),
  });

  it('publishes the registration and keeps conditions it does not own', () => {
    const status = desiredAddonStatus(addon, mca, work('True'))!;
    expect(status.namespace).toBe('open-cluster-management-managed-serviceaccount');
    expect(status.healthCheck).toEqual({ mode: 'Customized' });
    expect(status.registrations).toEqual([{ signerName: 'kubernetes.io/kube-apiserver-client', subject: agentSubject('cluster1', 'managed-serviceaccount') }]);
    const byType = Object.fromEntries(status.conditions!.map((c) => [c.type, c.status]));
    expect(byType).toEqual({ Available: 'True', RegistrationApplied: 'True', ManifestApplied: 'True' });
  });

  it('reports ManifestApplied from the work, and nothing when nothing changed', () => {
    expect(desiredAddonStatus(addon, mca, null)!.conditions!.find((c) => c.type === 'ManifestApplied')?.status).toBe('Unknown');
    expect(desiredAddonStatus(addon, mca, work('False'))!.conditions!.find((c) => c.type === 'ManifestApplied')?.status).toBe('False');
    const settled = { ...mca, status: desiredAddonStatus(addon, mca, work('True'))! };
    expect(desiredAddonStatus(addon, settled, work('True'))).toBeNull();
  });

  it('owns the deploy work by the ManagedClusterAddOn and binds hub RBAC to the cluster’s addon group', () => {
    const w = deployWork(addon, mca, []);
    expect(w.metadata).toMatchObject({
      name: 'addon-managed-serviceaccount-deploy-0',
      namespace: 'cluster1',
      labels: { [ADDON_NAME_LABEL]: 'managed-serviceaccount' },
    });
    expect(w.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'ManagedClusterAddOn', uid: 'u-1', controller: true });
    const [role, binding] = hubPermissionObjects(addon, 'cluster1');
    expect(role?.metadata.namespace).toBe('cluster1');
    expect((binding as unknown as { subjects: { name: string }[] }).subjects[0]?.name).toBe(
      'system:open-cluster-management:cluster:cluster1:addon:managed-serviceaccount',
    );
    expect(hubPermissionObjects({ ...addon, hubPermissions: undefined }, 'cluster1')).toEqual([]);
  });
});

describe('framework helpers', () => {
  it('sets conditions like SetStatusCondition: the transition time moves only with the status', () => {
    const list: Condition[] = [];
    expect(setCondition(list, { type: 'A', status: 'True', reason: 'r', message: 'm' }, new Date('2026-01-01T00:00:00Z'))).toBe(true);
    expect(setCondition(list, { type: 'A', status: 'True', reason: 'r', message: 'm' })).toBe(false);
    expect(setCondition(list, { type: 'A', status: 'True', reason: 'r2', message: 'm' }, new Date('2026-02-01T00:00:00Z'))).toBe(true);
    expect(list[0]?.lastTransitionTime).toBe('2026-01-01T00:00:00Z');
    setCondition(list, { type: 'A', status: 'False', reason: 'r', message: 'm' }, new Date('2026-03-01T00:00:00Z'));
    expect(list[0]?.lastTransitionTime).toBe('2026-03-01T00:00:00Z');
  });

  it('hashes what we want, independent of key order and of fields others own', () => {
    const a: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', labels: { a: '1', b: '2' } }, data: { k: 'v', j: 'w' } };
    const b: KubeObject = {
      kind: 'ConfigMap',
      apiVersion: 'v1',
      metadata: { labels: { b: '2', a: '1' }, name: 'x', resourceVersion: '9' },
      data: { j: 'w', k: 'v' },
    };
    expect(desiredHash(a)).toBe(desiredHash(b));
    expect(desiredHash(a)).not.toBe(desiredHash({ ...a, data: { k: 'changed' } }));
  });
});

describe('cluster-proxy', () => {
  it('names the entrypoint host and the in-cluster Service in the server certificate', () => {
    expect(proxyServerNames('10.0.1.2')).toEqual({
      dnsNames: [
        'proxy-entrypoint',
        'proxy-entrypoint.open-cluster-management-cluster-proxy',
        'proxy-entrypoint.open-cluster-management-cluster-proxy.svc',
        'localhost',
      ],
      ipAddresses: ['127.0.0.1', '10.0.1.2'],
    });
    expect(proxyServerNames('hub.example').dnsNames).toContain('hub.example');
  });

  it('points each agent at the Hostname entrypoint and maps <cluster>:443 to its own API server', () => {
    const objects = proxyAgentManifests('cluster1', defaultProxyConfiguration('10.0.1.2'), { certPem: 'C', keyPem: 'K' }, 'CA');
    const deployment = objects.find((o) => o.kind === 'Deployment') as unknown as {
      metadata: { name: string };
      spec: { template: { spec: { containers: { args: string[] }[] } } };
    };
    expect(deployment.metadata.name).toBe('cluster-proxy-proxy-agent');
    const args = deployment.spec.template.spec.containers[0]!.args;
    expect(args).toContain('--proxy-server-host=10.0.1.2');
    expect(args).toContain('--proxy-server-port=8091');
    expect(args).toContain('--agent-identifiers=host=cluster1&host=cluster1.open-cluster-management-cluster-proxy');
    expect(args).toContain('--host-mapping=cluster1:443=$(KUBERNETES_SERVICE_HOST):$(KUBERNETES_SERVICE_PORT)');
    expect(args.some((a) => a.startsWith('--addon-lease'))).toBe(false);
    expect(objects.some((o) => o.kind === 'Role' || o.kind === 'RoleBinding')).toBe(false);
  });
});

describe('managed-serviceaccount token rotation', () => {
  const msa = (validity?: string, refreshed = '2026-11-22T10:00:00Z', expires = '2026-11-22T11:00:00Z') => ({
    apiVersion: 'authentication.open-cluster-management.io/v1beta1',
    kind: 'ManagedServiceAccount',
    metadata: { name: 'dep', namespace: 'cluster1' },
    spec: { rotation: { enabled: true, ...(validity ? { validity } : {}) } },
    status: { expirationTimestamp: expires, tokenSecretRef: { name: 'dep', lastRefreshTimestamp: refreshed } },
  });

  it('parses Go durations', () => {
    expect(parseGoDuration('8640h0m0s')).toBe(8640 * 3600 * 1000);
    expect(parseGoDuration('1h30m')).toBe(5400 * 1000);
    expect(parseGoDuration('500ms')).toBe(500);
    expect(parseGoDuration('1m30s500ms')).toBe(90_500);
    expect(parseGoDuration('90')).toBeNull();
    expect(parseGoDuration('1d')).toBeNull();
  });

  it('asks for the validity, at least the API server’s ten minutes, and says when it adjusts', () => {
    expect(requestedSeconds(msa())).toEqual({ seconds: 8640 * 3600 });
    expect(requestedSeconds(msa('2m'))).toMatchObject({ seconds: 600, note: expect.stringContaining('minimum of 10m') });
    expect(requestedSeconds(msa('soon'))).toMatchObject({ seconds: 8640 * 3600, note: expect.stringContaining('not a duration') });
  });

  it('refreshes at 80 % of the real lifetime, on rejection, on a lost secret and on a new validity', () => {
    const m = msa('1h');
    expect(refreshDueAt(new Date('2026-11-22T10:00:00Z'), new Date('2026-11-22T11:00:00Z')).toISOString()).toBe('2026-11-22T10:48:00.000Z');
    const base = { msa: m, secretHasToken: true, tokenValid: undefined, requestedSecondsLast: 3600 };
    expect(refreshReason({ ...base, now: new Date('2026-11-22T10:47:59Z') })).toBeNull();
    expect(refreshReason({ ...base, now: new Date('2026-11-22T10:48:00Z') })).toBe('token due');
    expect(refreshReason({ ...base, now: new Date('2026-11-22T10:10:00Z'), tokenValid: false })).toBe('token rejected by TokenReview');
    expect(refreshReason({ ...base, now: new Date('2026-11-22T10:10:00Z'), secretHasToken: false })).toBe('secret missing');
    expect(refreshReason({ ...base, now: new Date('2026-11-22T10:10:00Z'), requestedSecondsLast: 7200 })).toBe('validity changed');
    expect(refreshReason({ ...base, msa: { ...m, status: {} }, now: new Date() })).toBe('no token yet');
  });
});

describe('managed-serviceaccount TTL', () => {
  const msa = (ttl?: number, deleting = false) => ({
    apiVersion: 'authentication.open-cluster-management.io/v1beta1',
    kind: 'ManagedServiceAccount',
    metadata: {
      name: 'tmp',
      namespace: 'cluster1',
      creationTimestamp: '2026-11-22T10:00:00Z',
      ...(deleting ? { deletionTimestamp: '2026-11-22T10:00:05Z' } : {}),
    },
    spec: ttl === undefined ? {} : { ttlSecondsAfterCreation: ttl },
  });

  it('expires ttlSecondsAfterCreation seconds after creation, never without a TTL, never twice', () => {
    expect(ttlDeadline(msa(30))?.toISOString()).toBe('2026-11-22T10:00:30.000Z');
    expect(ttlExpired(msa(30), new Date('2026-11-22T10:00:29Z'))).toBe(false);
    expect(ttlExpired(msa(30), new Date('2026-11-22T10:00:30Z'))).toBe(true);
    expect(ttlExpired(msa(0), new Date('2026-11-22T10:00:00Z'))).toBe(true);
    expect(ttlExpired(msa(), new Date('2030-01-01T00:00:00Z'))).toBe(false);
    expect(ttlExpired(msa(30, true), new Date('2026-11-22T11:00:00Z'))).toBe(false);
  });
});

describe('proxy kubectl prompt', () => {
  it('splits a line into kubectl arguments', () => {
    expect(splitCommandLine('get deployments -A')).toEqual(['get', 'deployments', '-A']);
    expect(splitCommandLine(`get pods -l 'app in (a, b)'  -o "jsonpath={.items[*].metadata.name}"`)).toEqual([
      'get',
      'pods',
      '-l',
      'app in (a, b)',
      '-o',
      'jsonpath={.items[*].metadata.name}',
    ]);
    expect(splitCommandLine("label ns x a=''")).toEqual(['label', 'ns', 'x', 'a=']);
    expect(() => splitCommandLine('get "pods')).toThrow(/unclosed/);
  });
});
