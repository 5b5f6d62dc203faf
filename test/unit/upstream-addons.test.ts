import { describe, expect, it } from 'vitest';
import { moduleVersionInBuildInfo } from '../../src/provision/buildinfo.js';
import {
  ALL_BINARIES,
  apiserverNetworkProxyRecipe,
  clusterProxyRecipe,
  managedServiceAccountRecipe,
  recipeOf,
  recipesFor,
  UPSTREAM_ADDON_BINARIES,
} from '../../src/provision/recipes.js';
import { UPSTREAM_ADDON_IMAGES, upstreamAddonImage } from '../../src/images/catalogue.js';
import { ImageCatalog, parseImageBinaries } from '../../src/nodelet/images.js';
import { runsUpstream, clusterProxyHubObjects, crdsInYaml, managedServiceAccountHubObjects, upstreamLeftovers } from '../../src/addons/upstream/index.js';
import type { LabConfig } from '../../src/config/index.js';
import type { KubeObject } from '../../src/kube/objects.js';

/** What Go embeds: a sentinel-wrapped text block of `path`, `mod` and `dep` lines. */
function fakeBinary(lines: string[]): Buffer {
  return Buffer.concat([
    Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2]),
    Buffer.from(`\x30\x77\xaf\x0c\x92\x74\x08\x02path\tx/cmd\n${lines.join('\n')}\n\xf9\x32\x43\x31`, 'latin1'),
  ]);
}

describe('Go build information', () => {
  it('finds a dependency and the main module at their versions', () => {
    const bin = fakeBinary([
      'mod\tocm-lab.local/build/x\t(devel)\t',
      'dep\topen-cluster-management.io/cluster-proxy\tv0.10.0\th1:abc=',
      'dep\tk8s.io/api\tv0.34.2\th1:def=',
    ]);
    expect(moduleVersionInBuildInfo(bin, 'open-cluster-management.io/cluster-proxy')).toBe('v0.10.0');
    expect(moduleVersionInBuildInfo(bin, 'ocm-lab.local/build/x')).toBe('(devel)');
    expect(moduleVersionInBuildInfo(bin, 'open-cluster-management.io/cluster')).toBeNull();
  });

  it('does not take a replaced module for the one asked about', () => {
    const bin = fakeBinary(['dep\tsigs.k8s.io/apiserver-network-proxy\tv0.33.0\t', '=>\t./local\t(devel)\t']);
    expect(moduleVersionInBuildInfo(bin, 'sigs.k8s.io/apiserver-network-proxy')).toBeNull();
  });
});

describe('upstream addon recipes', () => {
  it('build the pinned modules and are never part of a plain setup', () => {
    const names = Object.values(UPSTREAM_ADDON_BINARIES).flat();
    for (const name of names) expect(ALL_BINARIES).not.toContain(name);
    const recipes = recipesFor({ kubernetes: 'v1.34.4' });
    expect(recipeOf('cluster-proxy-manager', recipes).module).toBe('open-cluster-management.io/cluster-proxy');
    expect(recipeOf('proxy-server', recipes).version).toBe('v0.33.0');
    expect(recipeOf('managed-serviceaccount', recipes).packages['managed-serviceaccount']).toBe('open-cluster-management.io/managed-serviceaccount/cmd');
    for (const r of [clusterProxyRecipe(), apiserverNetworkProxyRecipe(), managedServiceAccountRecipe()]) {
      expect(r.versionFromBuildInfo).toBe(true);
      expect(r.noSumDb.length).toBeGreaterThan(0);
    }
    expect(clusterProxyRecipe().ldflags.join(' ')).toContain('pkg/config.AgentImageName=quay.io/open-cluster-management/cluster-proxy:v0.10.0');
  });
});

describe('upstream addon images on the nodelet', () => {
  const cli = { nodeBinary: '/usr/bin/node', cliMain: '/pkg/dist/cli/main.js', packageRoot: '/pkg' };
  const all = Object.fromEntries(
    Object.values(UPSTREAM_ADDON_BINARIES)
      .flat()
      .map((b) => [b, `/cache/${b}`]),
  );

  it('maps each image to its binaries at the paths the real image has them', () => {
    const catalog = new ImageCatalog({ ocmVersion: 'v1.2.1', binaries: all, cli });
    const proxy = catalog.resolve('quay.io/open-cluster-management/cluster-proxy:v0.10.0');
    expect(proxy?.files).toEqual([
      { source: '/cache/cluster-proxy-manager', destination: '/manager' },
      { source: '/cache/cluster-proxy-agent', destination: '/agent' },
      { source: '/cache/proxy-server', destination: '/proxy-server' },
      { source: '/cache/proxy-agent', destination: '/proxy-agent' },
    ]);
    expect(proxy?.user).toEqual({ uid: 65532, gid: 65532 });
    expect(catalog.resolve('quay.io/open-cluster-management/managed-serviceaccount:v0.10.0')?.files).toEqual([
      { source: '/cache/managed-serviceaccount', destination: '/msa' },
    ]);
  });

  it('offers no image whose binaries it was not given, and says why', () => {
    const catalog = new ImageCatalog({ ocmVersion: 'v1.2.1', binaries: { 'proxy-server': '/cache/proxy-server' }, cli });
    expect(catalog.runs('quay.io/open-cluster-management/cluster-proxy:v0.10.0')).toBe(false);
    expect(catalog.whyNot('quay.io/open-cluster-management/cluster-proxy:v0.10.0')).toContain('cluster-proxy-manager, cluster-proxy-agent, proxy-agent');
    const full = new ImageCatalog({ ocmVersion: 'v1.2.1', binaries: all, cli });
    expect(full.whyNot('quay.io/open-cluster-management/cluster-proxy:v0.9.0')).toContain('cluster-proxy:v0.10.0 only');
  });

  it('accepts the upstream binaries on --image-binary', () => {
    expect(parseImageBinaries(['proxy-agent=/c/proxy-agent', 'work=/c/work'], ['work'])).toEqual({ 'proxy-agent': '/c/proxy-agent', work: '/c/work' });
    expect(() => parseImageBinaries(['nonsense=/x'], ['work'])).toThrow(/managed-serviceaccount/);
  });
});

const find = (objs: KubeObject[], kind: string, name?: string) =>
  objs.find((o) => o.kind === kind && (name === undefined || o.metadata.name === name)) as (KubeObject & Record<string, any>) | undefined;

describe("upstream charts' hub objects", () => {
  it('cluster-proxy: manager, PortForward configuration, Placement install strategy', () => {
    const objs = clusterProxyHubObjects();
    const manager = find(objs, 'Deployment', 'cluster-proxy-addon-manager');
    const container = manager?.spec.template.spec.containers[0];
    expect(manager?.metadata.namespace).toBe('open-cluster-management-addon');
    expect(container.image).toBe(upstreamAddonImage('cluster-proxy'));
    expect(container.command).toEqual(['/manager']);
    expect(container.args).toContain('--signer-secret-namespace=open-cluster-management-addon');
    expect(container.args).toContain('--enable-service-proxy=false');
    const mpc = find(objs, 'ManagedProxyConfiguration', 'cluster-proxy');
    expect(mpc?.spec.proxyServer).toMatchObject({ namespace: 'open-cluster-management-cluster-proxy', entrypoint: { type: 'PortForward', port: 8091 } });
    expect(mpc?.spec.proxyAgent.image).toBe(upstreamAddonImage('cluster-proxy'));
    const cma = find(objs, 'ClusterManagementAddOn');
    expect(cma?.metadata.annotations).toEqual({ 'addon.open-cluster-management.io/lifecycle': 'addon-manager' });
    expect(cma?.spec.installStrategy.placements).toEqual([{ name: 'cluster-proxy-placement', namespace: 'open-cluster-management-addon' }]);
    expect(find(objs, 'Placement', 'cluster-proxy-placement')?.spec.clusterSets).toEqual(['global']);
    expect(find(objs, 'Role')).toBeDefined();
    expect(find(objs, 'ClusterRoleBinding')?.subjects).toEqual([{ kind: 'ServiceAccount', name: 'cluster-proxy', namespace: 'open-cluster-management-addon' }]);
  });

  it("managed-serviceaccount: `/msa manager` in Deployment mode, one ManagedClusterAddOn per spoke in the chart's installNamespace", () => {
    const objs = managedServiceAccountHubObjects(['cluster1', 'cluster2']);
    const container = find(objs, 'Deployment', 'managed-serviceaccount-addon-manager')?.spec.template.spec.containers[0];
    expect(container.command).toEqual(['/msa', 'manager']);
    expect(container.args).toContain('--deploy-mode=Deployment');
    expect(container.args).toContain(`--agent-image-name=${upstreamAddonImage('managed-serviceaccount')}`);
    expect(find(objs, 'ClusterManagementAddOn')?.spec.installStrategy).toEqual({ type: 'Manual' });
    const addons = objs.filter((o) => o.kind === 'ManagedClusterAddOn');
    expect(addons.map((o) => [o.metadata.namespace, o.metadata.name, (o as { spec?: { installNamespace?: string } }).spec?.installNamespace])).toEqual([
      ['cluster1', 'managed-serviceaccount', 'open-cluster-management-managed-serviceaccount'],
      ['cluster2', 'managed-serviceaccount', 'open-cluster-management-managed-serviceaccount'],
    ]);
  });

  it('every image the objects name is one the nodelet maps', () => {
    const refs = new Set(UPSTREAM_ADDON_IMAGES.map((i) => i.ref));
    for (const obj of [...clusterProxyHubObjects(), ...managedServiceAccountHubObjects()].filter((o) => o.kind === 'Deployment')) {
      for (const c of (obj as any).spec.template.spec.containers) expect(refs.has(c.image)).toBe(true);
    }
  });

  it('uninstall leftovers are cluster-scoped and listed once', () => {
    const left = upstreamLeftovers();
    expect(left.every((o) => !o.metadata.namespace)).toBe(true);
    expect(new Set(left.map((o) => `${o.kind}/${o.metadata.name}`)).size).toBe(left.length);
    expect(left.map((o) => o.metadata.name)).toContain('managedproxyserviceresolvers.proxy.open-cluster-management.io');
  });
});

describe('CRDs from a chart', () => {
  it('keeps only CustomResourceDefinitions of a multi-document stream', () => {
    const crds = crdsInYaml(
      '---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: a.b}\n---\n# empty\n---\nkind: ConfigMap\nmetadata: {name: c}\n',
      'x.yaml',
    );
    expect(crds.map((c) => c.metadata.name)).toEqual(['a.b']);
  });
});

describe('addon implementation of a lab', () => {
  it('is ocm-lab unless the lab says upstream, and cluster-gateway is always ours', () => {
    expect(runsUpstream({ addonImplementations: {} } as LabConfig, 'cluster-proxy')).toBe(false);
    expect(runsUpstream({} as LabConfig, 'cluster-proxy')).toBe(false);
    const up = { addonImplementations: { 'cluster-proxy': 'upstream', 'cluster-gateway': 'upstream' } } as unknown as LabConfig;
    expect(runsUpstream(up, 'cluster-proxy')).toBe(true);
    expect(runsUpstream(up, 'managed-serviceaccount')).toBe(false);
    expect(runsUpstream(up, 'cluster-gateway')).toBe(false);
  });
});
