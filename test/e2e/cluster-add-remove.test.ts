import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultLabConfig, renderLabConfig, type LabConfig } from '../../src/config/index.js';
import { downLab, upLab } from '../../src/lab/lifecycle.js';
import { labDir } from '../../src/paths.js';
import { chainName, interfacePrefix, netnsPrefixOf, ruleComment } from '../../src/runtime/local/network/index.js';
import { openHeadlessPage, type HeadlessPage } from '../support/headless-chromium.js';
import { cli, isolatedLabHome, kubectl, machineSnapshot, startUi, testLabConfig } from '../support/lab.js';
import { waitUntil } from '../support/wait.js';

const LAB = 'e2e-add-remove';
// One spoke to start with, and every addon: a new spoke must get them all.
const base = testLabConfig(LAB, {
  clusters: [
    { name: 'hub', vpc: 'vpc-1', hub: true },
    { name: 'cluster1', vpc: 'vpc-2', hub: false },
  ],
  addons: defaultLabConfig().addons,
});
const withCluster3: LabConfig = { ...base, clusters: [...base.clusters, { name: 'cluster3', vpc: 'vpc-2', hub: false }] };
const PROXY_NS = 'open-cluster-management-cluster-proxy';
const AGENT_CERT_SECRET = 'cluster-proxy-agent-cluster2';
const CRED_NS = 'open-cluster-management-credentials';

interface Listed {
  items: { metadata: { name: string; namespace?: string; labels?: Record<string, string> }; status?: { conditions?: { type: string; status: string }[] } }[];
}

/**
 * Clusters added and removed on a lab of this file's own. The last two tests came from files that now share the
 * hub + cluster1 lab (shared-namespace.test.ts, cluster-gateway.test.ts): they add and remove a cluster, or delete
 * cluster1's ManagedCluster, which no later user of a shared lab could live with.
 */
describe('clusters added and removed live (cluster add/remove, and an edited lab file)', () => {
  let home: Awaited<ReturnType<typeof isolatedLabHome>>;
  let before: Awaited<ReturnType<typeof machineSnapshot>>;
  let labFile: string;
  let kubeconfig: string;
  let hubBefore: string[];
  const env = () => ({ OCM_LAB_HOME: home.home });
  const k = (context: string, args: string[]) => kubectl(kubeconfig, ['--context', context, ...args]);
  const ok = async (context: string, args: string[]) => {
    const r = await k(context, args);
    if (r.exitCode !== 0) throw new Error(`kubectl --context ${context} ${args.join(' ')}: ${r.stderr}`);
    return r.stdout.trim();
  };
  const exists = async (context: string, args: string[]) => (await k(context, ['get', ...args, '--ignore-not-found', '-o', 'name'])).stdout.trim() !== '';
  const list = async (context: string, args: string[]) => {
    const r = await k(context, ['get', ...args, '-o', 'json']);
    expect(r.exitCode, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as Listed;
  };

  /** Everything on the hub that could carry a trace of a cluster: its namespace, objects in it, cluster-scoped objects named or labelled after it. */
  async function hubTrace(cluster: string): Promise<string[]> {
    const trace: string[] = [];
    const namespaces = await list('hub', ['namespaces']);
    trace.push(...namespaces.items.filter((n) => n.metadata.name === cluster).map((n) => `namespace ${n.metadata.name}`));
    for (const kind of ['managedclusters', 'csr', 'clusterroles', 'clusterrolebindings', 'clustergateways']) {
      const r = await k('hub', ['get', kind, '-o', 'json']);
      if (r.exitCode !== 0) continue; // clustergateways only once the gateway serves
      for (const item of (JSON.parse(r.stdout) as Listed).items) {
        const labelled = Object.values(item.metadata.labels ?? {}).includes(cluster);
        if (item.metadata.name === cluster || item.metadata.name.includes(`:${cluster}:`) || item.metadata.name.startsWith(`${cluster}-`) || labelled)
          trace.push(`${kind} ${item.metadata.name}`);
      }
    }
    for (const kind of ['managedclusteraddons', 'manifestworks', 'managedserviceaccounts', 'secrets', 'rolebindings']) {
      const items = (await list('hub', [kind, '-A'])).items.filter((i) => i.metadata.namespace === cluster);
      trace.push(...items.map((i) => `${kind} ${i.metadata.namespace}/${i.metadata.name}`));
    }
    return trace;
  }

  async function expectJoinedWithAddons(cluster: string): Promise<void> {
    const mc = await list('hub', ['managedcluster', cluster]).catch(() => null);
    const status = (mc as unknown as Listed['items'][number] | null)?.status?.conditions?.find((c) => c.type === 'ManagedClusterConditionAvailable')?.status;
    expect(status).toBe('True');
    const addons = (await list('hub', ['managedclusteraddons', '-n', cluster])).items;
    expect(addons.map((a) => `${a.metadata.name}:${a.status?.conditions?.find((c) => c.type === 'Available')?.status}`).sort()).toEqual([
      'cluster-gateway:True',
      'cluster-proxy:True',
      'managed-serviceaccount:True',
    ]);
    const agents = await list(cluster, ['pods', '-n', 'open-cluster-management-agent']);
    expect(agents.items.length).toBe(2);
  }

  async function expectGone(cluster: string): Promise<void> {
    expect(await hubTrace(cluster)).toEqual([]);
    expect((await list('hub', ['namespaces'])).items.map((n) => n.metadata.name).sort()).toEqual(hubBefore);
    expect((await k(cluster, ['get', 'ns'])).stderr).toMatch(/context was not found|does not exist/);
    await expect(fs.access(path.join(labDir(LAB), 'clusters', cluster))).rejects.toThrow();
    const snapshot = await machineSnapshot(home.home);
    expect(snapshot.netns.filter((n) => n.includes(`.p-${cluster}-`))).toEqual([]);
    expect(snapshot.processes.filter((p) => p.includes(`/clusters/${cluster}/`))).toEqual([]);
  }

  beforeAll(async () => {
    home = await isolatedLabHome('add-remove');
    before = await machineSnapshot(home.home);
    labFile = path.join(home.home, 'lab.yaml');
    await fs.writeFile(labFile, renderLabConfig(base));
    kubeconfig = (await upLab(base, { renderer: 'silent' })).status.kubeconfig ?? '';
    hubBefore = (await list('hub', ['namespaces'])).items.map((n) => n.metadata.name).sort();
  });

  afterAll(async () => {
    await downLab(base).catch(() => undefined);
    await home.cleanup();
  });

  it('cluster add creates cluster3, joins it and installs every addon; the lab file is left alone and says so; an open `ocm-lab ui` page shows it without a reload', async () => {
    // The lab's web page in a real browser, open before the cluster is added (issue 44).
    const ui = await startUi(labFile, env());
    let page: HeadlessPage | undefined;
    try {
      page = await openHeadlessPage(ui.url, { width: 1280, height: 1000 });
      const p = page;
      const clustersShown = () => p.evaluate<string[]>("[...document.querySelectorAll('#picture text[font-weight=bold]')].map((t) => t.textContent)");
      await waitUntil(async () => ((await clustersShown()).includes('cluster1') ? true : undefined), 'the ui page to draw the lab', 120_000, 1_000);
      expect(await clustersShown()).not.toContain('cluster3');
      await p.evaluate('window.__sameDocument = true');

      const r = await cli(['cluster', 'add', 'cluster3', '--config', labFile], env());
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stdout).toContain('cluster cluster3 added');
      expect(r.stdout).toContain(`note: ${labFile} does not list cluster3`);
      await expectJoinedWithAddons('cluster3');
      expect(await hubTrace('cluster3')).toContain('managedclusters cluster3');

      // The page polls every 5 s and the picture is read at most every 10 s.
      await waitUntil(async () => ((await clustersShown()).includes('cluster3') ? true : undefined), 'cluster3 on the open ui page', 120_000, 1_000);
      expect(await p.evaluate<boolean>('window.__sameDocument === true'), 'the page was not reloaded').toBe(true);
      expect(await clustersShown(), 'every cluster of the lab on the page').toEqual(expect.arrayContaining(['hub', 'cluster1', 'cluster3']));
      const shot = process.env.OCM_LAB_UI_SCREENSHOT;
      if (shot) await fs.writeFile(shot, await p.screenshot());
    } finally {
      await page?.close();
      await ui.stop();
    }
  });

  it('up with the lab file that does not list cluster3 deregisters and deletes it, leaving no trace', async () => {
    const r = await cli(['up', '--config', labFile], env());
    expect(r.exitCode, r.stderr).toBe(0);
    await expectGone('cluster3');
    await expectJoinedWithAddons('cluster1');
  });

  it('an edited lab file and up add it back; cluster remove takes it away again, leaving no trace', async () => {
    await fs.writeFile(labFile, renderLabConfig(withCluster3));
    const added = await cli(['up', '--config', labFile], env());
    expect(added.exitCode, added.stderr).toBe(0);
    await expectJoinedWithAddons('cluster3');
    const removed = await cli(['cluster', 'remove', 'cluster3', '--config', labFile], env());
    expect(removed.exitCode, removed.stderr).toBe(0);
    expect(removed.stdout).toContain(`note: ${labFile} still lists cluster3`);
    await expectGone('cluster3');
    await expectJoinedWithAddons('cluster1');
  });

  it('refuses to remove the hub (exit 6), an unknown VPC or a taken name (exit 2), and a changed hub in the lab file (exit 6), changing nothing', async () => {
    const hub = await cli(['cluster', 'remove', 'hub', '--config', labFile], env());
    expect(hub.exitCode).toBe(6);
    expect(hub.stderr).toContain("cluster 'hub' is the hub of lab 'e2e-add-remove'");
    const vpc = await cli(['cluster', 'add', 'cluster4', '--vpc', 'vpc-9', '--config', labFile], env());
    expect(vpc.exitCode).toBe(2);
    expect(vpc.stderr).toContain('--vpc vpc-9 is not a VPC of lab');
    const taken = await cli(['cluster', 'add', 'cluster1', '--config', labFile], env());
    expect(taken.exitCode).toBe(2);
    const otherHub = path.join(home.home, 'other-hub.yaml');
    await fs.writeFile(
      otherHub,
      renderLabConfig({
        ...base,
        clusters: [
          { name: 'hub2', vpc: 'vpc-1', hub: true },
          { name: 'cluster1', vpc: 'vpc-2', hub: false },
        ],
      }),
    );
    const moved = await cli(['up', '--config', otherHub], env());
    expect(moved.exitCode).toBe(6);
    expect(moved.stderr).toContain('the hub of a lab cannot change');
    expect((await list('hub', ['managedclusters'])).items.map((m) => m.metadata.name)).toEqual(['cluster1']);
  });

  // Adds and removes a cluster: from shared-namespace.test.ts, whose lab is shared.
  it('cluster remove leaves no cluster-proxy agent certificate of the cluster on the hub', async () => {
    // A cluster of its own to remove (cluster1 is alone in its VPC, and a VPC must hold a cluster), in a lab file that lists it.
    const withCluster2 = path.join(home.home, 'with-cluster2.yaml');
    const cluster1 = base.clusters.find((c) => c.name === 'cluster1')!;
    await fs.writeFile(withCluster2, renderLabConfig({ ...base, clusters: [...base.clusters, { name: 'cluster2', vpc: cluster1.vpc, hub: false }] }));
    const added = await cli(['up', '--config', withCluster2]);
    expect(added.exitCode, added.stderr).toBe(0);
    const secret = JSON.parse(await ok('hub', ['-n', PROXY_NS, 'get', 'secret', AGENT_CERT_SECRET, '-o', 'json'])) as {
      metadata: { ownerReferences?: { kind: string; name: string }[] };
    };
    expect(secret.metadata.ownerReferences).toContainEqual(expect.objectContaining({ kind: 'ManagedCluster', name: 'cluster2' }));
    const removed = await cli(['cluster', 'remove', 'cluster2', '--config', withCluster2]);
    expect(removed.exitCode, removed.stderr).toBe(0);
    // Garbage collection follows the ManagedCluster: shortly after, not necessarily before the command returns.
    await waitUntil(
      async () => (!(await exists('hub', ['-n', PROXY_NS, 'secret', AGENT_CERT_SECRET])) ? true : undefined),
      `Secret ${PROXY_NS}/${AGENT_CERT_SECRET} gone from the hub`,
      120_000,
    );
    expect(await exists('hub', ['-n', PROXY_NS, 'secret', 'cluster-proxy-agent-cluster1'])).toBe(true);
  }, 1_200_000);

  // Deletes cluster1's ManagedCluster: from cluster-gateway.test.ts, whose lab is shared.
  it('a ClusterGateway goes when its ManagedCluster goes', async () => {
    expect((await k('hub', ['get', 'clustergateway', 'cluster1'])).exitCode).toBe(0);
    await ok('hub', ['delete', 'managedcluster', 'cluster1', '--wait=false']);
    await waitUntil(
      async () => ((await k('hub', ['get', 'clustergateway', 'cluster1'])).exitCode !== 0 ? true : undefined),
      'ClusterGateway cluster1 to go',
      60_000,
      500,
    );
    expect((await k('hub', ['-n', CRED_NS, 'get', 'secret', 'cluster1'])).stderr).toMatch(/not found/);
  });

  it('down removes all of it', async () => {
    await downLab(base);
    // Only this lab's resources: other labs may come and go on the machine meanwhile.
    const ours = (s: Awaited<ReturnType<typeof machineSnapshot>>) => ({
      netns: s.netns.filter((n) => n.startsWith(netnsPrefixOf(LAB))),
      links: s.links.filter((l) => l.startsWith(interfacePrefix(LAB))),
      rules: s.rules.filter((r) => r.includes(ruleComment(LAB)) || r.includes(chainName(LAB))),
      processes: s.processes,
    });
    expect(ours(await machineSnapshot(home.home))).toEqual(ours(before));
  });
});
