import fs from 'node:fs/promises';
import path from 'node:path';
import { createCA, issueCertificate } from '../../../src/pki/index.js';
import { FILE_HOSTS, REGISTRY_HOSTS, type WorldAddresses } from './names.js';

export interface WorldCertificates {
  /** The test CA alone: the namespace's system bundle, NODE_EXTRA_CA_CERTS and SSL_CERT_FILE. */
  caFile: string;
  registry: { certFile: string; keyFile: string };
  /** Kept in memory: the file server is this process's own. */
  files: { certPem: string; keyPem: string };
}

/** A throw-away CA and one server certificate per server, naming every host that server answers as. */
export async function makeCertificates(dir: string, addresses: WorldAddresses): Promise<WorldCertificates> {
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const ca = await createCA('ocm-lab connected-world test CA', { validityDays: 2 });
  const serverFor = (hosts: readonly string[], address: string) =>
    issueCertificate(ca, { commonName: hosts[0] as string, dnsNames: [...hosts], ipAddresses: [address], usages: ['server'], validityDays: 1 });
  const registry = await serverFor(REGISTRY_HOSTS, addresses.registry);
  const files = await serverFor(FILE_HOSTS, addresses.files);
  const file = (name: string) => path.join(dir, name);
  await fs.writeFile(file('ca.crt'), ca.certPem, { mode: 0o644 });
  await fs.writeFile(file('registry.crt'), registry.certPem, { mode: 0o644 });
  await fs.writeFile(file('registry.key'), registry.keyPem, { mode: 0o600 });
  return {
    caFile: file('ca.crt'),
    registry: { certFile: file('registry.crt'), keyFile: file('registry.key') },
    files: { certPem: files.certPem, keyPem: files.keyPem },
  };
}
