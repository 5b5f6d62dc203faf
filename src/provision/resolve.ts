import { constants as fsConstants } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { MissingPrerequisiteError } from '../errors.js';
import { cacheDir as defaultCacheDir } from '../paths.js';
import { cachedBinary, recipeDir, recordBinaries, sha256File, withCacheLock } from './cache.js';
import { buildRecipe, downloadModule, type Progress } from './gobuild.js';
import { recipeOf, recipesFor, type BinaryName, type Recipe } from './recipes.js';

export interface ProvisionOptions {
  binDir?: string;
  cacheDir?: string;
  /** Try official release downloads before building (default: unless $OCM_LAB_NO_DOWNLOAD=1). */
  allowDownload?: boolean;
  onProgress?: Progress;
  kubernetesVersion?: string;
  ocmVersion?: string;
  /** For tests: replaces the Go build. */
  builder?: typeof buildRecipe;
}

export type BinarySource = 'bin-dir' | 'path' | 'cache';

async function executable(file: string): Promise<boolean> {
  return fs.access(file, fsConstants.X_OK).then(
    () => true,
    () => false,
  );
}

/** Runs `<file> --version` (or the recipe's equivalent) and checks it names the pinned version. */
export async function reportsVersion(file: string, recipe: Recipe, name: BinaryName): Promise<{ ok: boolean; printed: string }> {
  const r = await execa(file, recipe.versionArgs(name), { reject: false, timeout: 15_000, all: true });
  const printed = String(r.all ?? '').trim().split('\n')[0] ?? '';
  return { ok: r.exitCode === 0 && String(r.all).includes(recipe.versionText), printed };
}

async function onPath(name: string): Promise<string | null> {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(dir, name);
    if (await executable(candidate)) return fs.realpath(candidate);
  }
  return null;
}

async function fromExplicitDir(dir: string, name: BinaryName, recipe: Recipe): Promise<string | null> {
  const file = path.join(path.resolve(dir), name);
  if (!(await executable(file))) return null;
  const v = await reportsVersion(file, recipe, name);
  if (!v.ok) {
    throw new MissingPrerequisiteError(`${file} is not ${name} ${recipe.versionText} (it says: ${v.printed || 'nothing'})`, {
      hint: `put ${name} ${recipe.version} in that directory, or drop --bin-dir to let ocm-lab provision it`,
    });
  }
  return file;
}

async function fromPath(name: BinaryName, recipe: Recipe): Promise<string | null> {
  const file = await onPath(name);
  if (!file) return null;
  return (await reportsVersion(file, recipe, name)).ok ? file : null;
}

async function download(recipe: Recipe, name: BinaryName, outDir: string, progress: Progress): Promise<boolean> {
  if (!recipe.downloadUrl) return false;
  const url = recipe.downloadUrl(name);
  try {
    progress(`downloading ${url}`);
    const res = await fetch(url, { signal: AbortSignal.timeout(5_000), redirect: 'follow' });
    if (!res.ok) return false;
    const sumRes = await fetch(`${url}.sha256`, { signal: AbortSignal.timeout(5_000) });
    const expected = sumRes.ok ? (await sumRes.text()).trim().split(/\s+/)[0] : null;
    const body = Buffer.from(await res.arrayBuffer());
    await fs.mkdir(outDir, { recursive: true });
    const tmp = path.join(outDir, `${name}.download`);
    await fs.writeFile(tmp, body, { mode: 0o755 });
    if (!expected || (await sha256File(tmp)) !== expected) {
      await fs.rm(tmp, { force: true });
      return false;
    }
    await fs.rename(tmp, path.join(outDir, name));
    return true;
  } catch {
    progress(`download of ${name} not possible here; building from the Go module proxy`);
    return false;
  }
}

/**
 * Absolute paths of the requested binaries, tried in order: --bin-dir, else
 * PATH (right version only) → cache → official download → Go build. A warm cache
 * costs no Go invocation.
 */
export async function ensureBinaries(names: BinaryName[], opts: ProvisionOptions = {}): Promise<Partial<Record<BinaryName, string>>> {
  const recipes = recipesFor({ kubernetes: opts.kubernetesVersion, ocm: opts.ocmVersion });
  const cache = opts.cacheDir ?? defaultCacheDir();
  const progress = opts.onProgress ?? (() => undefined);
  const explicit = opts.binDir ?? process.env.OCM_LAB_BIN_DIR;
  const allowDownload = opts.allowDownload ?? process.env.OCM_LAB_NO_DOWNLOAD !== '1';
  const found: Partial<Record<BinaryName, string>> = {};

  const missing: BinaryName[] = [];
  for (const name of names) {
    const recipe = recipeOf(name, recipes);
    const file = explicit ? await fromExplicitDir(explicit, name, recipe) : ((await fromPath(name, recipe)) ?? (await cachedBinary(cache, recipe, name)));
    if (file) found[name] = file;
    else missing.push(name);
  }
  if (!missing.length) return found;

  await withCacheLock(cache, () => progress('waiting for another ocm-lab to finish provisioning'), async () => {
    for (const recipe of recipes) {
      const wanted = missing.filter((n) => recipeOf(n, recipes) === recipe);
      if (!wanted.length) continue;
      const outDir = recipeDir(cache, recipe);
      // Another run may have provisioned these while we waited for the lock.
      const stillMissing: BinaryName[] = [];
      for (const name of wanted) {
        const file = await cachedBinary(cache, recipe, name);
        if (file) found[name] = file;
        else stillMissing.push(name);
      }
      if (!stillMissing.length) continue;
      const downloaded: BinaryName[] = [];
      if (allowDownload) {
        for (const name of stillMissing) if (await download(recipe, name, outDir, progress)) downloaded.push(name);
        if (downloaded.length) await recordBinaries(cache, recipe, downloaded, 'download');
      }
      const toBuild = stillMissing.filter((n) => !downloaded.includes(n));
      if (toBuild.length) {
        // Build every binary of the recipe at once: one go build shares the work.
        const all = Object.keys(recipe.packages) as BinaryName[];
        await (opts.builder ?? buildRecipe)(recipe, all, path.join(cache, 'build', recipe.id), outDir, progress);
        await recordBinaries(cache, recipe, all, 'build');
      }
      for (const name of stillMissing) {
        const file = path.join(outDir, name);
        const v = await reportsVersion(file, recipe, name);
        if (!v.ok) {
          throw new MissingPrerequisiteError(`provisioned ${file} does not report ${recipe.versionText} (it says: ${v.printed || 'nothing'})`);
        }
        found[name] = file;
      }
    }
  });
  return found;
}

export interface BinaryStatus {
  name: BinaryName;
  version: string;
  path: string | null;
  source: BinarySource | null;
}

/** Where each binary would come from, without building anything; verifies cached files by hash. */
export async function binaryStatus(names: BinaryName[], opts: ProvisionOptions = {}): Promise<BinaryStatus[]> {
  const recipes = recipesFor({ kubernetes: opts.kubernetesVersion, ocm: opts.ocmVersion });
  const cache = opts.cacheDir ?? defaultCacheDir();
  const explicit = opts.binDir ?? process.env.OCM_LAB_BIN_DIR;
  return Promise.all(
    names.map(async (name) => {
      const recipe = recipeOf(name, recipes);
      const fromDir = explicit ? await fromExplicitDir(explicit, name, recipe).catch(() => null) : null;
      if (fromDir) return { name, version: recipe.version, path: fromDir, source: 'bin-dir' as const };
      const cached = await cachedBinary(cache, recipe, name, true);
      if (cached) return { name, version: recipe.version, path: cached, source: 'cache' as const };
      const onP = await fromPath(name, recipe);
      if (onP) return { name, version: recipe.version, path: onP, source: 'path' as const };
      return { name, version: recipe.version, path: null, source: null };
    }),
  );
}

/** The read-only source tree of a Go module (e.g. OCM's API module, for its CRDs). */
export async function ensureGoModuleSource(module: string, version: string): Promise<string> {
  const env = { ...process.env, GONOSUMDB: [process.env.GONOSUMDB, 'open-cluster-management.io'].filter(Boolean).join(',') };
  return (await downloadModule(module, version, env)).dir;
}
