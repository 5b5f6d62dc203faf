import { cacheDir as defaultCacheDir } from '../paths.js';
import { downloadModule, goEnv } from './gobuild.js';
import { fetchModuleSource } from './gomod/proxy.js';
import { NO_MIRRORS, sourceArchiveFor, type Mirrors } from './mirrors.js';
import { ocmRecipe } from './recipes.js';
import { onPath } from './resolve.js';
import { ensureSourceTree } from './source-tree.js';

/**
 * The read-only source tree of a Go module, e.g. open-cluster-management.io/api for its CRDs: with Go on
 * PATH, `go mod download -json` → Dir in the module cache (the checksum database has no entries for OCM's
 * modules, hence GONOSUMDB); without Go, the module zip from the module proxy, verified against a pinned
 * go.sum hash and extracted into the lab's cache (src/provision/gomod/). A source archive named for the module
 * version (a mirrors file's sources:, --ocm-source, $OCM_LAB_OCM_SOURCE) comes first: its verified tree (source-tree.ts).
 */
export async function ensureGoModuleSource(
  module: string,
  version: string,
  opts: { signal?: AbortSignal; onProgress?: (message: string) => void; mirrors?: Mirrors; cacheDir?: string } = {},
): Promise<string> {
  const archive = sourceArchiveFor(opts.mirrors ?? NO_MIRRORS, module, version);
  if (archive) {
    return ensureSourceTree(archive, module, version, { cacheDir: opts.cacheDir ?? defaultCacheDir(), progress: opts.onProgress, signal: opts.signal });
  }
  opts.onProgress?.(`fetching ${module}@${version}`);
  if (await onPath('go')) return (await downloadModule(module, version, { env: goEnv(ocmRecipe().noSumDb), signal: opts.signal })).dir;
  return fetchModuleSource(module, version, {
    cacheDir: opts.cacheDir ?? defaultCacheDir(),
    mirrors: opts.mirrors,
    signal: opts.signal,
    progress: opts.onProgress,
  });
}
