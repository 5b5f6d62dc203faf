import crypto from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '../util/atomic-file.js';
import type { BinaryName, Recipe } from './recipes.js';

/**
 * Cache layout: `<cache>/bin/<recipe id>/<binary>` plus `manifest.json`
 * (sha256, size and version output of each binary, recorded when it was put
 * there) and one `.<binary>.verified` stamp per binary.
 */
interface ManifestEntry {
  sha256: string;
  size: number;
  /** First line of the binary's version output when it was recorded. */
  version?: string;
}

export interface Manifest {
  recipe: string;
  version: string;
  source: 'build' | 'download';
  /** What a build was made from: `Go module proxy`, or `source archive <file> (sha256 <hex>)`; absent in older manifests and for downloads. */
  from?: string;
  createdAt: string;
  binaries: Partial<Record<BinaryName, ManifestEntry>>;
}

export function recipeDir(cache: string, recipe: Recipe): string {
  return path.join(cache, 'bin', recipe.id);
}

function manifestFile(cache: string, recipe: Recipe): string {
  return path.join(recipeDir(cache, recipe), 'manifest.json');
}

function stampFile(cache: string, recipe: Recipe, name: BinaryName): string {
  return path.join(recipeDir(cache, recipe), `.${name}.verified`);
}

async function readManifest(cache: string, recipe: Recipe): Promise<Manifest | null> {
  try {
    const parsed = JSON.parse(await fs.readFile(manifestFile(cache, recipe), 'utf8')) as Manifest;
    return parsed && typeof parsed === 'object' && parsed.binaries ? parsed : null;
  } catch {
    return null;
  }
}

async function sha256File(file: string): Promise<string> {
  const hash = crypto.createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * What identifies one exact file on disk: inode, size, mtime and ctime in
 * nanoseconds (ctime cannot be set back by user tools; any write or rename
 * changes it), and the sha256 it was verified against — so an edited manifest
 * also invalidates it. Git's index uses the same idea to skip rehashing.
 */
async function fileStamp(file: string, sha256: string): Promise<string | null> {
  const st = await fs.stat(file, { bigint: true }).catch(() => null);
  if (!st) return null;
  return [st.dev, st.ino, st.size, st.mtimeNs, st.ctimeNs, sha256].join(':');
}

export type Verification = 'quick' | 'full';

/**
 * A cached binary counts only if it is the file the manifest recorded. A file
 * whose stamp says it was verified unchanged costs one stat ('quick'); otherwise
 * (or with 'full') its sha256 is computed and compared, then its version output
 * is checked, and a fresh stamp is left so the next run is quick again.
 */
export async function cachedBinary(
  cache: string,
  recipe: Recipe,
  name: BinaryName,
  checkVersion: (file: string) => Promise<boolean>,
  verification: Verification = 'quick',
): Promise<string | null> {
  const manifest = await readManifest(cache, recipe);
  const entry = manifest?.binaries[name];
  if (!manifest || manifest.version !== recipe.version || !entry?.sha256) return null;
  const file = path.join(recipeDir(cache, recipe), name);
  const st = await fs.stat(file).catch(() => null);
  if (!st || st.size !== entry.size) return null;
  const stamp = await fileStamp(file, entry.sha256);
  if (verification === 'quick') {
    const recorded = await fs.readFile(stampFile(cache, recipe, name), 'utf8').catch(() => null);
    if (stamp && recorded === stamp) return file;
  }
  if ((await sha256File(file)) !== entry.sha256) return null;
  if (!(await checkVersion(file))) return null;
  // Safe without the lock: a stamp only matches the very file it was taken of.
  if (stamp) await writeFileAtomic(stampFile(cache, recipe, name), stamp, 0o644).catch(() => undefined);
  return file;
}

/**
 * Whether `file`, a binary outside the cache (found on PATH), reports the
 * recipe's version. Its version command runs once per change of the file: the
 * verdict is kept under the file's stamp (`<cache>/path-verdicts/<recipe id>/<binary>`),
 * and 'quick' trusts a verdict whose stamp still matches (one stat, no process:
 * `proxy kubectl` would otherwise run `kubectl version` every time).
 */
export async function outsideBinaryReportsVersion(
  cache: string,
  recipe: Recipe,
  name: BinaryName,
  file: string,
  checkVersion: (file: string) => Promise<boolean>,
  verification: Verification = 'quick',
): Promise<boolean> {
  const stamp = await fileStamp(file, recipe.version);
  const verdictFile = path.join(cache, 'path-verdicts', recipe.id, name);
  if (verification === 'quick' && stamp) {
    const recorded = await fs.readFile(verdictFile, 'utf8').catch(() => null);
    if (recorded === `${file} ${stamp} ok`) return true;
    if (recorded === `${file} ${stamp} not`) return false;
  }
  const ok = await checkVersion(file);
  if (stamp) await writeFileAtomic(verdictFile, `${file} ${stamp} ${ok ? 'ok' : 'not'}`, 0o644).catch(() => undefined);
  return ok;
}

/**
 * Records binaries that were just put into the cache (and were version-checked
 * by the caller): their sha256, size and version line, then a stamp each.
 */
export async function recordBinaries(
  cache: string,
  recipe: Recipe,
  entries: { name: BinaryName; version: string }[],
  source: Manifest['source'],
  from?: string,
): Promise<void> {
  const previous = await readManifest(cache, recipe);
  const origin = from === undefined ? {} : { from };
  const manifest: Manifest =
    previous && previous.version === recipe.version
      ? { ...previous, source, ...origin }
      : { recipe: recipe.id, version: recipe.version, source, ...origin, createdAt: new Date().toISOString(), binaries: {} };
  const stamps: [BinaryName, string][] = [];
  for (const { name, version } of entries) {
    const file = path.join(recipeDir(cache, recipe), name);
    const sha256 = await sha256File(file);
    manifest.binaries[name] = { sha256, size: (await fs.stat(file)).size, version };
    const stamp = await fileStamp(file, sha256);
    if (stamp) stamps.push([name, stamp]);
  }
  await writeFileAtomic(manifestFile(cache, recipe), `${JSON.stringify(manifest, null, 2)}\n`, 0o644);
  for (const [name, stamp] of stamps) await writeFileAtomic(stampFile(cache, recipe, name), stamp, 0o644);
}
