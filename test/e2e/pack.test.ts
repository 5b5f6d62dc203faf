import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cleanNpmEnv,
  copyCheckout,
  installTarball,
  npmPack,
  runCommand,
  tarballEntries,
  undeclaredImports,
  type CommandResult,
} from '../support/npm-package.js';

/**
 * The npx one-command setup (issue 15, item 4): a clean checkout of the working
 * tree (no dist/) is packed with `npm pack` (prepack compiles), the tarball is
 * installed into a consumer project of its own, and the CLI runs from there.
 * The copy borrows this checkout's node_modules (what `npm ci` would install from
 * the same lockfile) so that only prepack's compile is paid for.
 */

const repoRoot = path.resolve(import.meta.dirname, '..', '..');
const LAB_FILE = 'examples/three-spokes.yaml';
const repoPackage = JSON.parse(await fs.readFile(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string };

describe('npm pack → npm install → npx ocm-lab', () => {
  let root: string;
  let app: string;
  let tarball: string;
  let entries: string[];
  let installedPackage: string;
  let tarballBytes: number | undefined;
  const timings: Record<string, number> = {};

  async function timed<T>(name: string, step: () => Promise<T>): Promise<T> {
    const start = Date.now();
    try {
      return await step();
    } finally {
      timings[name] = Date.now() - start;
    }
  }

  /** `npx ocm-lab ARGS` in the consumer project (`--no`: never fetched from the registry); exit code checked by the caller. */
  async function npx(args: string[]): Promise<CommandResult> {
    const env = cleanNpmEnv({ OCM_LAB_HOME: path.join(root, 'labs'), CI: 'true', OCM_LAB_RUNTIME: undefined, OCM_LAB_CONFIG: undefined });
    return timed(`npx ocm-lab ${args.join(' ')}`, () => runCommand('npx', ['--no', '--', 'ocm-lab', ...args], { cwd: app, env, timeoutMs: 120_000 }));
  }

  beforeAll(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-pack-'));
    const checkout = path.join(root, 'checkout');
    app = path.join(root, 'app');
    await timed('copy checkout', async () => {
      await copyCheckout(repoRoot, checkout);
      await fs.symlink(path.join(repoRoot, 'node_modules'), path.join(checkout, 'node_modules'));
    });
    await expect(fs.access(path.join(checkout, 'dist'))).rejects.toThrow();
    tarball = (await timed('npm pack (prepack: tsc)', () => npmPack(checkout, path.join(root, 'pack')))).tarball;
    entries = await tarballEntries(tarball);
    tarballBytes = (await fs.stat(tarball)).size;
    await timed('npm install <tarball>', () => installTarball(tarball, app));
    installedPackage = path.join(app, 'node_modules', 'ocm-lab');
  });

  afterAll(async () => {
    if (root) await fs.rm(root, { recursive: true, force: true });
    const lines = Object.entries(timings).map(([step, ms]) => `  ${(ms / 1000).toFixed(1).padStart(6)} s  ${step}`);
    const size = tarballBytes === undefined ? '' : `, ${(tarballBytes / 1024).toFixed(0)} KiB`;
    process.stderr.write(`pack test: tarball of ${entries?.length ?? '?'} files${size}\n${lines.join('\n')}\n`);
  });

  it('the tarball holds the compiled CLI and what it reads at run time, and no sources, tests or source maps', async () => {
    for (const f of [
      'package.json',
      'README.md',
      'Dockerfile',
      'dist/cli/main.js',
      'dist/images/lab-images.js',
      LAB_FILE,
      'examples/default-lab.yaml',
      'kind-configs/hub.yaml',
      'kind-configs/spoke.yaml',
    ]) {
      expect(entries, f).toContain(f);
    }
    for (const dir of ['manifests/crds/', 'scenarios/'])
      expect(
        entries.some((e) => e.startsWith(dir)),
        dir,
      ).toBe(true);
    // templates/ is `addon new`'s project: its TypeScript sources are what it writes.
    expect(entries.filter((e) => !e.startsWith('templates/') && /^(src|test|docs|scripts|node_modules)\/|\.map$|\.ts$|^tsconfig/.test(e))).toEqual([]);
    expect(entries).toContain('templates/addon/src/manager.ts');
    // Every scenario document in the repository is shipped (scenario list reads them from the package).
    const scenarios = (await fs.readdir(path.join(repoRoot, 'scenarios'))).filter((f) => f.endsWith('.md'));
    for (const s of scenarios) expect(entries).toContain(`scenarios/${s}`);
  });

  it('the compiled code imports only Node built-ins and the declared dependencies', async () => {
    const installed = JSON.parse(await fs.readFile(path.join(installedPackage, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
    expect(await undeclaredImports(path.join(installedPackage, 'dist'), Object.keys(installed.dependencies ?? {}))).toEqual([]);
    // Only `dependencies` were installed: no dev dependency is there for the CLI to lean on.
    await expect(fs.access(path.join(app, 'node_modules', 'typescript'))).rejects.toThrow();
    await expect(fs.access(path.join(app, 'node_modules', 'vitest'))).rejects.toThrow();
  });

  it('npx ocm-lab --version prints the package version', async () => {
    const r = await npx(['--version']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe(repoPackage.version);
  });

  it('npx ocm-lab validate accepts an example lab file from the package', async () => {
    const r = await npx(['validate', '--config', path.join(installedPackage, LAB_FILE)]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/4 clusters in 2 VPCs/);
  });

  it('npx ocm-lab scenario list lists the packaged documents', async () => {
    const r = await npx(['scenario', 'list']);
    expect(r.exitCode, r.stderr).toBe(0);
    const names = (await fs.readdir(path.join(installedPackage, 'scenarios')))
      .filter((f) => f.endsWith('.md') && f.toLowerCase() !== 'readme.md')
      .map((f) => f.slice(0, -3));
    expect(names.length).toBeGreaterThan(0);
    const listed = r.stdout
      .split('\n')
      .slice(1)
      .map((l) => l.split(/\s+/)[0]);
    expect(listed.filter(Boolean).sort()).toEqual(names.sort());
  });

  for (const runtime of ['local', 'kind']) {
    it(`npx ocm-lab up --dry-run --runtime ${runtime} prints the plan of the lab file's clusters and creates nothing`, async () => {
      const r = await npx(['up', '--dry-run', '--runtime', runtime, '--config', path.join(installedPackage, LAB_FILE)]);
      expect(r.exitCode, r.stderr).toBe(0);
      for (const name of ['three-spokes', 'hub', 'cluster1', 'cluster2', 'cluster3', 'vpc-1', 'vpc-2']) expect(r.stdout, name).toContain(name);
      await expect(fs.access(path.join(root, 'labs', 'three-spokes'))).rejects.toThrow();
    });
  }
});
