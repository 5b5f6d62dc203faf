import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DigestMismatchError, ExitCode } from '../../src/errors.js';
import { operatorManifests } from '../../src/ocm/operators.js';
import { ensureBinaries } from '../../src/provision/index.js';
import { onPath } from '../../src/provision/resolve.js';
import { OCM_VERSION } from '../../src/provision/versions.js';
import { cachedModuleZip, GOMODCACHE, startModuleProxy } from '../support/module-proxy.js';
import { useTempDir } from '../support/temp-dir.js';

const OCM = 'open-cluster-management.io/ocm';
const zipPath = `/${OCM}/@v/${OCM_VERSION}.zip`;

// Issue 25, item 3: with no Go on PATH, OCM's operator manifests come from its module zip off the module proxy
// (here the real zip go mod download left in this machine's module cache, served on 127.0.0.1 as $GOPROXY).
describe('operator manifests without Go', () => {
  const tmp = useTempDir('ocm-lab-nogo-', { each: true });
  const real = cachedModuleZip(OCM, OCM_VERSION);
  const served = new Map<string, Buffer>();
  const saved = { PATH: process.env.PATH, GOPROXY: process.env.GOPROXY, OCM_LAB_CACHE_DIR: process.env.OCM_LAB_CACHE_DIR };
  let proxy: Awaited<ReturnType<typeof startModuleProxy>>;
  let kubectl: string;

  beforeAll(async () => {
    if (!real) throw new Error(`this test needs the real ${OCM}@${OCM_VERSION} zip in ${GOMODCACHE}: go mod download ${OCM}@${OCM_VERSION}`);
    kubectl = (await ensureBinaries(['kubectl'])).kubectl as string;
    proxy = await startModuleProxy(served);
    // PATH without every directory that holds a go (kubectl is called by its absolute path).
    const dirs = (process.env.PATH ?? '').split(path.delimiter).filter(Boolean);
    const withoutGo = await Promise.all(
      dirs.map((d) =>
        fs.access(path.join(d, 'go')).then(
          () => null,
          () => d,
        ),
      ),
    );
    process.env.PATH = withoutGo.filter((d) => d !== null).join(path.delimiter);
    process.env.GOPROXY = `${proxy.base},direct`;
  });
  afterAll(async () => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    await proxy?.close();
  });

  it('renders both operators from the module proxy, with go absent from PATH', async () => {
    process.env.OCM_LAB_CACHE_DIR = tmp.path;
    expect(await onPath('go')).toBeNull();
    served.set(zipPath, real!.zip);
    const progress: string[] = [];
    const render = { ocmVersion: OCM_VERSION, kubectl, onProgress: (l: string) => progress.push(l) };
    const [clusterManager, klusterlet] = await Promise.all([operatorManifests('cluster-manager', render), operatorManifests('klusterlet', render)]);
    expect(clusterManager.map((o) => o.kind)).toEqual(expect.arrayContaining(['CustomResourceDefinition', 'Deployment', 'ServiceAccount', 'ClusterRole']));
    expect(clusterManager.find((o) => o.kind === 'CustomResourceDefinition')?.metadata.name).toBe('clustermanagers.operator.open-cluster-management.io');
    expect(klusterlet.find((o) => o.kind === 'CustomResourceDefinition')?.metadata.name).toBe('klusterlets.operator.open-cluster-management.io');
    expect(JSON.stringify(klusterlet.find((o) => o.kind === 'Deployment'))).toContain(`registration-operator:${OCM_VERSION}`);
    expect(proxy.requests.filter((r) => r === zipPath)).toHaveLength(1);
    expect(progress).toContain(`downloading ${proxy.base}${zipPath}`);
    await expect(fs.readdir(path.join(tmp.path, 'go-modules', 'open-cluster-management.io'))).resolves.toEqual([`ocm@${OCM_VERSION}`]);
  });

  it('stops with exit 7 on a corrupted module zip and caches nothing', async () => {
    process.env.OCM_LAB_CACHE_DIR = tmp.path;
    const corrupted = Buffer.from(real!.zip);
    const at = Math.floor(corrupted.length / 2);
    corrupted[at] = corrupted[at]! ^ 0x55;
    served.set(zipPath, corrupted);
    const err = await operatorManifests('klusterlet', { ocmVersion: OCM_VERSION, kubectl }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DigestMismatchError);
    expect((err as DigestMismatchError).exitCode).toBe(ExitCode.integrity);
    expect((err as Error).message).toContain(`${OCM}@${OCM_VERSION} (${proxy.base}${zipPath}): digest mismatch: expected ${real!.ziphash}, got`);
    expect(await fs.readdir(tmp.path)).toEqual(['go-modules']);
    expect(await fs.readdir(path.join(tmp.path, 'go-modules', 'open-cluster-management.io'))).toEqual([]);
  });
});
