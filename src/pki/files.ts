import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { CertificateAuthority } from './certificates.js';

async function writeAtomic(file: string, contents: string, mode: number): Promise<void> {
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

/** Keys, tokens, kubeconfigs: written whole or not at all, readable by the owner only. */
export function writeSecretFile(file: string, contents: string): Promise<void> {
  return writeAtomic(file, contents, 0o600);
}

export function writePublicFile(file: string, contents: string): Promise<void> {
  return writeAtomic(file, contents, 0o644);
}

export async function loadCA(certFile: string, keyFile: string): Promise<CertificateAuthority> {
  const [certPem, keyPem] = await Promise.all([fs.readFile(certFile, 'utf8'), fs.readFile(keyFile, 'utf8')]);
  return { certPem, keyPem };
}
