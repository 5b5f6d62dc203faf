import fs from 'node:fs/promises';
import path from 'node:path';
import type { Routes } from './files.js';

/** One entry of package-lock.json's `packages` (lockfile v3): what npm recorded of an installed package. */
interface LockedPackage {
  name?: string;
  version?: string;
  integrity?: string;
  link?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, unknown>;
  bin?: Record<string, string>;
  os?: string[];
  cpu?: string[];
  engines?: Record<string, string>;
  hasInstallScript?: boolean;
}

/** The file npm's cache (cacache) keeps a tarball in: content-v2/<algorithm>/<hex, split 2/2/rest>. */
function cacacheFile(cacheDir: string, integrity: string): string {
  const [algorithm, base64] = integrity.split('-', 2) as [string, string];
  const hex = Buffer.from(base64, 'base64').toString('hex');
  return path.join(cacheDir, 'content-v2', algorithm, hex.slice(0, 2), hex.slice(2, 4), hex.slice(4));
}

function newer(a: string, b: string): boolean {
  const parts = (v: string) => v.split(/[.+-]/).slice(0, 3).map(Number);
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < 3; i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) > (y[i] ?? 0);
  return false;
}

/**
 * registry.npmjs.org as `npx <tarball>` asks it, for the packages the repository's package-lock.json names: one
 * packument per package (every locked version, with what the lockfile recorded of its dependencies, bin, os and cpu)
 * and each tarball, read from npm's own cache on this machine (where `npm ci` left it, keyed by the locked integrity).
 * A tarball the cache lacks (another platform's esbuild) is listed but answers 404: npm never asks for it.
 */
export async function npmRegistryRoutes(routes: Routes, lockFile: string, npmCacheDir: string): Promise<{ packages: number; tarballs: number }> {
  const lock = JSON.parse(await fs.readFile(lockFile, 'utf8')) as { packages?: Record<string, LockedPackage> };
  const packuments = new Map<string, { latest: string; versions: Record<string, unknown> }>();
  let tarballs = 0;
  for (const [where, pkg] of Object.entries(lock.packages ?? {})) {
    if (!where || pkg.link || !pkg.version || !pkg.integrity) continue;
    const name = pkg.name ?? where.slice(where.lastIndexOf('node_modules/') + 'node_modules/'.length);
    const tarballPath = `/${name}/-/${name.split('/').pop()}-${pkg.version}.tgz`;
    const { name: _n, version, integrity, link: _l, ...recorded } = pkg;
    const entry = packuments.get(name) ?? { latest: version, versions: {} };
    entry.versions[version] = { name, version, ...recorded, dist: { tarball: `https://registry.npmjs.org${tarballPath}`, integrity } };
    if (newer(version, entry.latest)) entry.latest = version;
    packuments.set(name, entry);
    const file = cacacheFile(npmCacheDir, integrity);
    if (
      await fs.access(file).then(
        () => true,
        () => false,
      )
    ) {
      routes.map.set(`registry.npmjs.org${tarballPath}`, { file });
      tarballs++;
    }
  }
  for (const [name, { latest, versions }] of packuments) {
    const text = JSON.stringify({ name, 'dist-tags': { latest }, versions });
    // npm asks for a scoped package as /@scope%2fname.
    for (const p of new Set([name, name.replace('/', '%2f'), name.replace('/', '%2F')])) {
      routes.map.set(`registry.npmjs.org/${p}`, { text, contentType: 'application/json' });
    }
  }
  return { packages: packuments.size, tarballs };
}
