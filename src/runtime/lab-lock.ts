import fs from 'node:fs/promises';
import path from 'node:path';
import lockfile from 'proper-lockfile';
import { ConflictError } from '../errors.js';
import { labDir } from '../paths.js';

/** Releases the lab lock; harmless when the lab directory went away under it (`down` removes it). */
export type ReleaseLabLock = () => Promise<void>;

/**
 * Takes the lock of lab `lab` (`<labDir>/.lock`) for one command that changes it
 * (`up`, `down`, `cluster add/remove`), on every runtime. A second command does
 * not wait: it exits 6 with the lock's message.
 */
export async function lockLab(lab: string, options: { ifExists?: boolean } = {}): Promise<ReleaseLabLock> {
  const dir = labDir(lab);
  // `down` of a lab that is not there only sweeps leftovers by name: nothing to lock, and no directory to make.
  if (options.ifExists && !(await fs.stat(dir).catch(() => null))) return async () => undefined;
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(dir, {
      lockfilePath: path.join(dir, '.lock'),
      stale: 30_000,
      retries: 0,
      // The lock's refresh fails once `down` has removed the lab directory under it; the command that holds it goes on.
      onCompromised: () => undefined,
    });
  } catch (err) {
    throw new ConflictError(`another ocm-lab command is working on lab '${lab}' (${dir}/.lock is held)`, {
      hint: 'wait for it to finish, then run the command again',
      cause: err,
    });
  }
  return async () => release().catch(() => undefined);
}
