import fs from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';

/** The newest modification time of any file under `dir` (0 when it is empty or missing). */
async function newestUnder(dir: string): Promise<number> {
  let newest = 0;
  for (const entry of await fs.readdir(dir, { withFileTypes: true, recursive: true }).catch(() => [])) {
    if (!entry.isFile()) continue;
    const st = await fs.stat(path.join(entry.parentPath, entry.name)).catch(() => null);
    if (st && st.mtimeMs > newest) newest = st.mtimeMs;
  }
  return newest;
}

/**
 * Tests that run the built CLI (dist/) need it built from the sources they test: `npx tsc -p tsconfig.json` unless
 * every file of `built` is already newer than every file of src/ (as scripts/bootstrap.sh leaves it). tsc emits even
 * when some other module has a type error (the type check's business): this checks only that `built` is fresh.
 */
export async function freshBuild(built: readonly string[]): Promise<void> {
  const source = await newestUnder('src');
  const times = await Promise.all(
    built.map((f) =>
      fs.stat(f).then(
        (s) => s.mtimeMs,
        () => 0,
      ),
    ),
  );
  if (times.every((t) => t > source)) return;
  const started = Date.now();
  const build = await execa('npx', ['tsc', '-p', 'tsconfig.json'], { reject: false, all: true, timeout: 300_000 });
  const stale: string[] = [];
  for (const f of built) {
    const st = await fs.stat(f).catch(() => null);
    if (!st || st.mtimeMs < started - 1000) stale.push(f);
  }
  if (stale.length)
    throw new Error(`npx tsc -p tsconfig.json did not produce ${stale.join(', ')} (exit ${build.exitCode}):\n${String(build.all).slice(-4000)}`);
}
