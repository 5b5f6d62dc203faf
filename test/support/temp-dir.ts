import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';

/**
 * A directory under the system temp dir (`<prefix>XXXXXX`) for the enclosing describe block, or the file at top level:
 * made before its tests (with `each`: before each test) and removed after them. Read `.path` in hooks and tests only;
 * hooks registered after this call see the directory (vitest runs before-hooks in order, after-hooks in reverse).
 */
export function useTempDir(prefix: string, options: { each?: boolean } = {}): { readonly path: string } {
  let dir: string | undefined;
  const make = async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), prefix));
  };
  const remove = async () => {
    if (dir) await fs.rm(dir, { recursive: true, force: true });
    dir = undefined;
  };
  if (options.each) {
    beforeEach(make);
    afterEach(remove);
  } else {
    beforeAll(make);
    afterAll(remove);
  }
  return {
    get path() {
      if (dir === undefined) throw new Error(`useTempDir('${prefix}'): the directory exists only inside hooks and tests`);
      return dir;
    },
  };
}
