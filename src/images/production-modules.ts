import fs from 'node:fs/promises';
import path from 'node:path';

/** One package the CLI needs at run time, where Node finds it, as it goes into the image's node_modules/. */
export interface ProductionModule {
  name: string;
  version: string;
  dir: string;
}

interface Manifest {
  version?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

async function readManifest(dir: string): Promise<Manifest | null> {
  return fs
    .readFile(path.join(dir, 'package.json'), 'utf8')
    .then((t) => JSON.parse(t) as Manifest)
    .catch(() => null);
}

/** The directory Node would load `name` from when required in `fromDir`: the nearest node_modules/<name> up the tree. */
async function locate(name: string, fromDir: string): Promise<string | null> {
  for (let dir = fromDir; ; dir = path.dirname(dir)) {
    if (path.basename(dir) !== 'node_modules') {
      const candidate = path.join(dir, 'node_modules', name);
      if (await fs.stat(path.join(candidate, 'package.json')).catch(() => null)) return candidate;
    }
    if (path.dirname(dir) === dir) return null;
  }
}

function isInside(dir: string, parent: string): boolean {
  return dir.startsWith(`${parent}${path.sep}`);
}

/**
 * Every package `packageRoot` needs at run time (its dependencies and theirs,
 * optional ones when installed), found as Node finds them: in a checkout under
 * the package's own node_modules, installed from npm beside it (hoisted).
 * A package nested in another's node_modules goes along with its parent and is
 * not listed. Sorted by name; the same tree gives the same list.
 */
export async function productionModules(packageRoot: string): Promise<ProductionModule[]> {
  const root = await readManifest(packageRoot);
  if (!root) throw new Error(`${path.join(packageRoot, 'package.json')} is missing or not JSON`);
  const found = new Map<string, ProductionModule>();
  const queue: { name: string; from: string; optional: boolean }[] = [];
  const enqueue = (m: Manifest, from: string) => {
    for (const name of Object.keys(m.dependencies ?? {})) queue.push({ name, from, optional: false });
    for (const name of Object.keys(m.optionalDependencies ?? {})) queue.push({ name, from, optional: true });
  };
  enqueue(root, packageRoot);
  const visited = new Set<string>();
  while (queue.length) {
    const { name, from, optional } = queue.shift()!;
    const dir = await locate(name, from);
    if (!dir) {
      if (optional) continue;
      throw new Error(
        `${name} (needed by ${path.relative(packageRoot, from) || 'ocm-lab'}) is not installed: ` +
          `no node_modules/${name} in ${from} or above; run npm ci (or npm install)`,
      );
    }
    if (visited.has(dir)) continue;
    visited.add(dir);
    const manifest = (await readManifest(dir)) ?? {};
    const nested = [...found.values()].some((m) => isInside(dir, m.dir));
    if (!nested && !found.has(name)) found.set(name, { name, version: manifest.version ?? '', dir });
    enqueue(manifest, dir);
  }
  return [...found.values()].sort((a, b) => a.name.localeCompare(b.name));
}
