import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MissingPrerequisiteError } from '../../src/errors.js';
import { ensureBinaries, goBinaryName, recipesFor, stagingModules, wrapperGoMod, type Recipe } from '../../src/provision/index.js';

const upstreamGoMod = `module k8s.io/kubernetes

go 1.24.0

require (
	github.com/foo/bar v1.2.3
	k8s.io/api v0.0.0
	k8s.io/apimachinery v0.0.0
	k8s.io/kube-aggregator v0.0.0 // indirect
)

require k8s.io/client-go v0.0.0
`;

/** A fake "binary": a shell script that prints a version. */
async function fakeBinary(dir: string, name: string, printed: string): Promise<string> {
  await fs.mkdir(dir, { recursive: true });
  const file = path.join(dir, name);
  await fs.writeFile(file, `#!/bin/sh\necho "${printed}"\n`, { mode: 0o755 });
  return file;
}

/** Stands in for the Go build: writes scripts that print the recipe's version, counts its calls. */
function fakeBuilder(calls: string[], delayMs = 0) {
  return async (recipe: Recipe, names: string[], _work: string, outDir: string) => {
    calls.push(recipe.id);
    await new Promise((r) => setTimeout(r, delayMs));
    for (const n of names) await fakeBinary(outDir, n, n === 'etcd' ? `etcd Version: ${recipe.version.slice(1)}` : `${n} ${recipe.versionText}`);
  };
}

describe('provisioning', () => {
  let tmp: string;
  let savedPath: string | undefined;
  beforeEach(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-prov-'));
    savedPath = process.env.PATH;
    process.env.PATH = path.join(tmp, 'path');
  });
  afterEach(async () => {
    process.env.PATH = savedPath;
    await fs.rm(tmp, { recursive: true, force: true });
  });

  it('writes a wrapper module that replaces every v0.0.0 staging module with the published version', () => {
    expect(stagingModules(upstreamGoMod)).toEqual(['k8s.io/api', 'k8s.io/apimachinery', 'k8s.io/client-go', 'k8s.io/kube-aggregator']);
    const k8s = recipesFor()[0]!;
    const mod = wrapperGoMod(k8s, upstreamGoMod, '1.24.0');
    expect(mod).toContain('require k8s.io/kubernetes v1.34.4');
    expect(mod).toContain('\tk8s.io/api => k8s.io/api v0.34.4');
    expect(mod).toContain('\tk8s.io/kube-aggregator => k8s.io/kube-aggregator v0.34.4');
    expect(mod).not.toContain('github.com/foo/bar');
    expect(k8s.ldflags.join(' ')).toContain('-X k8s.io/component-base/version.gitVersion=v1.34.4');
  });

  it('names built binaries like go build does', () => {
    expect(goBinaryName('k8s.io/kubernetes/cmd/kube-apiserver')).toBe('kube-apiserver');
    expect(goBinaryName('go.etcd.io/etcd/server/v3')).toBe('server');
  });

  it('prefers the right version on PATH, skips a wrong one, then builds once into the cache', async () => {
    await fakeBinary(path.join(tmp, 'path'), 'kubectl', 'Client Version: v1.99.0');
    const calls: string[] = [];
    const opts = { cacheDir: path.join(tmp, 'cache'), allowDownload: false, builder: fakeBuilder(calls) };
    const first = await ensureBinaries(['kubectl', 'etcd'], opts);
    expect(calls.sort()).toEqual(['etcd-v3.6.4', 'kubernetes-v1.34.4']);
    expect(first.kubectl).toBe(path.join(tmp, 'cache', 'bin', 'kubernetes-v1.34.4', 'kubectl'));
    // warm: no build at all
    await ensureBinaries(['kubectl', 'etcd', 'kube-apiserver'], opts);
    expect(calls).toHaveLength(2);
    // the right version on PATH wins over the cache
    const onPath = await fakeBinary(path.join(tmp, 'path'), 'kubectl', 'Client Version: v1.34.4');
    expect((await ensureBinaries(['kubectl'], opts)).kubectl).toBe(onPath);
  });

  it('rebuilds a cached binary that changed since it was recorded', async () => {
    const calls: string[] = [];
    const opts = { cacheDir: path.join(tmp, 'cache'), allowDownload: false, builder: fakeBuilder(calls) };
    const { etcd } = await ensureBinaries(['etcd'], opts);
    await fs.appendFile(etcd as string, '# tampered\n');
    await ensureBinaries(['etcd'], opts);
    expect(calls).toEqual(['etcd-v3.6.4', 'etcd-v3.6.4']);
  });

  it('builds once when two runs provision at the same time', async () => {
    const calls: string[] = [];
    const waits: string[] = [];
    const opts = (tag: string) => ({
      cacheDir: path.join(tmp, 'cache'),
      allowDownload: false,
      builder: fakeBuilder(calls, 1500),
      onProgress: (l: string) => l.startsWith('waiting') && waits.push(tag),
    });
    await Promise.all([ensureBinaries(['etcd'], opts('a')), ensureBinaries(['etcd'], opts('b'))]);
    expect(calls).toEqual(['etcd-v3.6.4']);
    expect(waits).toHaveLength(1);
  });

  it('refuses an explicit --bin-dir holding the wrong version, naming the file', async () => {
    await fakeBinary(path.join(tmp, 'bins'), 'kube-apiserver', 'Kubernetes v1.30.0');
    const err = await ensureBinaries(['kube-apiserver'], { binDir: path.join(tmp, 'bins'), cacheDir: path.join(tmp, 'cache') }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MissingPrerequisiteError);
    expect((err as Error).message).toContain(path.join(tmp, 'bins', 'kube-apiserver'));
    expect((err as Error).message).toContain('v1.30.0');
  });

  it('says how to provide binaries when there is no Go toolchain', async () => {
    const err = await ensureBinaries(['etcd'], { cacheDir: path.join(tmp, 'cache'), allowDownload: false }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MissingPrerequisiteError);
    expect((err as Error).message).toContain('no Go toolchain found');
    expect((err as MissingPrerequisiteError).hint).toContain('--bin-dir');
  });
});
