import { beforeAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/errors.js';
import { cli, kubectl } from '../support/lab.js';
import { useSharedLab } from '../support/test-lab.js';
import { waitUntil } from '../support/wait.js';

const HW_NS = 'open-cluster-management-agent-addon';
const PLACEMENT_NS = 'open-cluster-management';
const LABEL = 'placement-e2e';

interface Meta {
  metadata: { uid: string; ownerReferences?: { kind: string; name: string; controller?: boolean }[] };
}

/**
 * Addons installed by placement (issue 28, item 5) on the default lab: the default addons come up
 * through their charts' Placements; helloworld, enabled as upstream's example installs it
 * (installStrategy Placements, Placement global in open-cluster-management), comes back when its
 * ManagedClusterAddOn is deleted, leaves a cluster the Placement stops deciding and reaches one it
 * starts deciding; `addon enable/disable` per cluster is refused under Placements; Manual works as before.
 */
describe('addons installed by placement: installStrategy Placements and Manual', () => {
  let kubeconfig: string;
  let env: NodeJS.ProcessEnv;
  const k = (context: string, args: string[]) => kubectl(kubeconfig, ['--context', context, ...args]);
  const ok = async (context: string, args: string[]) => {
    const r = await k(context, args);
    if (r.exitCode !== 0) throw new Error(`kubectl --context ${context} ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const exists = async (context: string, args: string[]) => (await k(context, ['get', ...args, '-o', 'name', '--ignore-not-found'])).stdout.trim() !== '';
  const mca = async (cluster: string, addon = 'helloworld') => {
    const r = await k('hub', [
      '-n',
      cluster,
      'get',
      'managedclusteraddons.v1alpha1.addon.open-cluster-management.io',
      addon,
      '-o',
      'json',
      '--ignore-not-found',
    ]);
    return r.stdout.trim() ? (JSON.parse(r.stdout) as Meta) : null;
  };
  const strategy = async (addon: string) =>
    JSON.parse(
      await ok('hub', ['get', 'clustermanagementaddons.v1alpha1.addon.open-cluster-management.io', addon, '-o', 'jsonpath={.spec.installStrategy}']),
    ) as unknown;
  const agentReady = (cluster: string) =>
    waitUntil(
      async () =>
        (await k(cluster, ['-n', HW_NS, 'get', 'deployment', 'helloworld-agent', '-o', 'jsonpath={.status.readyReplicas}'])).stdout === '1' || undefined,
      `helloworld's agent ready on ${cluster}`,
    );
  const listRows = async () => {
    const r = await cli(['addon', 'list', '--addon', 'helloworld', '-o', 'json'], env);
    expect(r.exitCode, r.stderr).toBe(0);
    return (JSON.parse(r.stdout) as { cluster: string; available: boolean }[]).map((s) => `${s.cluster}:${s.available}`).sort();
  };

  const lab = useSharedLab('default', 'test/e2e/addon-placements.test.ts');
  beforeAll(() => {
    ({ kubeconfig, env } = lab);
  });

  it('the default addons come up through their charts’ Placements; cluster-gateway is installed everywhere by its manager', async () => {
    // The API server fills in each placement's rolloutStrategy (type All) when it is left out.
    expect(await strategy('cluster-proxy')).toEqual({
      type: 'Placements',
      placements: [{ name: 'cluster-proxy-placement', namespace: 'open-cluster-management-addon', rolloutStrategy: { type: 'All' } }],
    });
    expect(await strategy('managed-serviceaccount')).toMatchObject({
      type: 'Placements',
      placements: [{ name: 'global', namespace: 'open-cluster-management-addon' }],
    });
    expect(await strategy('cluster-gateway')).toEqual({ type: 'Manual' });
    for (const cluster of ['cluster1', 'cluster2']) {
      // Created by the manager from the decision, owned by the ClusterManagementAddOn (as upstream's addon-manager does).
      expect((await mca(cluster, 'cluster-proxy'))?.metadata.ownerReferences).toEqual([
        expect.objectContaining({ kind: 'ClusterManagementAddOn', name: 'cluster-proxy', controller: true }),
      ]);
      expect(await mca(cluster, 'managed-serviceaccount')).not.toBeNull();
    }
  });

  it('enable installs helloworld as upstream’s example: Placement global in open-cluster-management, every cluster it decides', async () => {
    const r = await cli(['addon', 'enable', 'helloworld', '-o', 'json'], env);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      managerInstalled: true,
      createdOn: [],
      states: [
        { cluster: 'cluster1', available: true },
        { cluster: 'cluster2', available: true },
      ],
    });
    expect(await strategy('helloworld')).toEqual({
      type: 'Placements',
      placements: [{ name: 'global', namespace: PLACEMENT_NS, rolloutStrategy: { type: 'All' } }],
    });
    expect(await exists('hub', ['-n', PLACEMENT_NS, 'placement.cluster.open-cluster-management.io/global', 'managedclustersetbinding/global'])).toBe(true);
  });

  it('a ManagedClusterAddOn a user deletes comes back, and the agent with it', async () => {
    const before = await mca('cluster1');
    expect(before).not.toBeNull();
    await ok('hub', ['-n', 'cluster1', 'delete', 'managedclusteraddons.v1alpha1.addon.open-cluster-management.io', 'helloworld', '--wait=true']);
    const after = await waitUntil(async () => {
      const m = await mca('cluster1');
      return m && m.metadata.uid !== before!.metadata.uid ? m : undefined;
    }, 'helloworld ManagedClusterAddOn re-created in cluster1');
    expect(after.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'ClusterManagementAddOn', name: 'helloworld', controller: true })]);
    await waitUntil(async () => (await listRows()).join() === 'cluster1:true,cluster2:true' || undefined, 'helloworld Available again on cluster1');
    await agentReady('cluster1');
  });

  it('a cluster the Placement stops deciding loses the addon; per-cluster enable/disable are refused naming the Placement', async () => {
    await ok('hub', ['label', 'managedcluster', 'cluster1', `${LABEL}=in`, '--overwrite']);
    const predicate = { spec: { predicates: [{ requiredClusterSelector: { labelSelector: { matchLabels: { [LABEL]: 'in' } } } }] } };
    await ok('hub', ['-n', PLACEMENT_NS, 'patch', 'placement.cluster.open-cluster-management.io', 'global', '--type=merge', '-p', JSON.stringify(predicate)]);
    await waitUntil(async () => ((await mca('cluster2')) === null ? true : undefined), 'helloworld removed from cluster2 (no longer decided)');
    await waitUntil(
      async () => (!(await exists('cluster2', ['-n', HW_NS, 'deployment/helloworld-agent'])) ? true : undefined),
      "helloworld's agent gone from cluster2",
    );
    expect(await mca('cluster1')).not.toBeNull();

    const on = await cli(['addon', 'enable', 'helloworld', '--cluster', 'cluster2'], env);
    expect(on.exitCode).toBe(ExitCode.invalidInput);
    expect(on.stderr).toContain(
      'helloworld cannot be enabled on cluster2: it is installed by Placement (installStrategy Placements: open-cluster-management/global), which does not decide it',
    );
    const off = await cli(['addon', 'disable', 'helloworld', '--cluster', 'cluster1'], env);
    expect(off.exitCode).toBe(ExitCode.invalidInput);
    expect(off.stderr).toContain('helloworld cannot be disabled on cluster1 only: it is installed by Placement');
    expect(off.stderr).toContain('"installStrategy":{"type":"Manual"}');
    // enable without --cluster waits for the clusters the Placement decides.
    const all = await cli(['addon', 'enable', 'helloworld', '-o', 'json'], env);
    expect(all.exitCode, all.stderr).toBe(0);
    expect(JSON.parse(all.stdout)).toMatchObject({ states: [{ cluster: 'cluster1', available: true }] });
  });

  it('a cluster the Placement starts deciding gets the addon', async () => {
    await ok('hub', ['label', 'managedcluster', 'cluster2', `${LABEL}=in`, '--overwrite']);
    await waitUntil(async () => (await listRows()).join() === 'cluster1:true,cluster2:true' || undefined, 'helloworld Available on cluster2');
    await agentReady('cluster2');
  });

  it('disable removes it everywhere with its Placement, binding, manager and ClusterManagementAddOn', async () => {
    const r = await cli(['addon', 'disable', 'helloworld', '-o', 'json'], env);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ disabledOn: ['cluster1', 'cluster2'], managerRemoved: true });
    expect(await exists('hub', ['managedclusteraddons.v1alpha1.addon.open-cluster-management.io', '-A', '--field-selector', 'metadata.name=helloworld'])).toBe(
      false,
    );
    expect(await exists('hub', ['clustermanagementaddon', 'helloworld'])).toBe(false);
    expect(await exists('hub', ['-n', PLACEMENT_NS, 'placement.cluster.open-cluster-management.io/global'])).toBe(false);
    expect(await exists('hub', ['-n', PLACEMENT_NS, 'managedclustersetbinding/global'])).toBe(false);
    expect(await exists('hub', ['-n', 'open-cluster-management-addon', 'deployment/helloworld-addon-manager'])).toBe(false);
    for (const cluster of ['cluster1', 'cluster2']) expect(await exists(cluster, ['-n', HW_NS, 'deployment/helloworld-agent'])).toBe(false);
    // The default addons' Placements are untouched.
    expect(await exists('hub', ['-n', 'open-cluster-management-addon', 'placement.cluster.open-cluster-management.io/cluster-proxy-placement'])).toBe(true);
  });

  it('Manual still works as before: enable --cluster installs it there only; a deleted ManagedClusterAddOn stays deleted', async () => {
    const r = await cli(['addon', 'enable', 'helloworld', '--cluster', 'cluster1', '-o', 'json'], env);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ managerInstalled: true, createdOn: ['cluster1'], states: [{ cluster: 'cluster1', available: true }] });
    expect(await strategy('helloworld')).toEqual({ type: 'Manual' });
    expect(await exists('hub', ['-n', PLACEMENT_NS, 'placement.cluster.open-cluster-management.io/global'])).toBe(false);
    const added = await cli(['addon', 'enable', 'helloworld', '--cluster', 'cluster2'], env);
    expect(added.exitCode, added.stderr).toBe(0);
    expect(await listRows()).toEqual(['cluster1:true', 'cluster2:true']);
    await ok('hub', ['-n', 'cluster2', 'delete', 'managedclusteraddons.v1alpha1.addon.open-cluster-management.io', 'helloworld', '--wait=true']);
    // Four manager passes: under Manual nothing re-creates it.
    await new Promise((res) => setTimeout(res, 8_000));
    expect(await mca('cluster2')).toBeNull();
    const off = await cli(['addon', 'disable', 'helloworld'], env);
    expect(off.exitCode, off.stderr).toBe(0);
    expect(await exists('hub', ['clustermanagementaddon', 'helloworld'])).toBe(false);
  });
});
