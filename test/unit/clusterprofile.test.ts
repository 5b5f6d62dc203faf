import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseLabConfig } from '../../src/config/index.js';
import { clusterManagerObject } from '../../src/ocm/cluster-manager.js';
import { clusterProfileCrd } from '../../src/ocm/clusterprofile.js';
import { planProfileSync, SYNCED_FROM_LABEL, type ClusterProfile, type Secret } from '../../src/addons/managed-serviceaccount/clusterprofile-sync.js';
import { accessProviderOf, withAccessProvider } from '../../src/addons/managed-serviceaccount/clusterprofile-access.js';
import {
  clusterNameOf,
  execCredentialJson,
  inferNamespace,
  parsePluginFlags,
  readExecInfo,
  runCpCreds,
} from '../../src/addons/managed-serviceaccount/cp-creds.js';
import type { ManagedServiceAccount } from '../../src/addons/managed-serviceaccount/types.js';
import { addonVocabulary } from '../../src/addons/registry.js';

const profile: ClusterProfile = {
  apiVersion: 'multicluster.x-k8s.io/v1alpha1',
  kind: 'ClusterProfile',
  metadata: {
    name: 'cluster1',
    namespace: 'inventory',
    uid: 'cp-uid',
    labels: { 'x-k8s.io/cluster-manager': 'open-cluster-management', 'open-cluster-management.io/cluster-name': 'cluster1' },
  },
};

function msa(name: string, secretName?: string): ManagedServiceAccount {
  return {
    apiVersion: 'authentication.open-cluster-management.io/v1beta1',
    kind: 'ManagedServiceAccount',
    metadata: { name, namespace: 'cluster1' },
    ...(secretName ? { status: { tokenSecretRef: { name: secretName, lastRefreshTimestamp: '2026-11-26T00:00:00Z' } } } : {}),
  };
}

function secret(name: string, namespace: string, data: Record<string, string>, extra: Partial<Secret['metadata']> = {}): Secret {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace, ...extra }, type: 'Opaque', data };
}

const synced = (name: string, from: string, uid = 'cp-uid', data = { token: 'b2xk' }) =>
  secret(name, 'inventory', data, {
    labels: { [SYNCED_FROM_LABEL]: from },
    ownerReferences: [{ apiVersion: 'multicluster.x-k8s.io/v1alpha1', kind: 'ClusterProfile', name: 'cluster1', uid, controller: true }],
  });

describe('ClusterProfile token sync (upstream ClusterProfileCredSyncer rules)', () => {
  it('copies the token Secret as <namespace>-<name>, labelled with its origin and owned by the profile', () => {
    const sources = new Map([['admin', secret('admin', 'cluster1', { token: 'dG9r', 'ca.crt': 'Y2E=' })]]);
    const plan = planProfileSync(profile, [msa('admin', 'admin')], sources, []);
    expect(plan.remove).toEqual([]);
    expect(plan.write).toHaveLength(1);
    const { desired, existing } = plan.write[0]!;
    expect(existing).toBeUndefined();
    expect(desired.metadata).toEqual({
      name: 'cluster1-admin',
      namespace: 'inventory',
      labels: { [SYNCED_FROM_LABEL]: 'cluster1-admin' },
      ownerReferences: [{ apiVersion: 'multicluster.x-k8s.io/v1alpha1', kind: 'ClusterProfile', name: 'cluster1', uid: 'cp-uid', controller: true }],
    });
    expect(desired.type).toBe('Opaque');
    expect(desired.data).toEqual({ token: 'dG9r', 'ca.crt': 'Y2E=' });
  });

  it('rewrites a copy when the token rotated or its label changed, leaves an equal one alone', () => {
    const sources = new Map([['admin', secret('admin', 'cluster1', { token: 'bmV3' })]]);
    const stale = synced('cluster1-admin', 'cluster1-admin', 'cp-uid', { token: 'b2xk' });
    expect(planProfileSync(profile, [msa('admin', 'admin')], sources, [stale]).write[0]?.existing).toBe(stale);
    const current = synced('cluster1-admin', 'cluster1-admin', 'cp-uid', { token: 'bmV3' });
    expect(planProfileSync(profile, [msa('admin', 'admin')], sources, [current]).write).toEqual([]);
    const relabelled = { ...current, metadata: { ...current.metadata, labels: { [SYNCED_FROM_LABEL]: 'other' } } };
    expect(planProfileSync(profile, [msa('admin', 'admin')], sources, [relabelled]).write).toHaveLength(1);
  });

  it('writes nothing before the MSA reports a token Secret, and keeps the copy while the source is missing', () => {
    const kept = synced('cluster1-admin', 'cluster1-admin');
    expect(planProfileSync(profile, [msa('admin')], new Map(), [])).toEqual({ write: [], remove: [] });
    expect(planProfileSync(profile, [msa('admin', 'admin')], new Map(), [kept])).toEqual({ write: [], remove: [] });
  });

  it("deletes only this profile's copies whose MSA is gone", () => {
    const orphan = synced('cluster1-gone', 'cluster1-gone');
    const othersOrphan = synced('cluster1-gone2', 'cluster1-gone2', 'another-profile');
    const live = synced('cluster1-admin', 'cluster1-admin');
    const sources = new Map([['admin', secret('admin', 'cluster1', { token: 'b2xk' })]]);
    expect(planProfileSync(profile, [msa('admin', 'admin')], sources, [orphan, othersOrphan, live]).remove).toEqual(['cluster1-gone']);
  });
});

describe('access providers the lab writes', () => {
  const cluster = {
    apiVersion: 'cluster.open-cluster-management.io/v1',
    kind: 'ManagedCluster',
    metadata: { name: 'cluster1' },
    spec: { managedClusterClientConfigs: [{ url: 'https://10.0.0.2:6443', caBundle: 'Q0E=' }] },
  };

  it('names the provider open-cluster-management with the clusterName extension the plugin reads', () => {
    expect(accessProviderOf(cluster)).toEqual({
      name: 'open-cluster-management',
      cluster: {
        server: 'https://10.0.0.2:6443',
        'certificate-authority-data': 'Q0E=',
        extensions: [{ name: 'client.authentication.k8s.io/exec', extension: { clusterName: 'cluster1' } }],
      },
    });
    expect(accessProviderOf({ ...cluster, spec: {} })).toBeUndefined();
  });

  it("replaces only its own provider and keeps others'", () => {
    const ours = accessProviderOf(cluster)!;
    const other = { name: 'someone-else', cluster: { server: 'https://x' } };
    expect(withAccessProvider([other], ours)).toEqual([other, ours]);
    expect(withAccessProvider([other, ours], ours)).toBeUndefined();
    expect(withAccessProvider([{ name: ours.name, cluster: { server: 'https://old' } }], ours)).toEqual([ours]);
  });
});

const execInfo = (cluster: Record<string, unknown> | undefined, apiVersion = 'client.authentication.k8s.io/v1') =>
  JSON.stringify({ apiVersion, kind: 'ExecCredential', spec: { interactive: false, ...(cluster ? { cluster } : {}) } });

describe('cp-creds (upstream clusterprofile-credentials-plugin behaviour)', () => {
  it('reads its one flag as pflag does', () => {
    expect(parsePluginFlags(['--managed-serviceaccount=admin'])).toEqual({ msa: 'admin' });
    expect(parsePluginFlags(['--managed-serviceaccount', 'admin'])).toEqual({ msa: 'admin' });
    expect(parsePluginFlags([])).toEqual({ msa: '' });
    expect(parsePluginFlags(['--managed-serviceaccount'])).toEqual({ usageError: 'flag needs an argument: --managed-serviceaccount' });
    expect(parsePluginFlags(['--msa=x'])).toEqual({ usageError: 'unknown flag: --msa' });
    expect(parsePluginFlags(['-h'])).toEqual({ help: true });
  });

  it('checks KUBERNETES_EXEC_INFO with the messages of client-go and the inventory API', () => {
    const read = (text: string | undefined) => () => readExecInfo(text === undefined ? {} : { KUBERNETES_EXEC_INFO: text });
    expect(read(undefined)).toThrow('failed to read KUBERNETES_EXEC_INFO: KUBERNETES_EXEC_INFO env var is unset or empty');
    expect(read(execInfo(undefined))).toThrow('failed to read KUBERNETES_EXEC_INFO: ExecCredential does not contain cluster information');
    expect(read(execInfo({ server: 'https://x' }, 'client.authentication.k8s.io/v1beta1'))).toThrow(
      'unexpected ExecCredential type (expect v1), got *v1beta1.ExecCredential',
    );
    expect(read(execInfo({ server: '' }))).toThrow('spec.cluster.server is missing in KUBERNETES_EXEC_INFO');
    expect(read('{"apiVersion":"v1","kind":"Pod"}')).toThrow('invalid group/kind: wanted ExecCredential.client.authentication.k8s.io, got Pod.v1');
    expect(read(execInfo({ server: 'https://x' }))()).toMatchObject({ spec: { cluster: { server: 'https://x' } } });
  });

  it("takes the cluster's name from spec.cluster.config", () => {
    const info = (config: unknown) => ({ spec: { cluster: { server: 'https://x', config } } });
    expect(clusterNameOf(info({ clusterName: 'cluster1' }))).toBe('cluster1');
    expect(() => clusterNameOf(info(undefined))).toThrow('missing ExecCredential.Spec.Cluster.Config');
    expect(() => clusterNameOf(info({}))).toThrow('missing clusterName in ExecCredential.Spec.Cluster.Config');
    expect(() => clusterNameOf(info('cluster1'))).toThrow(/^invalid ExecCredential.Spec.Cluster.Config: json: cannot unmarshal string/);
  });

  it('answers with a v1 ExecCredential as Go marshals it', () => {
    expect(JSON.parse(execCredentialJson('tok'))).toEqual({
      kind: 'ExecCredential',
      apiVersion: 'client.authentication.k8s.io/v1',
      spec: { interactive: false },
      status: { token: 'tok' },
    });
    expect(execCredentialJson('tok').endsWith('}\n')).toBe(true);
  });

  describe('with files', () => {
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), 'cp-creds-'));
      await writeFile(
        path.join(dir, 'kubeconfig'),
        [
          'apiVersion: v1',
          'kind: Config',
          'current-context: hub',
          'clusters: [{name: hub, cluster: {server: "https://127.0.0.1:1"}}]',
          'users: [{name: u, user: {token: t}}]',
          'contexts: [{name: hub, context: {cluster: hub, user: u, namespace: from-context}}]',
        ].join('\n'),
      );
      await writeFile(path.join(dir, 'namespace'), 'from-pod\n');
    });
    afterAll(() => rm(dir, { recursive: true, force: true }));

    it('looks for the Secret in $NAMESPACE, else the pod namespace, else the kubeconfig context, else default', async () => {
      const kubeconfig = path.join(dir, 'kubeconfig');
      const none = path.join(dir, 'absent');
      expect(await inferNamespace({ NAMESPACE: ' inv ', KUBECONFIG: kubeconfig }, path.join(dir, 'namespace'))).toBe('inv');
      expect(await inferNamespace({ KUBECONFIG: kubeconfig }, path.join(dir, 'namespace'))).toBe('from-pod');
      expect(await inferNamespace({ KUBECONFIG: kubeconfig }, none)).toBe('from-context');
      expect(await inferNamespace({ KUBECONFIG: none }, none)).toBe('default');
    });

    it('exits 1 naming the flag when --managed-serviceaccount is missing, and 1 when no kubeconfig is usable', async () => {
      const run = async (args: string[], env: NodeJS.ProcessEnv) => {
        let out = '';
        let err = '';
        const code = await runCpCreds(args, { env, stdout: (t) => (out += t), stderr: (t) => (err += t) });
        return { code, out, err };
      };
      const missing = await run([], { KUBECONFIG: path.join(dir, 'kubeconfig') });
      expect(missing.code).toBe(1);
      expect(missing.out).toBe('');
      expect(missing.err).toMatch(/^Error: --managed-serviceaccount flag is required\nUsage of cp-creds:\n/);
      const noConfig = await run(['--managed-serviceaccount=admin'], { KUBECONFIG: path.join(dir, 'absent') });
      expect(noConfig.code).toBe(1);
      expect(noConfig.err).toMatch(/^Error initializing provider: failed to build kube client config: .*absent/);
      expect((await run(['--bogus'], {})).code).toBe(2);
    });
  });
});

describe('the lab switch', () => {
  const lab = (extra: string) =>
    parseLabConfig(
      ['apiVersion: ocm-lab/v1alpha1', 'kind: Lab', 'vpcs: [{name: v}]', 'clusters: [{name: hub, vpc: v, hub: true}, {name: c1, vpc: v}]', extra].join('\n'),
      '/labs/lab.yaml',
      addonVocabulary(),
    );

  it('is on unless the lab file turns it off, and must be a boolean', () => {
    expect(lab('').clusterProfile).toBe(true);
    expect(lab('clusterProfile: false').clusterProfile).toBe(false);
    expect(() => lab('clusterProfile: yes-please')).toThrow(/clusterProfile = "yes-please": must be true or false/);
  });

  it("turns on registration's ClusterProfile feature gate in the ClusterManager", () => {
    expect(clusterManagerObject('v1.2.1', { clusterProfile: true }).spec).toMatchObject({
      registrationConfiguration: { featureGates: [{ feature: 'ClusterProfile', mode: 'Enable' }] },
    });
    expect(clusterManagerObject('v1.2.1').spec).not.toHaveProperty('registrationConfiguration');
  });

  it('our CRD serves multicluster.x-k8s.io/v1alpha1 ClusterProfile, namespaced, with status and an immutable clusterManager', () => {
    const crd = clusterProfileCrd() as unknown as {
      metadata: { name: string };
      spec: { group: string; scope: string; versions: { name: string; subresources: unknown; schema: { openAPIV3Schema: Record<string, any> } }[] };
    };
    expect(crd.metadata.name).toBe('clusterprofiles.multicluster.x-k8s.io');
    expect(crd.spec).toMatchObject({ group: 'multicluster.x-k8s.io', scope: 'Namespaced' });
    const v = crd.spec.versions[0]!;
    expect(v).toMatchObject({ name: 'v1alpha1', subresources: { status: {} } });
    const props = v.schema.openAPIV3Schema.properties;
    expect(props.spec.required).toEqual(['clusterManager']);
    expect(props.spec.properties.clusterManager['x-kubernetes-validations']).toEqual([{ rule: 'self == oldSelf', message: 'ClusterManager is immutable' }]);
    expect(Object.keys(props.status.properties)).toEqual(['conditions', 'version', 'properties', 'accessProviders', 'credentialProviders']);
  });
});
