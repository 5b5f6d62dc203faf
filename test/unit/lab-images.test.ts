import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { OCM_UPSTREAM_IMAGES } from '../../src/nodelet/images.js';
import { labImages, nodeBaseImage, OCM_IMAGES, ocmLabContentHash, productionModules } from '../../src/runtime/kind/lab-images.js';

describe('labImages', () => {
  it("names ocm-lab:dev and OCM's five images at the lab's version", () => {
    expect(labImages({ ocmVersion: 'v1.2.1' })).toEqual([
      'ocm-lab:dev',
      'quay.io/open-cluster-management/registration-operator:v1.2.1',
      'quay.io/open-cluster-management/registration:v1.2.1',
      'quay.io/open-cluster-management/work:v1.2.1',
      'quay.io/open-cluster-management/placement:v1.2.1',
      'quay.io/open-cluster-management/addon-manager:v1.2.1',
    ]);
    expect(nodeBaseImage('v20.1.0')).toBe('ocm-lab/node-base:v20.1.0');
  });

  it("puts each binary where the nodelet's image map has it (one set of facts on both runtimes)", () => {
    expect(OCM_IMAGES.map((i) => ({ image: i.name, binary: i.binary, pathInImage: i.pathInImage }))).toEqual(OCM_UPSTREAM_IMAGES.map((u) => ({ ...u })));
  });
});

describe('productionModules', () => {
  it('keeps the top-level packages not marked dev, scoped ones too', () => {
    const lock = {
      packages: {
        '': {},
        'node_modules/yaml': {},
        'node_modules/@grpc/grpc-js': {},
        'node_modules/@grpc/grpc-js/node_modules/semver': {},
        'node_modules/vitest': { dev: true },
        'node_modules/@types/node': { dev: true },
        'node_modules/fsevents': { optional: true },
      },
    };
    expect(productionModules(lock)).toEqual(['@grpc/grpc-js', 'fsevents', 'yaml']);
  });
});

describe('ocmLabContentHash', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  it('changes when a file of dist/ changes, not when node_modules does', async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-content-'));
    for (const [f, text] of Object.entries({ 'dist/cli/main.js': 'a', 'manifests/crds/x.yaml': 'x', 'package.json': '{}', 'package-lock.json': '{}', Dockerfile: 'FROM x', 'node_modules/y/index.js': '1' })) {
      await fs.mkdir(path.dirname(path.join(dir, f)), { recursive: true });
      await fs.writeFile(path.join(dir, f), text);
    }
    const first = await ocmLabContentHash(dir);
    await fs.writeFile(path.join(dir, 'node_modules/y/index.js'), '2');
    expect(await ocmLabContentHash(dir)).toBe(first);
    await fs.writeFile(path.join(dir, 'dist/cli/main.js'), 'b');
    expect(await ocmLabContentHash(dir)).not.toBe(first);
  });
});
