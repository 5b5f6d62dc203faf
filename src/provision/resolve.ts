import { constants as fsConstants } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { MissingPrerequisiteError, RegistryUnavailableError } from '../errors.js';
import { cacheDir as defaultCacheDir } from '../paths.js';
import { cachedBinary, outsideBinaryReportsVersion, recipeDir, recordBinaries, type Verification } from './cache.js';
// Downloading, building and the cache lock load only when a binary is missing: a warm lookup (every
// `proxy kubectl`) stats the cache and needs none of them (execa, proper-lockfile, the OCI puller).
import type { ArtifactsMode } from './artifacts.js';
import type { Builder } from './gobuild.js';
import { buildInfoReportsVersion } from './buildinfo.js';
import type { Mirrors } from './mirrors.js';
import { executableName } from './platform.js';
import { ALL_BINARIES, printsVersion, recipeOf, recipesFor, type BinaryName, type Recipe } from './recipes.js';

export interface ProvisionOptions {
  /** Directory to take binaries from first (else $OCM_LAB_BIN_DIR); one there of another version is an error. */
  binDir?: string;
  /** Default: cacheDir() — $OCM_LAB_CACHE_DIR or $XDG_CACHE_HOME/ocm-lab. */
  cacheDir?: string;
  /**
   * official: release downloads only (a binary that cannot be fetched is an error); build: the Go build only;
   * auto: downloads first, building what they do not give. Default: $OCM_LAB_ARTIFACTS, build with
   * $OCM_LAB_NO_DOWNLOAD=1, else auto (`up` and `setup` decide it once: artifacts.ts).
   */
  artifacts?: ArtifactsMode;
  /** Download mirrors (mirrors.ts); default: none, the publishers' own URLs. */
  mirrors?: Mirrors;
  onProgress?: (message: string) => void;
  signal?: AbortSignal;
  kubernetesVersion?: string;
  ocmVersion?: string;
  /** Replaces the Go build (tests). */
  builder?: Builder;
}

type BinarySource = 'bin-dir' | 'path' | 'cache';

interface Context {
  recipes: Recipe[];
  cache: string;
  binDir: string | undefined;
  progress: (message: string) => void;
  signal: AbortSignal | undefined;
}

function contextOf(opts: ProvisionOptions): Context {
  return {
    recipes: recipesFor({ kubernetes: opts.kubernetesVersion, ocm: opts.ocmVersion }),
    cache: opts.cacheDir ?? defaultCacheDir(),
    binDir: opts.binDir ?? (process.env.OCM_LAB_BIN_DIR || undefined),
    progress: opts.onProgress ?? (() => undefined),
    signal: opts.signal,
  };
}

async function executable(file: string): Promise<boolean> {
  return fs.access(file, fsConstants.X_OK).then(
    () => true,
    () => false,
  );
}

/** Runs the binary's version command; `ok` when it prints the recipe's version as a whole word. */
async function reportsVersion(file: string, recipe: Recipe, name: BinaryName): Promise<{ ok: boolean; printed: string }> {
  if (recipe.versionFromBuildInfo) return buildInfoReportsVersion(file, recipe.module, recipe.version);
  const { execa } = await import('execa');
  const r = await execa(file, recipe.versionArgs(name), { reject: false, timeout: 15_000, all: true });
  const all = String(r.all ?? '');
  const printed = all.trim().split('\n')[0] ?? '';
  return { ok: r.exitCode === 0 && printsVersion(all, recipe), printed: printed || String(r.shortMessage ?? '') };
}

/** `name` on PATH (`name.exe` on Windows), symlinks resolved; null when it is not there. */
export async function onPath(name: string): Promise<string | null> {
  const file = executableName(name);
  for (const dir of (process.env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(dir, file);
    if (await executable(candidate)) return fs.realpath(candidate).catch(() => candidate);
  }
  return null;
}

function display(recipe: Recipe): string {
  return recipe.version;
}

async function fromBinDir(dir: string, name: BinaryName, recipe: Recipe): Promise<string | null> {
  const file = path.join(path.resolve(dir), executableName(name));
  if (!(await executable(file))) return null;
  const v = await reportsVersion(file, recipe, name);
  if (!v.ok) {
    throw new MissingPrerequisiteError(`${file} is not ${name} ${display(recipe)} (it says: ${v.printed || 'nothing'})`, {
      hint: `put ${name} ${display(recipe)} in ${dir}, or remove it from there so ocm-lab provisions it`,
    });
  }
  return file;
}

async function fromPath(ctx: Context, name: BinaryName, recipe: Recipe, verification: Verification): Promise<string | null> {
  const file = await onPath(name);
  if (!file) return null;
  const ok = await outsideBinaryReportsVersion(ctx.cache, recipe, name, file, async (f) => (await reportsVersion(f, recipe, name)).ok, verification);
  return ok ? file : null;
}

function fromCache(ctx: Context, name: BinaryName, recipe: Recipe, verification: Verification): Promise<string | null> {
  return cachedBinary(ctx.cache, recipe, name, async (file) => (await reportsVersion(file, recipe, name)).ok, verification);
}

/** Resolution order 1–2: --bin-dir, PATH (right version only), the cache. */
async function locate(ctx: Context, name: BinaryName, verification: Verification): Promise<{ path: string; source: BinarySource } | null> {
  const recipe = recipeOf(name, ctx.recipes);
  const inDir = ctx.binDir ? await fromBinDir(ctx.binDir, name, recipe) : null;
  if (inDir) return { path: inDir, source: 'bin-dir' };
  const inPath = await fromPath(ctx, name, recipe, verification);
  if (inPath) return { path: inPath, source: 'path' };
  const cached = await fromCache(ctx, name, recipe, verification);
  return cached ? { path: cached, source: 'cache' } : null;
}

/** "kube-apiserver, kubectl v1.34.4 and etcd v3.6.4" */
function describeMissing(names: BinaryName[], recipes: Recipe[]): string {
  const parts = recipes
    .map((r) => ({ r, ns: names.filter((n) => recipeOf(n, recipes) === r) }))
    .filter((g) => g.ns.length)
    .map((g) => `${g.ns.join(', ')} ${display(g.r)}`);
  return parts.length > 1 ? `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}` : (parts[0] ?? '');
}

/**
 * Absolute paths of the requested binaries, each from the first of: --bin-dir
 * ($OCM_LAB_BIN_DIR), PATH (pinned version only), the verified cache, an
 * official release download, a build from the Go module proxy. A warm cache
 * costs a stat per binary and no Go invocation. Provisioning holds a lock on
 * the cache, so concurrent runs build once.
 */
export async function ensureBinaries<N extends BinaryName>(names: readonly N[], opts: ProvisionOptions = {}): Promise<Record<N, string>> {
  const ctx = contextOf(opts);
  const wanted = [...new Set(names)];
  const found = {} as Record<N, string>;
  const located = await Promise.all(wanted.map((n) => locate(ctx, n, 'quick')));
  const missing = wanted.filter((n, i) => {
    const hit = located[i];
    if (hit) found[n] = hit.path;
    return !hit;
  });
  if (!missing.length) return found;

  const [{ withCacheLock }, { artifactsFromEnv }, { goBuild, requireGo }, { NO_MIRRORS, sourceArchiveFor }, { ensureSourceTree }] = await Promise.all([
    import('./lock.js'),
    import('./artifacts.js'),
    import('./gobuild.js'),
    import('./mirrors.js'),
    import('./source-tree.js'),
  ]);
  await withCacheLock(
    ctx.cache,
    async () => {
      const mode = opts.artifacts ?? artifactsFromEnv();
      const why: string[] = [];
      const toBuild: N[] = [];
      for (const name of missing) {
        // Another run may have provisioned it while we waited for the lock.
        const cached = await fromCache(ctx, name, recipeOf(name, ctx.recipes), 'quick');
        if (cached) found[name] = cached;
        else toBuild.push(name);
      }
      if (mode !== 'build' && toBuild.length) {
        const { done: downloaded, failures } = await downloadAll(ctx, toBuild, opts.mirrors ?? NO_MIRRORS, mode);
        for (const [name, file] of downloaded) found[name as N] = file;
        why.push(...failures);
        toBuild.splice(0, toBuild.length, ...toBuild.filter((n) => !downloaded.has(n)));
      }
      if (!toBuild.length) return;
      if (mode === 'official') throw officialUnavailable(toBuild, ctx.recipes, why);
      if (!opts.builder) await requireGo(describeMissing(toBuild, ctx.recipes));
      for (const recipe of ctx.recipes) {
        const group = toBuild.filter((n) => recipeOf(n, ctx.recipes) === recipe);
        if (!group.length) continue;
        ctx.signal?.throwIfAborted();
        const outDir = recipeDir(ctx.cache, recipe);
        const progress = (line: string) => ctx.progress(`${recipe.title}: ${line}`);
        // A source archive named for this module version (mirrors' sources:, --ocm-source) replaces the module proxy.
        const archive = sourceArchiveFor(opts.mirrors ?? NO_MIRRORS, recipe.module, recipe.version);
        if (archive && recipe.versionFromBuildInfo) throw unusableArchive(recipe, archive.from);
        const source = archive
          ? {
              dir: await ensureSourceTree(archive, recipe.module, recipe.version, { cacheDir: ctx.cache, progress, signal: ctx.signal }),
              from: `source archive ${archive.file}`,
            }
          : undefined;
        const workDir = path.join(ctx.cache, 'build', source ? `${recipe.id}-source` : recipe.id);
        await (opts.builder ?? goBuild)({ recipe, names: group, workDir, outDir, progress, signal: ctx.signal, ...(source ? { source } : {}) });
        const versions = [];
        for (const name of group) {
          const file = path.join(outDir, name);
          const v = await reportsVersion(file, recipe, name);
          if (!v.ok) throw new MissingPrerequisiteError(`built ${file}, but it does not report ${recipe.versionText} (it says: ${v.printed || 'nothing'})`);
          versions.push({ name, version: v.printed });
          found[name] = file;
        }
        await recordBinaries(ctx.cache, recipe, versions, 'build', source ? `${source.from} (sha256 ${archive?.sha256})` : 'Go module proxy');
      }
    },
    { onWait: () => ctx.progress('waiting for another ocm-lab to finish provisioning'), signal: ctx.signal },
  );
  return found;
}

/** A build in a module's own tree records its version as (devel): binaries checked by Go build information could never pass. */
function unusableArchive(recipe: Recipe, from: string): MissingPrerequisiteError {
  return new MissingPrerequisiteError(
    `${from} names a source archive of ${recipe.module}@${recipe.version}, but ${recipe.title}'s binaries are checked by their Go build ` +
      "information, which a build in the module's own tree leaves at (devel)",
    { hint: `leave that source archive out: ${recipe.title} builds from the Go module proxy` },
  );
}

/** Under `official`, binaries no release gives (OCM publishes images only; see the hint). */
function officialUnavailable(names: BinaryName[], recipes: Recipe[], why: string[]): MissingPrerequisiteError {
  return new MissingPrerequisiteError(`artifacts official: could not fetch ${describeMissing(names, recipes)}:\n  ${why.join('\n  ')}`, {
    hint: 'use --artifacts auto to build what cannot be fetched, --artifacts build to build everything here, or put the binaries in --bin-dir DIR',
  });
}

/**
 * Step 3: official releases, each checked against its published sha256 and its version output. A server
 * that cannot be reached is not asked twice. Under `auto` what fails is built; the progress line says so.
 */
async function downloadAll(
  ctx: Context,
  names: BinaryName[],
  mirrors: Mirrors,
  mode: ArtifactsMode,
): Promise<{ done: Map<BinaryName, string>; failures: string[] }> {
  const { DownloadUnavailable, downloadRelease } = await import('./download.js');
  const done = new Map<BinaryName, string>();
  const failures: string[] = [];
  const unreachable = new Set<string>();
  const otherwise = mode === 'auto' ? 'will build from the Go module proxy' : 'not building it (--artifacts official)';
  for (const recipe of ctx.recipes) {
    const group = names.filter((n) => recipeOf(n, ctx.recipes) === recipe);
    const progress = (line: string) => ctx.progress(`${recipe.title}: ${line}`);
    if (!group.length) continue;
    if (!recipe.release) {
      failures.push(`${recipe.title} publishes no release binaries (${group.join(', ')})`);
      progress(`publishes no release binaries; ${otherwise}`);
      continue;
    }
    const recorded: { name: BinaryName; version: string }[] = [];
    for (const name of group) {
      if (unreachable.has(recipe.family)) break;
      const outDir = recipeDir(ctx.cache, recipe);
      try {
        await downloadRelease(recipe, name, outDir, { mirrors, progress, signal: ctx.signal });
      } catch (err) {
        const unavailable = err instanceof DownloadUnavailable || err instanceof RegistryUnavailableError;
        // A corrupted or substituted artifact stops provisioning under every mode: building instead would hide it.
        if (!unavailable) throw err;
        if (unavailable && err.unreachable) unreachable.add(recipe.family);
        failures.push(`${name}: ${err.message}`);
        progress(`no official ${recipe.release.kind === 'image' ? 'image' : 'release download'} (${err.message}); ${otherwise}`);
        continue;
      }
      const file = path.join(outDir, name);
      const v = await reportsVersion(file, recipe, name);
      if (!v.ok) {
        failures.push(`${name}: the download does not report ${recipe.versionText} (it says: ${v.printed || 'nothing'})`);
        progress(`downloaded ${name} does not report ${recipe.versionText} (it says: ${v.printed || 'nothing'}); ${otherwise}`);
        await fs.rm(file, { force: true });
        continue;
      }
      recorded.push({ name, version: v.printed });
      done.set(name, file);
    }
    if (recorded.length) await recordBinaries(ctx.cache, recipe, recorded, 'download');
  }
  return { done, failures };
}

export interface BinaryStatus {
  name: BinaryName;
  /** The pinned version. */
  version: string;
  path: string | null;
  source: BinarySource | null;
  /** Why a binary that is there does not count (e.g. the wrong version in --bin-dir). */
  problem?: string;
}

export interface StatusOptions extends ProvisionOptions {
  /** Default: every binary a lab can use. */
  names?: BinaryName[];
  /** 'full' rehashes cached binaries even when their stamp says they are unchanged (setup --check). */
  verification?: Verification;
}

/** Where each binary would come from right now, in resolution order, without downloading or building anything. */
export async function binaryStatus(opts: StatusOptions = {}): Promise<BinaryStatus[]> {
  const ctx = contextOf(opts);
  return Promise.all(
    (opts.names ?? ALL_BINARIES).map(async (name): Promise<BinaryStatus> => {
      const version = display(recipeOf(name, ctx.recipes));
      try {
        const hit = await locate(ctx, name, opts.verification ?? 'quick');
        return { name, version, path: hit?.path ?? null, source: hit?.source ?? null };
      } catch (err) {
        return { name, version, path: null, source: null, problem: (err as Error).message };
      }
    }),
  );
}
