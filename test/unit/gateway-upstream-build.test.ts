import { describe, expect, it } from 'vitest';
import { clusterGatewayUpstreamRecipe, recipeOf, recipesFor } from '../../src/provision/recipes.js';
import { versionReplaces, wrapperGoMod } from '../../src/provision/wrapper.js';
import { UPSTREAM_CLUSTER_GATEWAY_IMAGE } from '../../src/images/catalogue.js';
import { ImageCatalog, parseImageBinaries } from '../../src/nodelet/images.js';
import { imageBinaryNames, labBinaryNames } from '../../src/runtime/local/lab-binaries.js';
import { ALL_BINARIES } from '../../src/provision/index.js';
import { defaultLabConfig } from '../../src/config/index.js';

// The shape of upstream cluster-gateway's go.mod: a block of replaces, one by a fork, plus a local one that cannot be kept.
const upstreamGoMod = [
  'module github.com/oam-dev/cluster-gateway',
  '',
  'go 1.22.0',
  '',
  'require (',
  '\tk8s.io/apiserver v0.29.2',
  ')',
  '',
  'replace (',
  '\tcloud.google.com/go => cloud.google.com/go v0.100.2 // pinned',
  '\tsigs.k8s.io/apiserver-runtime => github.com/kmodules/apiserver-runtime v1.1.2-0.20240303184316-6365e03bf9ac',
  '\texample.com/local => ../local',
  ')',
  'replace example.com/one v1.0.0 => example.com/other v1.2.3',
].join('\n');

describe("upstream cluster-gateway's build", () => {
  it('keeps the version replaces of the upstream go.mod in the wrapper module, not local ones', () => {
    expect(versionReplaces(upstreamGoMod)).toEqual([
      'cloud.google.com/go => cloud.google.com/go v0.100.2',
      'sigs.k8s.io/apiserver-runtime => github.com/kmodules/apiserver-runtime v1.1.2-0.20240303184316-6365e03bf9ac',
      'example.com/one v1.0.0 => example.com/other v1.2.3',
    ]);
    const mod = wrapperGoMod(clusterGatewayUpstreamRecipe(), upstreamGoMod, '1.22.0');
    expect(mod).toContain('require github.com/oam-dev/cluster-gateway v1.9.1');
    expect(mod).toContain('\tsigs.k8s.io/apiserver-runtime => github.com/kmodules/apiserver-runtime v1.1.2-0.20240303184316-6365e03bf9ac\n');
    expect(mod).not.toContain('../local');
  });

  it('is a recipe of its own, verified by build information, never part of a lab by default', () => {
    const recipe = recipeOf('cluster-gateway-upstream', recipesFor({ kubernetes: 'v1.34.4' }));
    expect(recipe.module).toBe('github.com/oam-dev/cluster-gateway');
    expect(recipe.packages['cluster-gateway-upstream']).toBe('github.com/oam-dev/cluster-gateway/cmd/apiserver');
    expect(recipe.versionFromBuildInfo).toBe(true);
    expect(ALL_BINARIES).not.toContain('cluster-gateway-upstream');
    expect(labBinaryNames(defaultLabConfig())).not.toContain('cluster-gateway-upstream');
  });
});

describe("upstream cluster-gateway's image on the nodelet", () => {
  const cli = { nodeBinary: '/usr/bin/node', cliMain: '/pkg/dist/cli/main.js', packageRoot: '/pkg' };
  it("runs /apiserver as the image's entry point when given the binary, and is not offered otherwise", () => {
    const given = new ImageCatalog({ ocmVersion: 'v1.2.1', binaries: { 'cluster-gateway-upstream': '/cache/gw' }, cli });
    const image = given.resolve(UPSTREAM_CLUSTER_GATEWAY_IMAGE.ref);
    expect(image?.files).toEqual([{ source: '/cache/gw', destination: '/apiserver' }]);
    expect(image?.entrypoint).toEqual(['/apiserver']);
    expect(new ImageCatalog({ ocmVersion: 'v1.2.1', binaries: {}, cli }).runs(UPSTREAM_CLUSTER_GATEWAY_IMAGE.ref)).toBe(false);
    expect(parseImageBinaries(['cluster-gateway-upstream=/cache/gw'], [])).toEqual({ 'cluster-gateway-upstream': '/cache/gw' });
  });

  it('is provisioned and mapped only when an up asks for it (UpOptions.extraImageBinaries)', () => {
    const config = defaultLabConfig();
    expect(imageBinaryNames(config)).not.toContain('cluster-gateway-upstream');
    expect(imageBinaryNames(config, ['cluster-gateway-upstream'])).toContain('cluster-gateway-upstream');
    expect(labBinaryNames(config, ['cluster-gateway-upstream'])).toContain('cluster-gateway-upstream');
    expect(labBinaryNames(config, ['kubectl'])).toEqual(labBinaryNames(config));
  });
});
