import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LabConfig } from '../../src/config/index.js';
import { ExitCode } from '../../src/errors.js';
import { KubeClient } from '../../src/kube/client.js';
import { downLab } from '../../src/lab/lifecycle.js';
import { clusterKubeconfigFile } from '../../src/paths.js';
import { cli, isolatedLabHome, kubectl, testLabConfig } from '../support/lab.js';
import { upLabIn } from '../support/test-lab.js';
import { waitUntil } from '../support/wait.js';

const NS = 'open-cluster-management-agent-addon';

interface ConfigMapJson {
  metadata: { name: string; labels?: Record<string, string> };
  data?: Record<string, string>;
}

/**
 * How long a hub write takes to show on the cluster: a watch on the cluster is opened first,
 * then the hub ConfigMap is written; the time is from the write's start to the cluster's event
 * carrying the wanted data. Null when it did not arrive within `timeoutMs`.
 */
async function hubToSpokeMs(spoke: KubeClient, name: string, wanted: string, write: () => Promise<unknown>, timeoutMs = 30_000): Promise<number | null> {
  const abort = new AbortController();
  let arrived: number | null = null;
  let started = 0;
  const list = await spoke.get<{ metadata: { resourceVersion: string } }>(`/api/v1/namespaces/${NS}/configmaps`);
  const watching = spoke
    .watch<ConfigMapJson>(
      `/api/v1/namespaces/${NS}/configmaps`,
      { fieldSelector: `metadata.name=${name}`, resourceVersion: list.metadata.resourceVersion },
      (e) => {
        if ((e.type === 'ADDED' || e.type === 'MODIFIED') && e.object.data?.greeting === wanted && arrived === null) {
          arrived = performance.now();
          abort.abort();
        }
      },
      abort.signal,
    )
    .catch(() => undefined);
  started = performance.now();
  await write();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  await watching;
  clearTimeout(timer);
  return arrived === null ? null : arrived - started;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * helloworld (seed 003) on a lab of its own: installed by the lab file at `up`, then
 * `ocm-lab addon disable|enable` per cluster, the hub-to-cluster ConfigMap copy (timed),
 * updates, and a disable that leaves nothing behind.
 */
describe('helloworld addon: lab file, addon enable/disable, ConfigMaps copied from the hub', () => {
  let home: Awaited<ReturnType<typeof isolatedLabHome>>;
  let config: LabConfig;
  let kubeconfig: string;
  let env: NodeJS.ProcessEnv;
  let hub: KubeClient;
  let cluster1: KubeClient;
  const k = (context: string, args: string[], input?: string) => kubectl(kubeconfig, ['--context', context, ...args], input);
  const ok = async (context: string, args: string[], input?: string) => {
    const r = await k(context, args, input);
    if (r.exitCode !== 0) throw new Error(`kubectl --context ${context} ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const exists = async (context: string, args: string[]) => (await k(context, ['get', ...args, '-o', 'name'])).stdout.trim() !== '';
  const listRows = async () => {
    const r = await cli(['addon', 'list', '--addon', 'helloworld', '-o', 'json'], env);
    expect(r.exitCode, r.stderr).toBe(0);
    return (JSON.parse(r.stdout) as { cluster: string; available: boolean }[]).map((s) => `${s.cluster}:${s.available}`).sort();
  };
  const hubConfigMap = (name: string, greeting: string) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'cluster1' },
    data: { greeting },
  });

  beforeAll(async () => {
    home = await isolatedLabHome('helloworld');
    ({ config, kubeconfig, env } = await upLabIn(home.home, testLabConfig('e2e-hw', { addons: ['helloworld'] })));
    hub = await KubeClient.fromKubeconfig(clusterKubeconfigFile(config.name, 'hub'));
    cluster1 = await KubeClient.fromKubeconfig(clusterKubeconfigFile(config.name, 'cluster1'));
  });

  afterAll(async () => {
    hub?.close();
    cluster1?.close();
    await downLab(config).catch(() => undefined);
    await home.cleanup();
  });

  it('`addons: [helloworld]` in the lab file installs it on every managed cluster at up', async () => {
    expect(await listRows()).toEqual(['cluster1:true', 'cluster2:true']);
    expect(await ok('cluster2', ['-n', NS, 'get', 'deployment', 'helloworld-agent', '-o', 'jsonpath={.status.readyReplicas}'])).toBe('1');
  });

  it('disable on every cluster removes agents, permissions, manager and ClusterManagementAddOn', async () => {
    const r = await cli(['addon', 'disable', 'helloworld', '-o', 'json'], env);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ addon: 'helloworld', disabledOn: ['cluster1', 'cluster2'], managerRemoved: true });
    for (const cluster of ['cluster1', 'cluster2']) {
      expect(await exists('hub', ['-n', cluster, 'managedclusteraddon', '--ignore-not-found'])).toBe(false);
      expect(await exists('hub', ['-n', cluster, 'manifestwork', 'addon-helloworld-deploy-0', '--ignore-not-found'])).toBe(false);
      expect(await exists('hub', ['-n', cluster, 'role,rolebinding', '-l', 'open-cluster-management.io/addon-name=helloworld'])).toBe(false);
      expect(await exists(cluster, ['-n', NS, 'deployment/helloworld-agent', 'secret/helloworld-hub-kubeconfig', '--ignore-not-found'])).toBe(false);
    }
    expect(await exists('hub', ['clustermanagementaddon', 'helloworld', '--ignore-not-found'])).toBe(false);
    expect(await exists('hub', ['-n', 'open-cluster-management-addon', 'deployment', 'helloworld-addon-manager', '--ignore-not-found'])).toBe(false);
  });

  it('enable --cluster cluster1 installs it there only and waits until Available', async () => {
    const r = await cli(['addon', 'enable', 'helloworld', '--cluster', 'cluster1', '-o', 'json'], env);
    expect(r.exitCode, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout) as { managerInstalled: boolean; createdOn: string[]; states: { cluster: string; available: boolean }[] };
    expect(result).toMatchObject({ managerInstalled: true, createdOn: ['cluster1'], states: [{ cluster: 'cluster1', available: true }] });
    // The manager serves only the clusters it was enabled on: none appears for cluster2.
    await new Promise((res) => setTimeout(res, 5_000));
    expect(await exists('hub', ['-n', 'cluster2', 'managedclusteraddon', 'helloworld', '--ignore-not-found'])).toBe(false);
    // v1alpha1, the version our framework writes (kubectl's preferred version on OCM 1.2 is v1beta1, where the registration is `type: kubeClient`).
    const mca = await hub.get<{ status: { namespace: string; registrations: { signerName: string }[] } }>(
      '/apis/addon.open-cluster-management.io/v1alpha1/namespaces/cluster1/managedclusteraddons/helloworld',
    );
    expect(mca.status.namespace).toBe(NS);
    expect(mca.status.registrations.map((x) => x.signerName)).toEqual(['kubernetes.io/kube-apiserver-client']);
    expect(await ok('cluster1', ['-n', NS, 'get', 'deployment', 'helloworld-agent', '-o', 'jsonpath={.status.readyReplicas}'])).toBe('1');
    expect(await exists('cluster1', ['-n', NS, 'secret', 'helloworld-hub-kubeconfig'])).toBe(true);
  });

  it('a ConfigMap created in cluster1 on the hub appears on cluster1, and updates follow (timed)', async () => {
    const created: number[] = [];
    const updated: number[] = [];
    for (let i = 0; i < 5; i++) {
      const name = `hello-${i}`;
      const c = await hubToSpokeMs(cluster1, name, `hello ${i}`, () => hub.post('/api/v1/namespaces/cluster1/configmaps', hubConfigMap(name, `hello ${i}`)));
      expect(c, `${name} did not reach cluster1 within 30 s`).not.toBeNull();
      created.push(c!);
      const u = await hubToSpokeMs(cluster1, name, `hello again ${i}`, () =>
        hub.put(`/api/v1/namespaces/cluster1/configmaps/${name}`, hubConfigMap(name, `hello again ${i}`)),
      );
      expect(u, `the update of ${name} did not reach cluster1 within 30 s`).not.toBeNull();
      updated.push(u!);
    }
    const fmt = (xs: number[]) => `${xs.map((x) => x.toFixed(0)).join(', ')} ms (median ${median(xs).toFixed(0)} ms)`;
    console.log(`helloworld hub → cluster1: create ${fmt(created)}; update ${fmt(updated)}`);
    const copy = JSON.parse(await ok('cluster1', ['-n', NS, 'get', 'configmap', 'hello-0', '-o', 'json'])) as ConfigMapJson;
    expect(copy.data).toEqual({ greeting: 'hello again 0' });
    expect(copy.metadata.labels).toHaveProperty('synced-from-hub');
  });

  it('enable without --cluster adds cluster2; disable --cluster cluster2 removes it there and keeps cluster1 working', async () => {
    const on = await cli(['addon', 'enable', 'helloworld'], env);
    expect(on.exitCode, on.stderr).toBe(0);
    expect(on.stdout).toMatch(/helloworld\s+cluster2\s+True/);
    expect(await listRows()).toEqual(['cluster1:true', 'cluster2:true']);

    const off = await cli(['addon', 'disable', 'helloworld', '--cluster', 'cluster2'], env);
    expect(off.exitCode, off.stderr).toBe(0);
    expect(off.stdout).toContain('helloworld disabled on cluster2');
    expect(await exists('cluster2', ['-n', NS, 'deployment/helloworld-agent', '--ignore-not-found'])).toBe(false);
    expect(await exists('hub', ['-n', 'open-cluster-management-addon', 'deployment', 'helloworld-addon-manager'])).toBe(true);
    const t = await hubToSpokeMs(cluster1, 'hello-after', 'still here', () =>
      hub.post('/api/v1/namespaces/cluster1/configmaps', hubConfigMap('hello-after', 'still here')),
    );
    expect(t).not.toBeNull();
    expect(await listRows()).toEqual(['cluster1:true', 'cluster2:false']);
  });

  it('disable removes the copies from cluster1 and leaves the hub as before the enable', async () => {
    const r = await cli(['addon', 'disable', 'helloworld'], env);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain('manager and ClusterManagementAddOn removed');
    expect(await exists('cluster1', ['-n', NS, 'configmap', '-l', 'synced-from-hub'])).toBe(false);
    expect(await exists('cluster1', ['-n', NS, 'deployment/helloworld-agent', 'secret/helloworld-hub-kubeconfig', '--ignore-not-found'])).toBe(false);
    expect(await exists('hub', ['managedclusteraddon', '-A', '--field-selector', 'metadata.name=helloworld'])).toBe(false);
    expect(await exists('hub', ['csr', '-l', 'open-cluster-management.io/addon-name=helloworld'])).toBe(false);
    // The hub ConfigMaps are the user's: they stay.
    expect(await exists('hub', ['-n', 'cluster1', 'configmap', 'hello-0'])).toBe(true);
    await waitUntil(async () => (await listRows()).every((row) => row.endsWith(':false')) || undefined, 'helloworld listed as not available', 10_000);
  });

  it('bad input: an unknown addon lists the known ones; a default addon is not disabled per cluster; an unknown cluster is named', async () => {
    const unknown = await cli(['addon', 'enable', 'hellowrld'], env);
    expect(unknown.exitCode).toBe(ExitCode.invalidInput);
    expect(unknown.stderr).toContain('cluster-proxy, managed-serviceaccount, cluster-gateway, helloworld');
    const builtIn = await cli(['addon', 'disable', 'cluster-proxy', '--cluster', 'cluster1'], env);
    expect(builtIn.exitCode).toBe(ExitCode.invalidInput);
    expect(builtIn.stderr).toContain('its manager installs it on every managed cluster');
    const cluster = await cli(['addon', 'enable', 'helloworld', '--cluster', 'cluster9'], env);
    expect(cluster.exitCode).toBe(ExitCode.invalidInput);
    expect(cluster.stderr).toContain('--cluster cluster9: not a managed cluster of this lab');
  });

  it('the seed-003 document passes and leaves the lab as it found it', async () => {
    const r = await cli(['scenario', 'run', 'helloworld'], env);
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stdout).toContain('1 passed');
    expect(await exists('hub', ['clustermanagementaddon', 'helloworld', '--ignore-not-found'])).toBe(false);
    expect(await exists('hub', ['-n', 'cluster1', 'configmap', 'hello-seed3', '--ignore-not-found'])).toBe(false);
  }, 600_000);
});
