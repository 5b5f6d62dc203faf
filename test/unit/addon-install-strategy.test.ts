import { describe, expect, it } from 'vitest';
import {
  clusterManagementInstallStrategy,
  decidedClusters,
  describeInstallStrategy,
  installChanges,
  installStrategyOf,
  type InstallStrategy,
  type PlacementDecision,
} from '../../src/addons/framework/install-strategy.js';
import { clusterManagementAddOn } from '../../src/addons/framework/manager.js';
import { helloworldAddon } from '../../src/addons/helloworld/addon.js';
import { ADDON_INSTALL, placementObjects } from '../../src/addons/placements.js';
import { placementRefusal, strategyForNewInstall } from '../../src/addons/enablement.js';

const GLOBAL: InstallStrategy = { type: 'Placements', placements: [{ name: 'global', namespace: 'open-cluster-management' }] };
const decision = (placement: string, ...clusters: string[]): PlacementDecision => ({
  apiVersion: 'cluster.open-cluster-management.io/v1beta1',
  kind: 'PlacementDecision',
  metadata: { name: `${placement}-decision-1`, namespace: 'ns', labels: { 'cluster.open-cluster-management.io/placement': placement } },
  status: { decisions: clusters.map((clusterName) => ({ clusterName, reason: '' })) },
});

describe('install strategy of a ClusterManagementAddOn', () => {
  it('reads Manual (also empty or unset type, the API default) and Placements; an unknown type is none', () => {
    expect(installStrategyOf({ spec: { installStrategy: { type: 'Manual' } } })).toEqual({ type: 'Manual' });
    expect(installStrategyOf({ spec: { installStrategy: {} } })).toEqual({ type: 'Manual' });
    expect(installStrategyOf({ spec: { installStrategy: { type: '' } } })).toEqual({ type: 'Manual' });
    expect(installStrategyOf({ spec: {} })).toBeNull();
    expect(installStrategyOf(null)).toBeNull();
    expect(installStrategyOf({ spec: { installStrategy: { type: 'Everywhere' } } })).toBeNull();
    const placements = [
      { name: 'global', namespace: 'open-cluster-management', rolloutStrategy: { type: 'All' } },
      { name: 'no-namespace' },
      { namespace: 'no-name' },
      'junk',
    ];
    expect(installStrategyOf({ spec: { installStrategy: { type: 'Placements', placements } } })).toEqual({
      type: 'Placements',
      placements: [{ name: 'global', namespace: 'open-cluster-management', rolloutStrategy: { type: 'All' } }],
    });
  });

  it('the manager writes the strategy a CMA already has (a user’s choice), else the addon’s; AllClusters addons say Manual', () => {
    expect(clusterManagementInstallStrategy(GLOBAL, null)).toEqual(GLOBAL);
    expect(clusterManagementInstallStrategy(GLOBAL, { type: 'Manual' })).toEqual({ type: 'Manual' });
    expect(clusterManagementInstallStrategy({ type: 'Manual' }, GLOBAL)).toEqual(GLOBAL);
    expect(clusterManagementInstallStrategy('AllClusters', GLOBAL)).toEqual({ type: 'Manual' });
    const cma = clusterManagementAddOn(helloworldAddon());
    expect(cma.spec?.installStrategy).toEqual(GLOBAL);
    const switched = clusterManagementAddOn(helloworldAddon(), { ...cma, spec: { ...cma.spec, installStrategy: { type: 'Manual' } } });
    expect(switched.spec?.installStrategy).toEqual({ type: 'Manual' });
    expect(clusterManagementAddOn({ ...helloworldAddon(), install: undefined }).spec?.installStrategy).toEqual({ type: 'Manual' });
  });

  it('describes a strategy for messages', () => {
    expect(describeInstallStrategy(GLOBAL)).toBe('Placements (open-cluster-management/global)');
    expect(describeInstallStrategy({ type: 'Manual' })).toBe('Manual');
    expect(describeInstallStrategy('AllClusters')).toBe('AllClusters');
  });
});

describe('which ManagedClusterAddOns the manager creates and deletes', () => {
  const accepted = new Set(['cluster1', 'cluster2', 'cluster3']);

  it('collects the clusters of every decision object, once each', () => {
    expect([...decidedClusters([decision('global', 'cluster1', 'cluster2'), decision('global', 'cluster2', 'cluster3'), decision('global')])]).toEqual([
      'cluster1',
      'cluster2',
      'cluster3',
    ]);
  });

  it('Placements: one on every decided accepted cluster; one deleted by a user comes back; one no decision lists goes, whoever made it', () => {
    const decided = new Set(['cluster1', 'cluster2', 'not-accepted']);
    expect(installChanges(GLOBAL, { existing: ['cluster2', 'cluster3'], accepted, decided })).toEqual({ create: ['cluster1'], remove: ['cluster3'] });
    expect(installChanges(GLOBAL, { existing: [], accepted, decided: new Set() })).toEqual({ create: [], remove: [] });
    // A Placement that decides nothing (or is missing): every ManagedClusterAddOn goes, as upstream's addon-manager does.
    expect(installChanges(GLOBAL, { existing: ['cluster1'], accepted })).toEqual({ create: [], remove: ['cluster1'] });
  });

  it('Manual: the manager creates and deletes none; AllClusters: every accepted cluster, none deleted', () => {
    expect(installChanges({ type: 'Manual' }, { existing: ['cluster2'], accepted, decided: new Set(['cluster1']) })).toEqual({ create: [], remove: [] });
    expect(installChanges('AllClusters', { existing: ['cluster2', 'gone'], accepted })).toEqual({ create: ['cluster1', 'cluster3'], remove: [] });
  });
});

describe('each addon’s default, as upstream’s chart or example installs it', () => {
  it('cluster-proxy, managed-serviceaccount and helloworld by Placement; cluster-gateway everywhere', () => {
    expect(ADDON_INSTALL).toEqual({
      'cluster-proxy': { type: 'Placements', placements: [{ name: 'cluster-proxy-placement', namespace: 'open-cluster-management-addon' }] },
      'managed-serviceaccount': {
        type: 'Placements',
        placements: [{ name: 'global', namespace: 'open-cluster-management-addon', rolloutStrategy: { type: 'All' } }],
      },
      'cluster-gateway': 'AllClusters',
      helloworld: GLOBAL,
    });
  });

  it('the lab creates the global cluster set binding and the Placement each chart creates', () => {
    const kinds = (addon: string) => placementObjects(addon).map((o) => `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`);
    expect(kinds('helloworld')).toEqual(['ManagedClusterSetBinding open-cluster-management/global', 'Placement open-cluster-management/global']);
    expect(kinds('cluster-proxy')).toEqual([
      'ManagedClusterSetBinding open-cluster-management-addon/global',
      'Placement open-cluster-management-addon/cluster-proxy-placement',
    ]);
    expect(kinds('cluster-gateway')).toEqual([]);
    expect(placementObjects('helloworld', { type: 'Manual' })).toEqual([]);
    const [binding, hello] = placementObjects('helloworld');
    expect(binding!.spec).toEqual({ clusterSet: 'global' });
    expect(hello!.spec).toEqual({ clusterSets: ['global'], predicates: [{ requiredClusterSelector: { labelSelector: {} } }] });
    expect(placementObjects('managed-serviceaccount')[1]!.spec).toMatchObject({
      tolerations: [
        { key: 'cluster.open-cluster-management.io/unreachable', operator: 'Equal' },
        { key: 'cluster.open-cluster-management.io/unavailable', operator: 'Equal' },
      ],
    });
    expect(placementObjects('cluster-proxy')[1]!.spec).toEqual({ clusterSets: ['global'] });
    // cluster-proxy and managed-serviceaccount apply one binding in one namespace: the same object, so a second up changes nothing.
    expect(placementObjects('cluster-proxy')[0]).toEqual(placementObjects('managed-serviceaccount')[0]);
    expect(binding!.metadata.labels).toEqual({ 'app.kubernetes.io/managed-by': 'ocm-lab' });
    expect(hello!.metadata.labels).toEqual({ 'open-cluster-management.io/addon-name': 'helloworld' });
  });
});

describe('addon enable/disable under each strategy', () => {
  it('an enable that installs helloworld for named clusters picks Manual, one for all clusters upstream’s Placements', () => {
    expect(strategyForNewInstall('helloworld', ['cluster1'])).toEqual({ type: 'Manual' });
    expect(strategyForNewInstall('helloworld', [])).toEqual(GLOBAL);
    expect(strategyForNewInstall('helloworld', undefined)).toEqual(GLOBAL);
  });

  it('a per-cluster change under Placements is refused naming the strategy, the Placement and how to change either', () => {
    const off = placementRefusal('helloworld', GLOBAL as InstallStrategy & { type: 'Placements' }, 'disable', ['cluster2']);
    expect(off.message).toBe(
      'helloworld cannot be disabled on cluster2 only: it is installed by Placement (installStrategy Placements: open-cluster-management/global); ' +
        'its manager re-creates a ManagedClusterAddOn on every cluster the Placement decides',
    );
    expect(off.hint).toContain('kubectl --context hub -n open-cluster-management edit placement global');
    expect(off.hint).toContain(`patch clustermanagementaddon helloworld --type=merge -p '{"spec":{"installStrategy":{"type":"Manual"}}}'`);
    expect(off.hint).toContain("'ocm-lab addon enable helloworld --cluster …', which installs it Manual");
    const on = placementRefusal('cluster-proxy', ADDON_INSTALL['cluster-proxy'] as InstallStrategy & { type: 'Placements' }, 'enable', [
      'cluster1',
      'cluster3',
    ]);
    expect(on.message).toBe(
      'cluster-proxy cannot be enabled on cluster1, cluster3: it is installed by Placement ' +
        '(installStrategy Placements: open-cluster-management-addon/cluster-proxy-placement), which does not decide them',
    );
    expect(on.hint).not.toContain('ocm-lab addon disable');
  });
});
