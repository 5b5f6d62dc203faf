import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/kube/client.js';
import { chosenClusters, enabledPerCluster, knownAddon } from '../../src/addons/enablement.js';
import {
  ConfigMapCopier,
  copyDiffers,
  helloworldAddon,
  helloworldAgentManifests,
  HELLOWORLD_NAMESPACE,
  spokeCopy,
  SYNCED_FROM_HUB_LABEL,
  type ConfigMap,
} from '../../src/addons/helloworld/index.js';
import { ExitCode, exitCodeOf } from '../../src/errors.js';

const hubCm = (name: string, data: Record<string, string>, rv = '1'): ConfigMap => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'cluster1', resourceVersion: rv, labels: { team: 'a' } },
  data,
});

/** A cluster's ConfigMaps in memory, answering like the API server (404, 409 on a stale resourceVersion). */
function fakeSpoke(options: { failFirstWrites?: number } = {}) {
  const store = new Map<string, ConfigMap>();
  let rv = 100;
  let failures = options.failFirstWrites ?? 0;
  const writes: string[] = [];
  const name = (p: string) => decodeURIComponent(p.split('/').pop()!);
  const fail = () => {
    if (failures > 0) {
      failures--;
      throw new ApiError(500, 'InternalError', 'injected failure');
    }
  };
  return {
    store,
    writes,
    async get<T>(p: string): Promise<T> {
      const cm = store.get(name(p));
      if (!cm) throw new ApiError(404, 'NotFound', `${p} not found`);
      return structuredClone(cm) as T;
    },
    async post<T>(_p: string, body: unknown): Promise<T> {
      fail();
      const cm = structuredClone(body) as ConfigMap;
      if (store.has(cm.metadata.name)) throw new ApiError(409, 'AlreadyExists', 'exists');
      cm.metadata.resourceVersion = String(++rv);
      store.set(cm.metadata.name, cm);
      writes.push(`create ${cm.metadata.name} ${JSON.stringify(cm.data)}`);
      return cm as T;
    },
    async put<T>(_p: string, body: unknown): Promise<T> {
      fail();
      const cm = structuredClone(body) as ConfigMap;
      if (store.get(cm.metadata.name)?.metadata.resourceVersion !== cm.metadata.resourceVersion) throw new ApiError(409, 'Conflict', 'stale');
      cm.metadata.resourceVersion = String(++rv);
      store.set(cm.metadata.name, cm);
      writes.push(`update ${cm.metadata.name} ${JSON.stringify(cm.data)}`);
      return cm as T;
    },
  };
}

describe('helloworld copies', () => {
  it('a copy has the hub data, the agent namespace and the synced label, and none of the hub metadata', () => {
    const copy = spokeCopy(hubCm('greeting', { hello: 'world' }), HELLOWORLD_NAMESPACE);
    expect(copy).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'greeting', namespace: 'open-cluster-management-agent-addon', labels: { [SYNCED_FROM_HUB_LABEL]: '' } },
      data: { hello: 'world' },
    });
  });

  it('differs on changed, added or removed keys and on a missing label, not on other metadata', () => {
    const wanted = spokeCopy(hubCm('a', { k: 'v' }), 'ns');
    const existing = { ...wanted, metadata: { ...wanted.metadata, resourceVersion: '7', uid: 'x', labels: { [SYNCED_FROM_HUB_LABEL]: '', extra: '1' } } };
    expect(copyDiffers(existing, wanted)).toBe(false);
    expect(copyDiffers({ ...existing, data: { k: 'w' } }, wanted)).toBe(true);
    expect(copyDiffers({ ...existing, data: { k: 'v', more: '1' } }, wanted)).toBe(true);
    expect(copyDiffers({ ...existing, data: {} }, wanted)).toBe(true);
    expect(copyDiffers({ ...existing, metadata: { ...existing.metadata, labels: {} } }, wanted)).toBe(true);
  });
});

describe('ConfigMapCopier', () => {
  const log = () => undefined;

  it('creates, then updates, and leaves an unchanged copy alone', async () => {
    const spoke = fakeSpoke();
    const copier = new ConfigMapCopier({ spoke, namespace: 'ns', addonActive: async () => true, log });
    expect(await copier.copy(hubCm('a', { k: '1' }))).toBe('created');
    expect(await copier.copy(hubCm('a', { k: '2' }, '2'))).toBe('updated');
    expect(await copier.copy(hubCm('a', { k: '2' }, '3'))).toBe('unchanged');
    expect(spoke.store.get('a')?.data).toEqual({ k: '2' });
  });

  it('writes only the newest version of a ConfigMap offered several times while busy', async () => {
    const spoke = fakeSpoke();
    const copier = new ConfigMapCopier({ spoke, namespace: 'ns', addonActive: async () => true, log });
    copier.offer(hubCm('a', { k: '1' }, '1'));
    copier.offer(hubCm('b', { k: 'b' }, '1'));
    copier.offer(hubCm('b', { k: 'b2' }, '2'));
    copier.offer(hubCm('b', { k: 'b3' }, '3'));
    await copier.idle();
    expect(spoke.writes).toEqual(['create a {"k":"1"}', 'create b {"k":"b3"}']);
  });

  it('retries a failed write and keeps a newer version that arrived meanwhile', async () => {
    const spoke = fakeSpoke({ failFirstWrites: 1 });
    const lines: string[] = [];
    const copier = new ConfigMapCopier({ spoke, namespace: 'ns', addonActive: async () => true, log: (l) => lines.push(l), retryMs: 20 });
    copier.offer(hubCm('a', { k: '1' }, '1'));
    await new Promise((r) => setTimeout(r, 5));
    copier.offer(hubCm('a', { k: '2' }, '2'));
    await copier.idle();
    expect(spoke.store.get('a')?.data).toEqual({ k: '2' });
    expect(lines.some((l) => l.includes('injected failure') && l.includes('retrying'))).toBe(true);
  });

  it('leaves kube-root-ca.crt alone: every namespace has its own, kept by the cluster', async () => {
    const spoke = fakeSpoke();
    const copier = new ConfigMapCopier({ spoke, namespace: 'ns', addonActive: async () => true, log });
    copier.offer(hubCm('kube-root-ca.crt', { 'ca.crt': 'hub CA' }));
    await copier.idle();
    expect(await copier.copy(hubCm('kube-root-ca.crt', { 'ca.crt': 'hub CA' }))).toBe('skipped');
    expect(spoke.store.size).toBe(0);
  });

  it('copies nothing while the addon is being removed from the cluster', async () => {
    const spoke = fakeSpoke();
    const copier = new ConfigMapCopier({ spoke, namespace: 'ns', addonActive: async () => false, log });
    expect(await copier.copy(hubCm('a', { k: '1' }))).toBe('skipped');
    expect(spoke.store.size).toBe(0);
  });
});

describe('helloworld addon definition', () => {
  it('asks for read access to ConfigMaps and its ManagedClusterAddOn on the hub, and is judged by its Deployment', () => {
    const addon = helloworldAddon();
    expect(addon.name).toBe('helloworld');
    expect(addon.installNamespace).toBe('open-cluster-management-agent-addon');
    expect(addon.healthCheck).toBe('DeploymentAvailability');
    expect(addon.hubPermissions).toContainEqual({ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] });
    for (const rule of addon.hubPermissions ?? []) expect(rule.verbs).toEqual(['get', 'list', 'watch']);
  });

  it('the agent Deployment runs our internal command with the hub kubeconfig Secret, and creates no namespace', () => {
    const manifests = helloworldAgentManifests('cluster2');
    expect(manifests.map((m) => m.kind)).not.toContain('Namespace');
    const deployment = manifests.find((m) => m.kind === 'Deployment') as unknown as {
      metadata: { name: string; namespace: string };
      spec: { template: { spec: { containers: { args: string[] }[]; volumes: { secret: { secretName: string } }[] } } };
    };
    expect(deployment.metadata).toMatchObject({ name: 'helloworld-agent', namespace: 'open-cluster-management-agent-addon' });
    const pod = deployment.spec.template.spec;
    expect(pod.containers[0]!.args).toEqual([
      'internal',
      'helloworld-agent',
      '--cluster-name=cluster2',
      '--hub-kubeconfig=/var/run/hub/kubeconfig',
      '--addon-namespace=open-cluster-management-agent-addon',
    ]);
    expect(pod.volumes[0]!.secret.secretName).toBe('helloworld-hub-kubeconfig');
  });
});

describe('enabling per cluster', () => {
  it('an unknown addon is bad input naming the known ones', () => {
    expect(knownAddon('helloworld')).toBe('helloworld');
    let err: unknown;
    try {
      knownAddon('hello');
    } catch (e) {
      err = e;
    }
    expect(exitCodeOf(err)).toBe(ExitCode.invalidInput);
    expect((err as Error).message).toContain('cluster-proxy, managed-serviceaccount, cluster-gateway, helloworld');
  });

  it('--cluster picks managed clusters of the lab (all by default) and rejects others', () => {
    expect(chosenClusters(undefined, ['cluster1', 'cluster2'])).toEqual(['cluster1', 'cluster2']);
    expect(chosenClusters(['cluster2', 'cluster2'], ['cluster1', 'cluster2'])).toEqual(['cluster2']);
    expect(() => chosenClusters(['hub'], ['cluster1'])).toThrow(/--cluster hub: not a managed cluster of this lab; managed clusters: cluster1/);
  });

  it('only helloworld is enabled cluster by cluster', () => {
    expect(enabledPerCluster('helloworld')).toBe(true);
    expect(enabledPerCluster('cluster-proxy')).toBe(false);
  });
});
