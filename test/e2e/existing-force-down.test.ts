import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import YAML from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultLabConfig, renderLabConfig } from '../../src/config/index.js';
import { downLab, upLab } from '../../src/lab/lifecycle.js';
import { clusterKubeconfigFile, labDir, labKubeconfigFile } from '../../src/paths.js';
import { clusterSnapshot } from '../support/cluster-snapshot.js';
import { cli, isolatedLabHome, upOnExisting, kubectl, testLabConfig } from '../support/lab.js';
import { waitUntil } from '../support/wait.js';

/**
 * Issue 32, item 5: `down --force` for a lab on existing clusters one of which cannot be reached.
 * The clusters are those of a local lab brought up without OCM (as in existing-runtime.test.ts);
 * after `up --runtime existing`, cluster2 is cut off: its OCM agents stopped (scaled to 0 through
 * the local lab's own kubeconfig) and the lab's context for it pointed at a closed loopback port, as
 * when a cluster was deleted elsewhere. Plain `down` refuses, naming it; `down --force` takes OCM
 * off the hub and cluster1 as `down` does, lists cluster2 as not cleaned, removes the lab directory
 * and exits 0.
 */
const LOCAL = 'e2e-h5fb';
const LAB = 'e2e-h5f';
const local = testLabConfig(LOCAL);

/** A loopback port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Points the entry of `cluster` in a kubeconfig file at `server` (the lab's own copies: what `down` reads). */
async function repoint(file: string, cluster: string, server: string): Promise<void> {
  const doc = YAML.parse(await fs.readFile(file, 'utf8')) as { clusters: { name: string; cluster: { server: string } }[] };
  const entry = doc.clusters.find((c) => c.name === cluster);
  if (!entry) throw new Error(`${file} has no cluster ${cluster}`);
  entry.cluster.server = server;
  await fs.writeFile(file, YAML.stringify(doc), { mode: 0o600 });
}

describe('down --force on a lab of existing clusters whose spoke cannot be reached', () => {
  let home: Awaited<ReturnType<typeof isolatedLabHome>>;
  let kubeconfig: string;
  let labFile: string;
  let before: Record<string, Record<string, string[]>>;

  beforeAll(async () => {
    home = await isolatedLabHome('h5force');
    kubeconfig = (await upLab(local, { renderer: 'silent', install: false })).status.kubeconfig ?? '';
    labFile = path.join(home.home, 'existing.yaml');
    await fs.writeFile(labFile, renderLabConfig({ ...defaultLabConfig(), name: LAB, addons: ['cluster-proxy'] }));
    before = { hub: await clusterSnapshot(kubeconfig, 'hub'), cluster1: await clusterSnapshot(kubeconfig, 'cluster1') };
    const up = await upOnExisting(kubeconfig, 'hub', ['cluster1', 'cluster2'], labFile);
    expect(up.exitCode, `${up.stdout}\n${up.stderr}`).toBe(0);
  }, 1_200_000);

  afterAll(async () => {
    if (labFile) await cli(['down', '--force', '--config', labFile]).catch(() => undefined);
    await downLab(local).catch(() => undefined);
    await home.cleanup();
  });

  it('cluster2 cut off: its OCM agents stopped, the lab’s context for it pointing at a closed port', async () => {
    const scaleDown = (ns: string, which: string) => kubectl(kubeconfig, ['--context', 'cluster2', '-n', ns, 'scale', 'deployment', which, '--replicas=0']);
    for (const r of [await scaleDown('open-cluster-management', '--all'), await scaleDown('open-cluster-management-agent', '--all')])
      expect(r.exitCode, r.stderr).toBe(0);
    await waitUntil(
      async () => {
        const r = await kubectl(kubeconfig, ['--context', 'cluster2', '-n', 'open-cluster-management-agent', 'get', 'pods', '-o', 'name']);
        return r.exitCode === 0 && r.stdout.trim() === '' ? true : undefined;
      },
      "cluster2's klusterlet agents gone",
      120_000,
    );
    const nowhere = `https://127.0.0.1:${await closedPort()}`;
    await repoint(clusterKubeconfigFile(LAB, 'cluster2'), 'cluster2', nowhere);
    await repoint(labKubeconfigFile(LAB), 'cluster2', nowhere);
  }, 300_000);

  it('plain down refuses, naming the cluster and --force; nothing is removed', async () => {
    const r = await cli(['down', '--config', labFile]);
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(4);
    expect(r.stderr).toMatch(/cannot take the lab's OCM off cluster2:/);
    expect(r.stderr).toMatch(/cluster2: https:\/\/127\.0\.0\.1:\d+ does not answer GET \/readyz with ok: /);
    expect(r.stderr).toContain('ECONNREFUSED');
    expect(r.stderr).toContain('ocm-lab down --force');
    await fs.access(path.join(labDir(LAB), 'state.json'));
    const mcs = await kubectl(kubeconfig, ['--context', 'hub', 'get', 'managedclusters', '-o', 'name']);
    expect(mcs.stdout).toContain('managedcluster.cluster.open-cluster-management.io/cluster2');
  }, 120_000);

  it('down --force: exit 0, the hub and cluster1 as before the lab, cluster2 named as not cleaned, no lab directory', async () => {
    const r = await cli(['down', '--force', '--verbose', '--config', labFile]);
    console.log(`down --force:\n${r.stdout}\n${r.stderr}`);
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stdout).toMatch(/not removed \(could not reach or clean\):\n {2}OCM and the addons on cluster2 \(https:\/\/127\.0\.0\.1:\d+ does not answer/);
    await expect(fs.access(labDir(LAB))).rejects.toThrow();
    expect({ hub: await clusterSnapshot(kubeconfig, 'hub'), cluster1: await clusterSnapshot(kubeconfig, 'cluster1') }).toEqual(before);
    // What could not be reached keeps what the lab put there (the local lab's own kubeconfig still reaches it).
    const left = await kubectl(kubeconfig, ['--context', 'cluster2', 'get', 'namespace', 'open-cluster-management-agent', '-o', 'name']);
    expect(left.stdout.trim()).toBe('namespace/open-cluster-management-agent');
    // Nothing of the lab is left, so a second down has nothing to do.
    const again = await cli(['down', '--config', labFile]);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stdout).toContain('was not up');
  }, 600_000);
});
