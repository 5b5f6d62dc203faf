import fs from 'node:fs/promises';
import path from 'node:path';
import { DigestMismatchError, MissingPrerequisiteError } from '../../errors.js';
import { DownloadUnavailable, openDownload } from '../download.js';
import type { Progress } from '../gobuild.js';
import { BodyInterrupted, saveResponse } from '../http-file.js';
import { downloadUrl, NO_MIRRORS, type Mirrors } from '../mirrors.js';
import { hash1 } from './dirhash.js';
import { MODULE_ZIP_HASHES } from './pins.js';
import { ZipFormatError, zipEntries, zipEntryData } from './zip.js';

/** The Go command's default module proxy. */
const DEFAULT_GOPROXY = 'https://proxy.golang.org';

/** A module path or version as the module proxy protocol spells it in URLs: each upper-case letter as `!` and its lower case. */
export function escapeModulePath(value: string): string {
  if (value.includes('!')) throw new Error(`module path or version ${value} contains '!', which the module proxy protocol reserves`);
  return value.replace(/[A-Z]/g, (c) => `!${c.toLowerCase()}`);
}

/** The module proxy to ask: the first http(s) entry of $GOPROXY, else proxy.golang.org when $GOPROXY is unset. */
export function goProxyBase(env: NodeJS.ProcessEnv = process.env): string {
  const value = env.GOPROXY?.trim();
  if (!value) return DEFAULT_GOPROXY;
  for (const entry of value.split(/[,|]/).map((e) => e.trim())) {
    if (/^https?:\/\//.test(entry)) return entry.replace(/\/+$/, '');
    if (entry === 'off') break;
  }
  throw new MissingPrerequisiteError(`GOPROXY=${value} names no http(s) module proxy, and without Go ocm-lab can fetch module source only from one`, {
    hint: 'set GOPROXY to a module proxy (e.g. https://proxy.golang.org), or install Go and put it on PATH',
  });
}

export function moduleZipUrl(base: string, module: string, version: string): string {
  return `${base}/${escapeModulePath(module)}/@v/${escapeModulePath(version)}.zip`;
}

/** Where the lab keeps a module's extracted source: `<cache>/go-modules/<module>@<version>/`, the module cache's layout. */
export function moduleSourceDir(cache: string, module: string, version: string): string {
  return path.join(cache, 'go-modules', `${escapeModulePath(module)}@${escapeModulePath(version)}`);
}

/** The files of a module zip: every name must lie under `<module>@<version>/` with no `.`, `..` or empty element. */
function moduleFiles(zip: Buffer, prefix: string): { name: string; data: Buffer }[] {
  const seen = new Set<string>();
  return zipEntries(zip).map((entry) => {
    const rel = entry.name.startsWith(prefix) ? entry.name.slice(prefix.length) : '';
    const parts = rel.replace(/\/$/, '').split('/');
    if (!rel || parts.some((p) => p === '' || p === '.' || p === '..') || /[\\\0]/.test(rel)) {
      throw new ZipFormatError(`entry ${JSON.stringify(entry.name)} is not a file under ${prefix}`);
    }
    if (seen.has(entry.name)) throw new ZipFormatError(`entry ${entry.name} appears twice`);
    seen.add(entry.name);
    return { name: entry.name, data: zipEntryData(zip, entry) };
  });
}

async function writeTree(files: { name: string; data: Buffer }[], prefix: string, root: string): Promise<void> {
  for (const file of files) {
    const target = path.join(root, file.name.slice(prefix.length));
    if (file.name.endsWith('/')) await fs.mkdir(target, { recursive: true });
    else {
      await fs.mkdir(path.dirname(target), { recursive: true });
      await fs.writeFile(target, file.data, { mode: 0o644 });
    }
  }
}

const exists = (p: string): Promise<boolean> =>
  fs.stat(p).then(
    () => true,
    () => false,
  );

export interface ModuleFetchOptions {
  cacheDir: string;
  mirrors?: Mirrors;
  env?: NodeJS.ProcessEnv;
  signal?: AbortSignal;
  progress?: Progress;
}

/** Fetches of this process under way, by destination: both operators ask for OCM's module at once. */
const underWay = new Map<string, Promise<string>>();

/**
 * A module's source tree as the Go command would fetch it, without Go: its zip from the module proxy
 * (through the mirrors file's downloads:), verified against the pinned go.sum hash, extracted into the
 * lab's cache by a rename (another run extracting the same module at once is harmless). Throws
 * MissingPrerequisiteError (exit 3) when it cannot fetch, DigestMismatchError (exit 7) when the bytes
 * are not the published ones; nothing is cached then.
 */
export function fetchModuleSource(module: string, version: string, opts: ModuleFetchOptions): Promise<string> {
  const dest = moduleSourceDir(opts.cacheDir, module, version);
  let pending = underWay.get(dest);
  if (!pending) {
    pending = (async () => ((await exists(dest)) ? dest : download(module, version, dest, opts)))().finally(() => underWay.delete(dest));
    underWay.set(dest, pending);
  }
  return pending;
}

async function download(module: string, version: string, dest: string, opts: ModuleFetchOptions): Promise<string> {
  const id = `${module}@${version}`;
  const expected = MODULE_ZIP_HASHES[id];
  if (!expected) {
    throw new MissingPrerequisiteError(`cannot fetch ${id} without Go ('go' is not on PATH): ocm-lab pins no go.sum hash to verify it by`, {
      hint: 'install Go and put it on PATH (go mod download verifies the module against the checksum database)',
    });
  }
  const url = downloadUrl(opts.mirrors ?? NO_MIRRORS, moduleZipUrl(goProxyBase(opts.env), module, version));
  const unavailable = (reason: string): MissingPrerequisiteError =>
    new MissingPrerequisiteError(`cannot fetch ${id} from the Go module proxy: ${reason}`, {
      hint:
        `make ${url} answer: set GOPROXY to a module proxy that serves ${id}, or rewrite its prefix under downloads: in a mirrors file ` +
        '(--mirrors FILE); or install Go and use --artifacts build',
    });
  opts.progress?.(`downloading ${url}`);
  await fs.mkdir(path.dirname(dest), { recursive: true });
  const scratch = await fs.mkdtemp(path.join(path.dirname(dest), `.${path.basename(dest)}.download-`));
  try {
    const zipFile = path.join(scratch, 'module.zip');
    try {
      await saveResponse(await openDownload(url, opts.signal), zipFile, `${id}.zip`, opts.progress ?? (() => undefined), opts.signal);
    } catch (err) {
      if (err instanceof DownloadUnavailable) throw unavailable(err.message);
      if (err instanceof BodyInterrupted) throw unavailable(`${url}: ${err.reason}`);
      throw err;
    }
    const prefix = `${id}/`;
    let files: { name: string; data: Buffer }[];
    try {
      files = moduleFiles(await fs.readFile(zipFile), prefix);
    } catch (err) {
      if (!(err instanceof ZipFormatError)) throw err;
      throw new DigestMismatchError(`${id} (${url})`, expected, `no hash: not a readable module zip (${err.message})`, { hint: mismatchHint(url) });
    }
    const actual = hash1(files);
    if (actual !== expected) throw new DigestMismatchError(`${id} (${url})`, expected, actual, { hint: mismatchHint(url) });
    const tree = path.join(scratch, 'tree');
    await writeTree(files, prefix, tree);
    await fs.rename(tree, dest).catch(async (err: NodeJS.ErrnoException) => {
      // Another run put the same verified tree there first.
      if (!(await exists(dest))) throw err;
    });
    return dest;
  } finally {
    await fs.rm(scratch, { recursive: true, force: true });
  }
}

function mismatchHint(url: string): string {
  return (
    `${url} served other bytes than go.sum records for this module; point GOPROXY (or a downloads: entry in a mirrors file) ` +
    'at a proxy that serves the published module, or install Go and use --artifacts build'
  );
}
