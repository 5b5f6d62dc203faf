import fs from 'node:fs/promises';
import { NotFoundError } from '../errors.js';
import { writeFileAtomic } from '../util/atomic-file.js';
import type { CertificateAuthority } from './certificates.js';

/** Keys, tokens, kubeconfigs: written whole or not at all, readable by the owner only. */
export function writeSecretFile(file: string, contents: string): Promise<void> {
  return writeFileAtomic(file, contents, 0o600);
}

export function writePublicFile(file: string, contents: string): Promise<void> {
  return writeFileAtomic(file, contents, 0o644);
}

async function readPemFile(file: string, what: string): Promise<string> {
  try {
    return await fs.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new NotFoundError(`${what} ${file} does not exist`, { cause: err });
    }
    throw err;
  }
}

/** Reads a CA pair; whether the two belong together is checked when it is used to sign. */
export async function loadCA(certFile: string, keyFile: string): Promise<CertificateAuthority> {
  const [certPem, keyPem] = await Promise.all([readPemFile(certFile, 'CA certificate'), readPemFile(keyFile, 'CA key')]);
  return { certPem, keyPem };
}
