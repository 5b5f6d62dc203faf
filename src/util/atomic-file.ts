import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

/** Writes a file whole or not at all (temp file in the same directory, then rename), with `mode`. */
export async function writeFileAtomic(file: string, contents: string, mode: number): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${crypto.randomBytes(4).toString('hex')}.tmp`);
  try {
    await fs.writeFile(tmp, contents, { mode });
    await fs.chmod(tmp, mode);
    await fs.rename(tmp, file);
  } catch (err) {
    await fs.rm(tmp, { force: true });
    throw err;
  }
}
