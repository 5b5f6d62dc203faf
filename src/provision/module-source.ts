import { downloadModule, goEnv } from './gobuild.js';
import { ocmRecipe } from './recipes.js';

/**
 * The read-only source tree of a Go module in the module cache (`go mod
 * download -json` → Dir), e.g. open-cluster-management.io/api for its CRDs.
 * The checksum database has no entries for OCM's modules, hence GONOSUMDB.
 */
export async function ensureGoModuleSource(
  module: string,
  version: string,
  opts: { signal?: AbortSignal; onProgress?: (message: string) => void } = {},
): Promise<string> {
  opts.onProgress?.(`fetching ${module}@${version}`);
  return (await downloadModule(module, version, { env: goEnv(ocmRecipe().noSumDb), signal: opts.signal })).dir;
}
