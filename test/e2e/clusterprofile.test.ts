import fs from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { cli, kubectl } from '../support/lab.js';
import { useTempDir } from '../support/temp-dir.js';
import { useSharedLab } from '../support/test-lab.js';
import { waitUntil } from '../support/wait.js';

const INVENTORY = 'open-cluster-management-cluster-inventory';
const SYNC_LABEL = 'authentication.open-cluster-management.io/sync-to-clusterprofile';
const SYNCED_FROM = 'authentication.open-cluster-management.io/synced-from';
const MSA = 'managedserviceaccounts.authentication.open-cluster-management.io';

interface Secret {
  metadata: { uid: string; labels?: Record<string, string>; ownerReferences?: { kind: string; name: string; uid: string; controller?: boolean }[] };
  data: Record<string, string>;
}

const execInfo = (clusterName: string) =>
  JSON.stringify({
    apiVersion: 'client.authentication.k8s.io/v1',
    kind: 'ExecCredential',
    spec: { interactive: false, cluster: { server: 'https://cluster1.invalid', config: { clusterName } } },
  });

/**
 * The ClusterProfile inventory on the default lab's local runtime (issue 28, item 4), checked against
 * upstream's documented behaviour: OCM v1.2.1 writes a ClusterProfile per ManagedCluster, managed-
 * serviceaccount v0.10.0's credential sync copies labelled MSAs' tokens into the profile's namespace
 * (following rotation, removing copies whose MSA is gone), and the credentials plugin answers with the
 * token or upstream's errors. The scenario document runs on the same lab. On the shared hub + cluster1 lab: the
 * ClusterProfile gate is on there from the start (the lab's default), and every MSA made here is deleted again.
 */
describe('ClusterProfile and its credentials', () => {
  const lab = useSharedLab('hub-cluster1', 'test/e2e/clusterprofile.test.ts');
  const own = useTempDir('ocm-lab-clusterprofile-');
  let labFile: string;
  let kubeconfig: string;
  let hubKubeconfig: string;
  const k = (context: string, args: string[], input?: string) => kubectl(kubeconfig, ['--context', context, ...args], input);
  const ok = async (context: string, args: string[], input?: string) => {
    const r = await k(context, args, input);
    if (r.exitCode !== 0) throw new Error(`kubectl --context ${context} ${args.join(' ')}: ${r.stderr}`);
    return r.stdout.trim();
  };
  const secretOrNull = async (ns: string, name: string): Promise<Secret | null> => {
    const out = await ok('hub', ['-n', ns, 'get', 'secret', name, '--ignore-not-found', '-o', 'json']);
    return out ? (JSON.parse(out) as Secret) : null;
  };
  const plugin = (args: string[], clusterName = 'cluster1') =>
    cli(['cp-creds', ...args], { KUBECONFIG: hubKubeconfig, NAMESPACE: INVENTORY, KUBERNETES_EXEC_INFO: execInfo(clusterName) });
  const applyMsa = (name: string, labels: Record<string, string>, validity = '8640h0m0s') =>
    ok(
      'hub',
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'authentication.open-cluster-management.io/v1beta1',
        kind: 'ManagedServiceAccount',
        metadata: { name, namespace: 'cluster1', labels },
        spec: { rotation: { enabled: true, validity } },
      }),
    );
  /** The synced copy once it holds exactly the source's data. */
  const syncedMatchingSource = (name: string, what: string) =>
    waitUntil(
      async () => {
        const [source, copy] = await Promise.all([secretOrNull('cluster1', name), secretOrNull(INVENTORY, `cluster1-${name}`)]);
        return source && copy && JSON.stringify(copy.data) === JSON.stringify(source.data) ? { source, copy } : undefined;
      },
      what,
      120_000,
    );
  const syncedGone = (name: string, what: string) =>
    waitUntil(async () => ((await secretOrNull(INVENTORY, `cluster1-${name}`)) === null ? true : undefined), what, 120_000);

  beforeAll(async () => {
    ({ labFile, kubeconfig } = lab);
    hubKubeconfig = path.join(own.path, 'hub.kubeconfig');
    await fs.writeFile(hubKubeconfig, await ok('hub', ['config', 'view', '--minify', '--flatten', '--context', 'hub']), { mode: 0o600 });
  });

  it("turns OCM's feature gate on, and every ManagedCluster gets a ClusterProfile with its status and access provider", async () => {
    const gates = JSON.parse(await ok('hub', ['get', 'clustermanager', 'cluster-manager', '-o', 'jsonpath={.spec.registrationConfiguration.featureGates}']));
    expect(gates).toEqual([{ feature: 'ClusterProfile', mode: 'Enable' }]);
    const clusters = (await ok('hub', ['get', 'managedclusters', '-o', 'jsonpath={.items[*].metadata.name}'])).split(' ').sort();
    expect(clusters).toEqual(['cluster1']);
    const profiles = await waitUntil(
      async () => {
        const out = await ok('hub', ['-n', INVENTORY, 'get', 'clusterprofiles', '-o', 'jsonpath={.items[*].metadata.name}']);
        const names = out.split(' ').filter(Boolean).sort();
        return JSON.stringify(names) === JSON.stringify(clusters) ? names : undefined;
      },
      'a ClusterProfile for every ManagedCluster',
      180_000,
    );
    expect(profiles).toEqual(clusters);
    const profile = await waitUntil(
      async () => {
        const p = JSON.parse(await ok('hub', ['-n', INVENTORY, 'get', 'clusterprofile', 'cluster1', '-o', 'json'])) as {
          metadata: { labels: Record<string, string> };
          spec: unknown;
          status?: { conditions?: { type: string; status: string }[]; accessProviders?: { name: string; cluster: Record<string, unknown> }[] };
        };
        return p.status?.accessProviders?.length && p.status.conditions?.some((c) => c.type === 'ControlPlaneHealthy') ? p : undefined;
      },
      "cluster1's profile with its health and access provider",
      120_000,
    );
    expect(profile.spec).toEqual({ displayName: 'cluster1', clusterManager: { name: 'open-cluster-management' } });
    expect(profile.metadata.labels).toMatchObject({
      'x-k8s.io/cluster-manager': 'open-cluster-management',
      'open-cluster-management.io/cluster-name': 'cluster1',
    });
    expect(profile.status?.conditions?.find((c) => c.type === 'ControlPlaneHealthy')?.status).toBe('True');
    const url = await ok('hub', ['get', 'managedcluster', 'cluster1', '-o', 'jsonpath={.spec.managedClusterClientConfigs[0].url}']);
    expect(profile.status?.accessProviders).toEqual([
      {
        name: 'open-cluster-management',
        cluster: {
          server: url,
          'certificate-authority-data': expect.any(String),
          extensions: [{ name: 'client.authentication.k8s.io/exec', extension: { clusterName: 'cluster1' } }],
        },
      },
    ]);
  }, 400_000);

  it('syncs a labelled MSA token Secret, follows its rotation, and removes the copy when the MSA goes or loses the label', async () => {
    await applyMsa('synced', { [SYNC_LABEL]: 'true' });
    await applyMsa('unsynced', {});
    const first = await syncedMatchingSource('synced', 'the synced copy of the token Secret');
    const profileUid = await ok('hub', ['-n', INVENTORY, 'get', 'clusterprofile', 'cluster1', '-o', 'jsonpath={.metadata.uid}']);
    expect(first.copy.metadata.labels).toEqual({ [SYNCED_FROM]: 'cluster1-synced' });
    expect(first.copy.metadata.ownerReferences).toEqual([
      { apiVersion: 'multicluster.x-k8s.io/v1alpha1', kind: 'ClusterProfile', name: 'cluster1', uid: profileUid, controller: true },
    ]);
    expect(Object.keys(first.copy.data).sort()).toEqual(['ca.crt', 'token']);
    // Only labelled MSAs are synced (the token Secret of the other exists).
    await waitUntil(async () => ((await secretOrNull('cluster1', 'unsynced')) ? true : undefined), "the unlabelled MSA's token Secret", 120_000);
    expect(await secretOrNull(INVENTORY, 'cluster1-unsynced')).toBeNull();

    // Rotation: a new validity makes the agent request a new token; the copy follows.
    await applyMsa('synced', { [SYNC_LABEL]: 'true' }, '720h0m0s');
    const rotated = await waitUntil(
      async () => {
        const now = await syncedMatchingSource('synced', 'the copy equal to the source');
        return now.source.data.token !== first.source.data.token ? now : undefined;
      },
      'the rotated token in the synced copy',
      180_000,
    );
    expect(rotated.copy.metadata.uid).toBe(first.copy.metadata.uid);

    // The label removed: the copy is an orphan and goes; put back, it returns.
    await ok('hub', ['-n', 'cluster1', 'label', MSA, 'synced', `${SYNC_LABEL}-`]);
    await syncedGone('synced', 'the copy of an MSA that lost its label gone');
    await ok('hub', ['-n', 'cluster1', 'label', MSA, 'synced', `${SYNC_LABEL}=true`]);
    await syncedMatchingSource('synced', 'the copy back with the label');

    // The MSA deleted: its copy goes too.
    await ok('hub', ['-n', 'cluster1', 'delete', MSA, 'synced', 'unsynced', '--wait=true']);
    await syncedGone('synced', 'the copy of a deleted MSA gone');
  }, 700_000);

  it('the credentials plugin answers with the synced token, and fails as upstream for a missing Secret or flag', async () => {
    await applyMsa('plugin-user', { [SYNC_LABEL]: 'true' });
    const { copy } = await syncedMatchingSource('plugin-user', 'the synced copy for the plugin');
    try {
      const answer = await plugin(['--managed-serviceaccount=plugin-user']);
      expect(answer.exitCode, answer.stderr).toBe(0);
      expect(JSON.parse(answer.stdout)).toEqual({
        kind: 'ExecCredential',
        apiVersion: 'client.authentication.k8s.io/v1',
        spec: { interactive: false },
        status: { token: Buffer.from(copy.data.token!, 'base64').toString('utf8') },
      });

      const missingSecret = await plugin(['--managed-serviceaccount=nobody']);
      expect(missingSecret.exitCode).toBe(1);
      expect(missingSecret.stdout).toBe('');
      expect(missingSecret.stderr.trim()).toBe(
        `[open-cluster-management] failed to get synced credential secret ${INVENTORY}/cluster1-nobody: secrets "cluster1-nobody" not found`,
      );

      const missingFlag = await plugin([]);
      expect(missingFlag.exitCode).toBe(1);
      expect(missingFlag.stderr).toMatch(/^Error: --managed-serviceaccount flag is required\n/);

      const noCluster = await plugin(['--managed-serviceaccount=plugin-user'], '');
      expect(noCluster.exitCode).toBe(1);
      expect(noCluster.stderr.trim()).toBe('[open-cluster-management] missing clusterName in ExecCredential.Spec.Cluster.Config');
    } finally {
      await ok('hub', ['-n', 'cluster1', 'delete', MSA, 'plugin-user', '--ignore-not-found']);
    }
  }, 400_000);

  it('the ClusterProfile scenario document passes on this lab', async () => {
    const run = await cli(['scenario', 'run', 'clusterprofile', '--config', labFile]);
    expect(run.exitCode, `${run.stdout}\n${run.stderr}`).toBe(0);
  }, 600_000);
});
