import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderLabConfig, type LabConfig } from '../../src/config/index.js';
import { downLab, upLab } from '../../src/lab/lifecycle.js';
import { cli, isolatedLabHome, kubectl, machineSnapshot, testLabConfig } from '../support/lab.js';
import { waitUntil } from '../support/wait.js';

/**
 * The matrix cell "addon implementation = upstream" on the local runtime:
 * upstream's Go cluster-proxy (v0.10.0, apiserver-network-proxy v0.33.0) and
 * managed-serviceaccount (v0.10.0), built from the Go module proxy, run in
 * place of ours, with ocm-lab's cluster-gateway on top. Slow (first run builds
 * the upstream binaries, ~10 min cold on 2 cores; the lab itself ~6 min).
 */
describe('upstream cluster-proxy and managed-serviceaccount on the local runtime', () => {
  let home: Awaited<ReturnType<typeof isolatedLabHome>>;
  let config: LabConfig;
  let kubeconfig: string;
  let env: NodeJS.ProcessEnv;
  let before: Awaited<ReturnType<typeof machineSnapshot>>;
  const k = (context: string, args: string[], input?: string) => kubectl(kubeconfig, ['--context', context, ...args], input);

  beforeAll(async () => {
    home = await isolatedLabHome('upstream-addons');
    before = await machineSnapshot(home.home);
    const labFile = path.join(home.home, 'lab.yaml');
    config = {
      // cluster-gateway (ours) on top of upstream needs the tunnel to reach each spoke's API by name (see the tunnel test).
      ...testLabConfig('e2e-upaddons', { addons: ['cluster-proxy', 'managed-serviceaccount'] }),
      addonImplementations: { 'cluster-proxy': 'upstream', 'managed-serviceaccount': 'upstream' },
      source: labFile,
    };
    await fs.writeFile(labFile, renderLabConfig(config));
    env = { OCM_LAB_HOME: home.home, OCM_LAB_CONFIG: labFile };
    kubeconfig = (await upLab(config, { renderer: 'silent' })).status.kubeconfig ?? '';
  }, 40 * 60_000);

  afterAll(async () => {
    await downLab(config).catch(() => undefined);
    await home.cleanup();
  }, 10 * 60_000);

  it("runs upstream's managers from upstream's images, and both addons are Available on both spokes", async () => {
    const images = await k('hub', [
      '-n',
      'open-cluster-management-addon',
      'get',
      'deployments',
      '-o',
      'jsonpath={range .items[*]}{.metadata.name}={.spec.template.spec.containers[0].image}{"\\n"}{end}',
    ]);
    expect(images.stdout).toContain('cluster-proxy-addon-manager=quay.io/open-cluster-management/cluster-proxy:v0.10.0');
    expect(images.stdout).toContain('managed-serviceaccount-addon-manager=quay.io/open-cluster-management/managed-serviceaccount:v0.10.0');
    const list = await cli(['addon', 'list', '-o', 'json'], env);
    expect(list.exitCode, list.stderr).toBe(0);
    const rows = JSON.parse(list.stdout) as { addon: string; cluster: string; available: boolean }[];
    for (const addon of ['cluster-proxy', 'managed-serviceaccount']) {
      for (const cluster of ['cluster1', 'cluster2'])
        expect(rows.find((r) => r.addon === addon && r.cluster === cluster)?.available, `${addon} on ${cluster}`).toBe(true);
    }
  });

  it("upstream's proxy-server serves a tunnel to every spoke (ocm-lab proxy health)", async () => {
    const health = await cli(['proxy', 'health', '-o', 'json'], env);
    expect(health.exitCode, `${health.stdout}\n${health.stderr}`).toBe(0);
    const rows = JSON.parse(health.stdout) as { cluster: string; probedHealth: boolean; error?: string }[];
    expect(rows.map((r) => `${r.cluster}:${r.probedHealth}${r.error ? ` (${r.error})` : ''}`).sort()).toEqual(['cluster1:true', 'cluster2:true']);
  });

  it("upstream's managed-serviceaccount agent reports a token that the spoke accepts", async () => {
    const create = await k(
      'hub',
      ['apply', '-f', '-'],
      `
apiVersion: authentication.open-cluster-management.io/v1beta1
kind: ManagedServiceAccount
metadata: {name: e2e-upstream, namespace: cluster1}
spec:
  rotation: {enabled: true, validity: 24h}
`,
    );
    expect(create.exitCode, create.stderr).toBe(0);
    const token = await waitUntil(
      async () => {
        const r = await k('hub', ['-n', 'cluster1', 'get', 'secret', 'e2e-upstream', '-o', 'jsonpath={.data.token}']);
        return r.exitCode === 0 && r.stdout ? Buffer.from(r.stdout, 'base64').toString('utf8') : undefined;
      },
      'the token Secret of ManagedServiceAccount e2e-upstream',
      120_000,
    );
    const review = await k(
      'cluster1',
      ['create', '-f', '-', '-o', 'jsonpath={.status.authenticated}'],
      JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } }),
    );
    expect(review.stdout, review.stderr).toBe('true');
    const status = await k('hub', [
      '-n',
      'cluster1',
      'get',
      'managedserviceaccount',
      'e2e-upstream',
      '-o',
      'jsonpath={.status.conditions[?(@.type=="TokenReported")].status}',
    ]);
    expect(status.stdout).toBe('True');
  });

  it(
    'down leaves nothing behind',
    async () => {
      await downLab(config);
      const after = await machineSnapshot(home.home);
      expect(after).toEqual(before);
    },
    10 * 60_000,
  );
});
