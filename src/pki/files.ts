import fs from 'node:fs/promises';
import { writeFileAtomic } from '../util/atomic-file.js';
import type { CertificateAuthority } from './certificates.js';

/** Keys, tokens, kubeconfigs: written whole or not at all, readable by the owner only. */
export function writeSecretFile(file: string, contents: string): Promise<void> {
  return writeFileAtomic(file, contents, 0o600);
}

export function writePublicFile(file: string, contents: string): Promise<void> {
  return writeFileAtomic(file, contents, 0o644);
}

export async function loadCA(certFile: string, keyFile: string): Promise<CertificateAuthority> {
  const [certPem, keyPem] = await Promise.all([fs.readFile(certFile, 'utf8'), fs.readFile(keyFile, 'utf8')]);
  return { certPem, keyPem };
}
