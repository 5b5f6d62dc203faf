import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** Runs `fn` with $OCM_LAB_HOME set to a fresh temporary directory, removed (and the variable restored) afterwards. */
export async function withBenchLabHome<T>(fn: (home: string) => Promise<T>): Promise<T> {
  const home = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-bench-'));
  const previous = process.env.OCM_LAB_HOME;
  process.env.OCM_LAB_HOME = home;
  try {
    return await fn(home);
  } finally {
    if (previous === undefined) delete process.env.OCM_LAB_HOME;
    else process.env.OCM_LAB_HOME = previous;
    await fs.rm(home, { recursive: true, force: true });
  }
}
