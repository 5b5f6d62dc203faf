import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { OCM_LAB_IMAGE } from '../../src/images/catalogue.js';
import { OCM_UPSTREAM_IMAGES } from '../../src/nodelet/images.js';
import { UPSTREAM_ADDON_IMAGES } from '../../src/images/catalogue.js';
import { labImages, nodeBaseImage, OCM_IMAGES, ocmLabContentHash, upstreamAddonImages } from '../../src/images/lab-images.js';
import { productionModules } from '../../src/images/production-modules.js';

describe('labImages', () => {
  it("names ocm-lab:<version> and OCM's five images at the lab's version", () => {
    expect(labImages({ ocmVersion: 'v1.2.1' })).toEqual([
      OCM_LAB_IMAGE,
      'quay.io/open-cluster-management/registration-operator:v1.2.1',
      'quay.io/open-cluster-management/registration:v1.2.1',
      'quay.io/open-cluster-management/work:v1.2.1',
      'quay.io/open-cluster-management/placement:v1.2.1',
      'quay.io/open-cluster-management/addon-manager:v1.2.1',
    ]);
    expect(nodeBaseImage('v20.1.0')).toBe('ocm-lab/node-base:v20.1.0');
  });

  it("adds upstream's addon images only for the addons the lab runs from upstream's build", () => {
    const ocm = labImages({ ocmVersion: 'v1.2.1' });
    const addons = ['cluster-proxy', 'managed-serviceaccount', 'cluster-gateway'] as const;
    expect(labImages({ ocmVersion: 'v1.2.1', addons: [...addons] })).toEqual(ocm);
    expect(
      labImages({ ocmVersion: 'v1.2.1', addons: [...addons], addonImplementations: { 'cluster-proxy': 'upstream', 'managed-serviceaccount': 'upstream' } }),
    ).toEqual([...ocm, 'quay.io/open-cluster-management/cluster-proxy:v0.10.0', 'quay.io/open-cluster-management/managed-serviceaccount:v0.10.0']);
    expect(
      labImages({
        ocmVersion: 'v1.2.1',
        addons: ['managed-serviceaccount'],
        addonImplementations: { 'cluster-proxy': 'upstream', 'managed-serviceaccount': 'upstream' },
      }),
    ).toEqual([...ocm, 'quay.io/open-cluster-management/managed-serviceaccount:v0.10.0']);
  });

  it("lays upstream's addon images out as the nodelet maps them (one set of facts on both runtimes)", () => {
    const all = upstreamAddonImages({
      ocmVersion: 'v1.2.1',
      addons: ['cluster-proxy', 'managed-serviceaccount'],
      addonImplementations: { 'cluster-proxy': 'upstream', 'managed-serviceaccount': 'upstream' },
    });
    expect(all).toEqual(UPSTREAM_ADDON_IMAGES);
  });

  it("puts each binary where the nodelet's image map has it (one set of facts on both runtimes)", () => {
    expect(OCM_IMAGES.map((i) => ({ image: i.name, binary: i.binary, pathInImage: i.pathInImage }))).toEqual(OCM_UPSTREAM_IMAGES.map((u) => ({ ...u })));
  });
});

/** Writes a tree of files under a new temp dir; `pkg(name, version, deps)` makes a package.json. */
async function tree(files: Record<string, string>): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-modules-'));
  for (const [f, text] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(dir, f)), { recursive: true });
    await fs.writeFile(path.join(dir, f), text);
  }
  return dir;
}
const pkg = (version: string, dependencies: Record<string, string> = {}, optionalDependencies: Record<string, string> = {}) =>
  JSON.stringify({ version, dependencies, optionalDependencies });

describe('productionModules', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  it('in a checkout: the dependencies and theirs, not dev ones; nested copies go with their parent', async () => {
    dir = await tree({
      'package.json': JSON.stringify({
        dependencies: { yaml: '^2', '@grpc/grpc-js': '^1' },
        optionalDependencies: { fsevents: '*' },
        devDependencies: { vitest: '*' },
      }),
      'node_modules/yaml/package.json': pkg('2.9.1'),
      'node_modules/@grpc/grpc-js/package.json': pkg('1.14.7', { semver: '^7', '@js-sdsl/ordered-map': '*' }),
      'node_modules/@grpc/grpc-js/node_modules/semver/package.json': pkg('7.0.0'),
      'node_modules/semver/package.json': pkg('6.0.0'),
      'node_modules/@js-sdsl/ordered-map/package.json': pkg('4.4.2'),
      'node_modules/vitest/package.json': pkg('4.1.12'),
    });
    const found = await productionModules(dir);
    expect(found.map((m) => `${m.name}@${m.version}`)).toEqual(['@grpc/grpc-js@1.14.7', '@js-sdsl/ordered-map@4.4.2', 'yaml@2.9.1']);
    expect(found[0]!.dir).toBe(path.join(dir, 'node_modules/@grpc/grpc-js'));
  });

  it('installed by npm: finds the hoisted dependencies beside the package', async () => {
    dir = await tree({
      'app/package.json': pkg('0.0.0', { 'ocm-lab': '*' }),
      'app/node_modules/ocm-lab/package.json': pkg('0.1.0', { yaml: '^2', execa: '^9' }),
      'app/node_modules/yaml/package.json': pkg('2.9.1'),
      'app/node_modules/execa/package.json': pkg('9.6.1', { 'is-stream': '^4' }),
      'app/node_modules/is-stream/package.json': pkg('4.0.1'),
      'app/node_modules/unrelated/package.json': pkg('1.0.0'),
    });
    const found = await productionModules(path.join(dir, 'app/node_modules/ocm-lab'));
    expect(found.map((m) => m.name)).toEqual(['execa', 'is-stream', 'yaml']);
    expect(found.find((m) => m.name === 'execa')!.dir).toBe(path.join(dir, 'app/node_modules/execa'));
  });

  it('names a missing dependency and what to run', async () => {
    dir = await tree({ 'package.json': pkg('0.1.0', { yaml: '^2' }) });
    await expect(productionModules(dir)).rejects.toThrow(/yaml \(needed by ocm-lab\) is not installed: .*run npm ci/);
  });
});

describe('ocmLabContentHash', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  it('changes when a file of dist/ or a module version changes, not when a module file does', async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-content-'));
    for (const [f, text] of Object.entries({
      'dist/cli/main.js': 'a',
      'manifests/crds/x.yaml': 'x',
      'package.json': pkg('0.1.0', { y: '*' }),
      Dockerfile: 'FROM x',
      'node_modules/y/package.json': pkg('1.0.0'),
      'node_modules/y/index.js': '1',
    })) {
      await fs.mkdir(path.dirname(path.join(dir, f)), { recursive: true });
      await fs.writeFile(path.join(dir, f), text);
    }
    const first = await ocmLabContentHash(dir);
    await fs.writeFile(path.join(dir, 'node_modules/y/index.js'), '2');
    expect(await ocmLabContentHash(dir)).toBe(first);
    await fs.writeFile(path.join(dir, 'node_modules/y/package.json'), pkg('1.0.1'));
    const second = await ocmLabContentHash(dir);
    expect(second).not.toBe(first);
    await fs.writeFile(path.join(dir, 'dist/cli/main.js'), 'b');
    expect(await ocmLabContentHash(dir)).not.toBe(second);
  });
});
