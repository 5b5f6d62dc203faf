import { ensureBinaries, type ProvisionOptions } from './resolve.js';

/** Path of the kind CLI (KIND_VERSION): from --bin-dir, PATH, the cache, or built from the Go module proxy. */
export async function kindBinary(opts: ProvisionOptions = {}): Promise<string> {
  return (await ensureBinaries(['kind'], opts)).kind;
}
