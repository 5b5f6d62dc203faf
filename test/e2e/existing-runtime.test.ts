import fs from 'node:fs/promises';
import path from 'node:path';
import YAML from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultLabConfig, renderLabConfig } from '../../src/config/index.js';
import { downLab, upLab } from '../../src/lab/lifecycle.js';
import { labDir, labKubeconfigFile } from '../../src/paths.js';
import { pluginCalls, writeExecPlugin } from '../support/exec-plugin.js';
import { hubAvailability } from '../support/hub-availability.js';
import { clusterSnapshot } from '../support/cluster-snapshot.js';
import { cli, isolatedLabHome, upOnExisting, kubectl, testLabConfig } from '../support/lab.js';

/**
 * The existing-clusters runtime against the clusters of a local lab brought
 * up without OCM: `up --runtime existing` installs OCM and the addons,
 * scenarios run, `down` leaves the clusters as they were found. cluster2's
 * context authenticates through a credential plugin, as cloud contexts do.
 */
const LOCAL = 'e2e-exbase';
const LAB = 'e2e-existing';
const local = testLabConfig(LOCAL);
const CLUSTERS = ['hub', 'cluster1', 'cluster2'];
const ADDONS = ['cluster-proxy', 'managed-serviceaccount', 'cluster-gateway'];

type KubeconfigDoc = {
  clusters: { name: string; cluster: Record<string, string> }[];
  users: { name: string; user: Record<string, unknown> }[];
  contexts: { name: string; context: Record<string, string> }[];
};

/**
 * A copy of the kubeconfig whose `context` authenticates with a credential plugin (in `pluginDir`)
 * that hands out an admin ServiceAccount token of that cluster, claiming it expires `ttl` seconds on.
 */
async function withPluginUser(kubeconfig: string, context: string, pluginDir: string, ttl: number, out: string): Promise<void> {
  const k = async (args: string[]) => {
    const r = await kubectl(kubeconfig, ['--context', context, ...args]);
    if (r.exitCode !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  await k(['-n', 'kube-system', 'create', 'serviceaccount', 'plugin-admin']);
  await k(['create', 'clusterrolebinding', 'plugin-admin', '--clusterrole', 'cluster-admin', '--serviceaccount', 'kube-system:plugin-admin']);
  await fs.mkdir(pluginDir, { recursive: true });
  await fs.writeFile(path.join(pluginDir, 'token'), (await k(['-n', 'kube-system', 'create', 'token', 'plugin-admin', '--duration', '2h'])).trim(), {
    mode: 0o600,
  });
  await fs.writeFile(path.join(pluginDir, 'ttl'), String(ttl));
  const command = await writeExecPlugin(pluginDir);
  const doc = YAML.parse(await fs.readFile(kubeconfig, 'utf8')) as KubeconfigDoc;
  doc.users.push({ name: `${context}-plugin`, user: { exec: { apiVersion: 'client.authentication.k8s.io/v1', command, interactiveMode: 'Never' } } });
  doc.contexts.find((c) => c.name === context)!.context.user = `${context}-plugin`;
  await fs.writeFile(out, YAML.stringify(doc), { mode: 0o600 });
}

async function snapshot(kubeconfig: string): Promise<Record<string, Record<string, string[]>>> {
  const all: Record<string, Record<string, string[]>> = {};
  for (const c of CLUSTERS) all[c] = await clusterSnapshot(kubeconfig, c);
  return all;
}

describe('the existing-clusters runtime (on the clusters of a local lab without OCM)', () => {
  let home: Awaited<ReturnType<typeof isolatedLabHome>>;
  let kubeconfig: string;
  let labFile: string;
  let before: Awaited<ReturnType<typeof snapshot>>;
  /** The same clusters, cluster2 through a credential plugin. */
  let userKubeconfig: string;
  let pluginDir: string;

  beforeAll(async () => {
    home = await isolatedLabHome('existing');
    const status = (await upLab(local, { renderer: 'silent', install: false })).status;
    kubeconfig = status.kubeconfig ?? '';
    labFile = path.join(home.home, 'existing.yaml');
    await fs.writeFile(labFile, renderLabConfig({ ...defaultLabConfig(), name: LAB }));
    pluginDir = path.join(home.home, 'plugin');
    userKubeconfig = path.join(home.home, 'user.kubeconfig');
    // A token that claims to expire 20 s after it is handed out: up outlives several.
    await withPluginUser(kubeconfig, 'cluster2', pluginDir, 20, userKubeconfig);
    before = await snapshot(kubeconfig);
  });

  afterAll(async () => {
    if (labFile) await cli(['down', '--config', labFile]).catch(() => undefined);
    await downLab(local).catch(() => undefined);
    await home.cleanup();
  });

  it('refuses a context whose credential plugin fails (exit 2, naming the context and what the plugin printed)', async () => {
    await fs.writeFile(path.join(pluginDir, 'fail'), 'the SSO session expired: log in again');
    try {
      const r = await upOnExisting(userKubeconfig, 'hub', ['cluster2'], labFile);
      expect(r.exitCode, r.stderr).toBe(2);
      expect(r.stderr).toContain("context 'cluster2': credential plugin");
      expect(r.stderr).toContain('token-plugin: the SSO session expired: log in again');
      await expect(fs.access(path.join(labDir(LAB), 'state.json'))).rejects.toThrow();
    } finally {
      await fs.rm(path.join(pluginDir, 'fail'));
    }
  });

  it('refuses a context that does not answer (exit 2, naming it and what it said)', async () => {
    const doc = YAML.parse(await fs.readFile(kubeconfig, 'utf8')) as KubeconfigDoc;
    const hubCluster = doc.clusters.find((c) => c.name === 'hub')!;
    // Loopback port 9 (discard): nothing listens there.
    doc.clusters.push({ name: 'silent', cluster: { ...hubCluster.cluster, server: 'https://127.0.0.1:9' } });
    doc.contexts.push({ name: 'silent', context: { cluster: 'silent', user: 'hub' } });
    const file = path.join(home.home, 'with-silent.kubeconfig');
    await fs.writeFile(file, YAML.stringify(doc), { mode: 0o600 });
    const r = await upOnExisting(file, 'hub', ['silent'], labFile);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain("context 'silent'");
    expect(r.stderr).toMatch(/ECONNREFUSED|no answer/);
    await expect(fs.access(path.join(labDir(LAB), 'state.json'))).rejects.toThrow();
  });

  it('refuses a hub that already runs another OCM hub (exit 2, and why)', async () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'clustermanagers.operator.open-cluster-management.io' },
      spec: {
        group: 'operator.open-cluster-management.io',
        names: { kind: 'ClusterManager', plural: 'clustermanagers', singular: 'clustermanager', listKind: 'ClusterManagerList' },
        scope: 'Cluster',
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
      },
    };
    const applied = await kubectl(kubeconfig, ['--context', 'cluster2', 'apply', '-f', '-'], JSON.stringify(crd));
    expect(applied.exitCode, applied.stderr).toBe(0);
    try {
      const r = await upOnExisting(kubeconfig, 'cluster2', ['cluster1'], labFile);
      expect(r.exitCode, r.stderr).toBe(2);
      expect(r.stderr).toContain('already runs an OCM hub');
      expect(r.stderr).toContain('clustermanagers.operator.open-cluster-management.io');
      await expect(fs.access(path.join(labDir(LAB), 'state.json'))).rejects.toThrow();
    } finally {
      await kubectl(kubeconfig, ['--context', 'cluster2', 'delete', 'crd', crd.metadata.name, '--wait=true', '--ignore-not-found']);
    }
  });

  it('stops before installing anything when a cluster cannot run an image the lab needs (exit 8, naming cluster and image)', async () => {
    // OCM's images at another release than the nodelets were given: no node runs them, so the check pods stay Pending.
    const otherOcm = path.join(home.home, 'other-ocm.yaml');
    await fs.writeFile(otherOcm, renderLabConfig({ ...defaultLabConfig(), name: LAB, ocmVersion: 'v1.3.1' }));
    const r = await upOnExisting(kubeconfig, 'hub', ['cluster1'], otherOcm, { OCM_LAB_IMAGE_CHECK_TIMEOUT_MS: '20000' });
    expect(r.exitCode, r.stderr).toBe(8);
    expect(r.stderr).toContain('cluster hub (context hub) cannot run the lab images');
    expect(r.stderr).toContain('quay.io/open-cluster-management/registration-operator:v1.3.1');
    expect(r.stderr).toContain('cluster cluster1 (context cluster1)');
    await expect(fs.access(path.join(labDir(LAB), 'state.json'))).rejects.toThrow();
    for (const cluster of ['hub', 'cluster1']) {
      const left = await kubectl(kubeconfig, ['--context', cluster, 'get', 'pods,namespaces', '-A', '-o', 'name']);
      expect(left.stdout).not.toContain('ocm-lab-image-check');
      expect(left.stdout).not.toContain('namespace/open-cluster-management');
    }
  });

  it('installs OCM and the addons: ManagedClusters available, addons Available, status says existing', async () => {
    const callsBefore = await pluginCalls(pluginDir);
    const started = Date.now();
    const r = await upOnExisting(userKubeconfig, 'hub', ['cluster1', 'cluster2'], labFile);
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    // The plugin ran again once its token had expired (not once per request, not only once).
    const calls = (await pluginCalls(pluginDir)) - callsBefore;
    expect(calls, `plugin calls during an up of ${Math.round((Date.now() - started) / 1000)} s`).toBeGreaterThan(1);
    expect(calls).toBeLessThan(100);
    const labKubeconfig = labKubeconfigFile(LAB);
    // What the lab wrote for cluster2 is the plugin, not a token that expires.
    const written = YAML.parse(await fs.readFile(labKubeconfig, 'utf8')) as KubeconfigDoc;
    const cluster2User = written.users.find((u) => u.name === written.contexts.find((c) => c.name === 'cluster2')!.context.user)!.user;
    expect(cluster2User.token).toBeUndefined();
    expect(cluster2User.exec).toMatchObject({ command: path.join(pluginDir, 'token-plugin.mjs') });
    const hub = await hubAvailability(labKubeconfig);
    expect(hub.clusters).toEqual([
      ['cluster1', true],
      ['cluster2', true],
    ]);
    expect(hub.availableAddons).toEqual(['cluster1', 'cluster2'].flatMap((c) => ADDONS.map((a) => `${c}/${a}`)).sort());

    const status = await cli(['status', '-o', 'json', '--config', labFile]);
    expect(status.exitCode, status.stderr).toBe(0);
    const s = JSON.parse(status.stdout) as {
      runtime: string;
      clusters: { name: string; ready: boolean }[];
      capabilities: string[];
      isolation: { enforced: boolean };
    };
    expect(s.runtime).toBe('existing');
    expect(s.clusters.map((c) => [c.name, c.ready])).toEqual(CLUSTERS.map((c) => [c, true]));
    expect(s.capabilities).toEqual(expect.arrayContaining(['ocm', 'pods']));
    expect(s.isolation.enforced).toBe(false);

    // What down must take away again is there (so the comparison after down proves something).
    const during = await snapshot(kubeconfig);
    for (const c of CLUSTERS) expect(during[c]!.Namespace).toEqual(expect.arrayContaining(['open-cluster-management']));
    expect(during.hub!.Namespace).toEqual(expect.arrayContaining(['open-cluster-management-hub', 'open-cluster-management-addon', 'cluster1']));
    expect(during.hub!.APIService).toContain('v1alpha1.cluster.core.oam.dev');
    expect(during.hub!.ManagedCluster).toEqual(['cluster1', 'cluster2']);
    expect(during.cluster1!.Namespace).toEqual(expect.arrayContaining(['open-cluster-management-agent', 'open-cluster-management-cluster-proxy']));
    expect(during.cluster1!.CustomResourceDefinition).toContain('appliedmanifestworks.work.open-cluster-management.io');
    for (const c of CLUSTERS) expect(during[c]!.ClusterRole!.length).toBeGreaterThan(before[c]!.ClusterRole!.length);

    // A second up (without the flags: the lab remembers its contexts) changes nothing and succeeds.
    const again = await cli(['up', '--config', labFile]);
    expect(again.exitCode, `${again.stdout}\n${again.stderr}`).toBe(0);
  }, 900_000);

  it('runs the manifestwork scenario', async () => {
    const r = await cli(['scenario', 'run', 'manifestwork', '--config', labFile]);
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stdout).toContain('1 passed');
  }, 600_000);

  it('deregisters one spoke while the addon managers run (what cluster remove does): no trace of it on the hub', async () => {
    const { KubeClient } = await import('../../src/kube/client.js');
    const { operatorManifests } = await import('../../src/ocm/operators.js');
    const { deregisterCluster } = await import('../../src/ocm/uninstall.js');
    const { kubectlPath } = await import('../support/lab.js');
    const labKubeconfig = labKubeconfigFile(LAB);
    const hub = await KubeClient.fromKubeconfig(path.join(labDir(LAB), 'clusters', 'hub', 'kubeconfigs', 'admin.kubeconfig'));
    const spoke = await KubeClient.fromKubeconfig(path.join(labDir(LAB), 'clusters', 'cluster2', 'kubeconfigs', 'admin.kubeconfig'));
    try {
      const operatorObjects = await operatorManifests('klusterlet', { ocmVersion: 'v1.2.1', kubectl: await kubectlPath() });
      await deregisterCluster(hub, spoke, 'cluster2', { operatorObjects, timeoutMs: 120_000 });
    } finally {
      hub.close();
      spoke.close();
    }
    const mcs = await kubectl(labKubeconfig, ['--context', 'hub', 'get', 'managedclusters', '-o', 'name']);
    expect(mcs.stdout.trim()).toBe('managedcluster.cluster.open-cluster-management.io/cluster1');
    expect((await kubectl(labKubeconfig, ['--context', 'hub', 'get', 'namespace', 'cluster2'])).exitCode).not.toBe(0);
    const rbac = await kubectl(labKubeconfig, ['--context', 'hub', 'get', 'clusterroles,clusterrolebindings,csr', '-o', 'name']);
    expect(rbac.stdout.split('\n').filter((l) => l.includes('cluster2'))).toEqual([]);
    const spokeNs = await kubectl(labKubeconfig, ['--context', 'cluster2', 'get', 'namespaces', '-o', 'name']);
    expect(spokeNs.stdout).not.toContain('open-cluster-management');
  }, 600_000);

  it('down takes off everything it installed and leaves the clusters as it found them', async () => {
    const r = await cli(['down', '--verbose', '--config', labFile]);
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    console.log(`down:\n${r.stderr}`);
    await expect(fs.access(labDir(LAB))).rejects.toThrow();
    expect(await snapshot(kubeconfig)).toEqual(before);
    const again = await cli(['down', '--config', labFile]);
    expect(again.exitCode, again.stderr).toBe(0);
  }, 600_000);
});
