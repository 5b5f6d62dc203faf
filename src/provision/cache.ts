import crypto from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import lockfile from 'proper-lockfile';
import { writeFileAtomic } from '../util/atomic-file.js';
import type { BinaryName, Recipe } from './recipes.js';

export interface ManifestEntry {
  sha256: string;
  size: number;
  mtimeMs: number;
}

export interface Manifest {
  recipe: string;
  version: string;
  source: 'build' | 'download';
  createdAt: string;
  binaries: Partial<Record<BinaryName, ManifestEntry>>;
}

export function recipeDir(cache: string, recipe: Recipe): string {
  return path.join(cache, 'bin', recipe.id);
}

function manifestFile(cache: string, recipe: Recipe): string {
  return path.join(recipeDir(cache, recipe), 'manifest.json');
}

export async function readManifest(cache: string, recipe: Recipe): Promise<Manifest | null> {
  try {
    return JSON.parse(await fs.readFile(manifestFile(cache, recipe), 'utf8')) as Manifest;
  } catch {
    return null;
  }
}

export async function sha256File(file: string): Promise<string> {
  const hash = crypto.createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

export async function recordBinaries(cache: string, recipe: Recipe, names: BinaryName[], source: Manifest['source']): Promise<void> {
  const existing = (await readManifest(cache, recipe)) ?? { recipe: recipe.id, version: recipe.version, source, createdAt: new Date().toISOString(), binaries: {} };
  for (const name of names) {
    const file = path.join(recipeDir(cache, recipe), name);
    const st = await fs.stat(file);
    existing.binaries[name] = { sha256: await sha256File(file), size: st.size, mtimeMs: st.mtimeMs };
  }
  const target = manifestFile(cache, recipe);
  await writeFileAtomic(target, `${JSON.stringify(existing, null, 2)}\n`, 0o644);
}

/**
 * A cached binary counts when the manifest recorded it and the file is the one
 * recorded (size and mtime; the full sha256 is checked by `setup --check`).
 */
export async function cachedBinary(cache: string, recipe: Recipe, name: BinaryName, verifyHash = false): Promise<string | null> {
  const manifest = await readManifest(cache, recipe);
  const entry = manifest?.binaries[name];
  if (!manifest || manifest.version !== recipe.version || !entry) return null;
  const file = path.join(recipeDir(cache, recipe), name);
  const st = await fs.stat(file).catch(() => null);
  if (!st || st.size !== entry.size || Math.abs(st.mtimeMs - entry.mtimeMs) > 1) return null;
  if (verifyHash && (await sha256File(file)) !== entry.sha256) return null;
  return file;
}

/** Serialises provisioning between concurrent ocm-lab runs; the second waits and then finds the cache warm. */
export async function withCacheLock<T>(cache: string, onWait: () => void, body: () => Promise<T>): Promise<T> {
  await fs.mkdir(cache, { recursive: true });
  const lockTarget = path.join(cache, 'provision.lock');
  await fs.writeFile(lockTarget, '', { flag: 'a' });
  let release: (() => Promise<void>) | null = null;
  let told = false;
  while (!release) {
    try {
      release = await lockfile.lock(lockTarget, { stale: 60_000, update: 10_000, retries: 0, realpath: false });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ELOCKED') throw err;
      if (!told) {
        onWait();
        told = true;
      }
      await new Promise((r) => setTimeout(r, 1_000));
    }
  }
  try {
    return await body();
  } finally {
    await release();
  }
}
