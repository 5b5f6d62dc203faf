import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

export interface AtomicWriteOptions {
  /** Mode of directories created on the way (default 0700). */
  dirMode?: number;
  /** chown the file to this user and group before it appears. */
  owner?: { uid: number; gid: number } | undefined;
}

/**
 * Writes a file whole or not at all (temp file in the same directory, then rename), with `mode`: a reader sees the old
 * file or the new one, never half of it.
 */
export async function writeFileAtomic(file: string, contents: string | Uint8Array, mode: number, options: AtomicWriteOptions = {}): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true, mode: options.dirMode ?? 0o700 });
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${crypto.randomBytes(4).toString('hex')}.tmp`);
  try {
    await fs.writeFile(tmp, contents, { mode });
    await fs.chmod(tmp, mode);
    if (options.owner) await fs.chown(tmp, options.owner.uid, options.owner.gid);
    await fs.rename(tmp, file);
  } catch (err) {
    await fs.rm(tmp, { force: true });
    throw err;
  }
}
