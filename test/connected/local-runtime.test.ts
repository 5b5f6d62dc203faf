import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/errors.js';
import { cacheDir } from '../../src/paths.js';
import { KUBERNETES_BINARIES, OCM_BINARIES } from '../../src/provision/recipes.js';
import { KUBERNETES_VERSION, OCM_VERSION, requireKubernetesRelease } from '../../src/provision/versions.js';
import { startConnectedWorld, type ConnectedWorld } from '../support/connected-world/index.js';
import { sha256File } from '../support/connected-world/files.js';

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/cli/main.js');
const DEFAULT_LAB = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../examples/default-lab.yaml');
/** Unique on the machine: the local runtime's network namespaces and processes carry it. */
const LAB_NAME = 'connected-local';

/** Every file below `dir`, relative to it (dot files too: a half-written download would show here). */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
}

/** The integrity exit code of src/errors.ts (the shared design adds it for a digest or checksum that does not match). */
function integrityExitCode(): number {
  const code = (ExitCode as Record<string, number>).integrity;
  expect(code, 'src/errors.ts has an `integrity` exit code').toBeTypeOf('number');
  return code as number;
}

// Issue 25, "Done means": the local runtime on the connected path, in the simulated connected world, as root, with no Go on PATH.
describe('the local runtime in a simulated connected world', () => {
  let world: ConnectedWorld;
  let scratch: string;

  beforeAll(async () => {
    scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-connected-local-'));
    world = await startConnectedWorld();
  });
  afterAll(async () => {
    await world?.close();
    if (scratch) await fs.rm(scratch, { recursive: true, force: true });
  });

  /** `ocm-lab <args>` inside the namespace with its own empty cache (and lab home), no Go on PATH. */
  async function cli(args: string[], dirs: { cache: string; home: string }, timeout = 900_000) {
    const env = await world.env({ OCM_LAB_CACHE_DIR: dirs.cache, OCM_LAB_HOME: dirs.home, OCM_LAB_RUNTIME: 'local' });
    return world.run(process.execPath, [CLI, ...args], { env, timeout });
  }
  async function freshDirs(name: string) {
    const dirs = { cache: path.join(scratch, name, 'cache'), home: path.join(scratch, name, 'home') };
    await fs.mkdir(dirs.cache, { recursive: true });
    await fs.mkdir(dirs.home, { recursive: true });
    return dirs;
  }

  it("with no Go, setup --no-ocm takes Kubernetes and etcd from dl.k8s.io and GitHub's release (their checksums checked): the very bytes served", async () => {
    const dirs = await freshDirs('downloads');
    const r = await cli(['setup', '--runtime', 'local', '--no-ocm'], dirs);
    expect(r.exitCode, r.all).toBe(0);
    for (const name of KUBERNETES_BINARIES) {
      const recipe = name === 'etcd' ? `etcd-${requireKubernetesRelease().etcd}` : `kubernetes-${KUBERNETES_VERSION}`;
      expect(await sha256File(path.join(dirs.cache, 'bin', recipe, name)), name).toBe(await sha256File(path.join(cacheDir(), 'bin', recipe, name)));
    }
  });

  it('with nothing answering, setup says it builds here and tries to (no Go: a clear error, nothing cached)', async () => {
    const dirs = await freshDirs('stopped');
    await world.stop();
    try {
      const r = await cli(['setup', '--runtime', 'local'], dirs);
      expect(r.all).toMatch(/artifacts: built here \([^)\n]*did not answer/);
      expect(r.all).toMatch(/no Go toolchain found/);
      expect(r.exitCode, r.all).toBe(ExitCode.missingPrerequisite);
      expect(await filesUnder(path.join(dirs.cache, 'bin'))).toEqual([]);
    } finally {
      await world.start();
    }
  });

  it("a corrupted layer of OCM's registration image stops setup with the integrity exit code, naming the image and both digests; nothing of it is cached", async () => {
    const dirs = await freshDirs('corrupt-layer');
    const { reference, digest } = await world.corruptImageLayer('registration');
    try {
      const r = await cli(['setup', '--runtime', 'local'], dirs);
      expect(r.exitCode, r.all).toBe(integrityExitCode());
      expect(r.all).toContain(reference);
      expect(r.all).toContain(digest);
      const actual = [...r.all.matchAll(/sha256:[0-9a-f]{64}/g)].map((m) => m[0]).filter((d) => d !== digest);
      expect(actual.length, `another digest (the actual one) in: ${r.all}`).toBeGreaterThan(0);
      // Others of OCM's binaries may be cached (their layers were sound); registration is not, and nothing half-written is left.
      const others = OCM_BINARIES.filter((n) => n !== 'registration');
      const allowed = new Set(['manifest.json', ...others, ...others.map((n) => `.${n}.verified`)]);
      expect((await filesUnder(path.join(dirs.cache, 'bin', `ocm-${OCM_VERSION}`))).filter((f) => !allowed.has(f))).toEqual([]);
    } finally {
      await world.repair();
    }
  });

  it('a corrupted kube-apiserver from dl.k8s.io stops setup with the integrity exit code, naming it and both checksums; it is not cached', async () => {
    const dirs = await freshDirs('corrupt-file');
    world.corruptFile('kube-apiserver');
    try {
      const r = await cli(['setup', '--runtime', 'local'], dirs);
      expect(r.exitCode, r.all).toBe(integrityExitCode());
      expect(r.all).toMatch(/kube-apiserver/);
      const sums = new Set([...r.all.matchAll(/[0-9a-f]{64}/g)].map((m) => m[0]));
      expect(sums.size, `the expected and the actual sha256 in: ${r.all}`).toBeGreaterThanOrEqual(2);
      expect((await filesUnder(path.join(dirs.cache, 'bin'))).filter((f) => f.includes('kube-apiserver'))).toEqual([]);
    } finally {
      await world.repair();
    }
  });

  it('from an empty cache with no Go, setup takes Kubernetes and etcd from the downloads and OCM from its images; the default lab comes up, passes conformance and goes down', async () => {
    const dirs = await freshDirs('lab');
    const labFile = path.join(dirs.home, 'lab.yaml');
    await fs.writeFile(labFile, (await fs.readFile(DEFAULT_LAB, 'utf8')).replace(/^name: default$/m, `name: ${LAB_NAME}`));

    let started = Date.now();
    const setup = await cli(['setup', '--runtime', 'local', '--config', labFile], dirs);
    const setupSeconds = (Date.now() - started) / 1000;
    expect(setup.exitCode, setup.all).toBe(0);
    // The one-line choice (shared design); soft, so a missing line still lets the lab run and report.
    expect.soft(setup.all).toMatch(/artifacts: official/);
    // The OCM binaries are the very bytes the images hold: the ones built here that the fixture put in them.
    for (const name of OCM_BINARIES) {
      const got = path.join(dirs.cache, 'bin', `ocm-${OCM_VERSION}`, name);
      expect(await sha256File(got)).toBe(await sha256File(path.join(cacheDir(), 'bin', `ocm-${OCM_VERSION}`, name)));
    }

    started = Date.now();
    const up = await cli(['up', '--runtime', 'local', '--config', labFile], dirs);
    const upSeconds = (Date.now() - started) / 1000;
    try {
      expect(up.exitCode, up.all).toBe(0);
      const conformance = await cli(['conformance', '--config', labFile], dirs, 1_500_000);
      expect(conformance.exitCode, conformance.all).toBe(0);
      console.log(`connected local runtime: cold setup ${setupSeconds.toFixed(1)} s, up ${upSeconds.toFixed(1)} s`);
    } finally {
      const down = await cli(['down', '--config', labFile], dirs);
      expect(down.exitCode, down.all).toBe(0);
    }
  });
});
