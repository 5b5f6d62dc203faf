import crypto from 'node:crypto';
import { InvalidInputError } from '../errors.js';
import { x509 } from './x509.js';

export interface CertificateInfo {
  subject: string;
  issuer: string;
  commonName: string;
  organizations: string[];
  notBefore: Date;
  notAfter: Date;
  dnsNames: string[];
  ipAddresses: string[];
  isCA: boolean;
}

export function parseCertificate(certPem: string, what = 'certificate'): x509.X509Certificate {
  try {
    return new x509.X509Certificate(certPem);
  } catch (err) {
    throw new InvalidInputError(`${what} is not a PEM X.509 certificate (${(err as Error).message})`, { cause: err });
  }
}

export function certificateInfo(certPem: string): CertificateInfo {
  const cert = parseCertificate(certPem);
  const names = cert.getExtension(x509.SubjectAlternativeNameExtension)?.names.toJSON() ?? [];
  const field = (type: string) => cert.subjectName.getField(type);
  return {
    subject: cert.subject,
    issuer: cert.issuer,
    commonName: field('CN')[0] ?? '',
    organizations: field('O'),
    notBefore: cert.notBefore,
    notAfter: cert.notAfter,
    dnsNames: names.filter((n) => n.type === 'dns').map((n) => n.value),
    ipAddresses: names.filter((n) => n.type === 'ip').map((n) => n.value),
    isCA: cert.getExtension(x509.BasicConstraintsExtension)?.ca ?? false,
  };
}

// The two checks below run on every idempotent ensureClusterPki call: Node's native
// X509Certificate parses in a fraction of the time @peculiar/x509 takes.

/** 'server' / 'client' for the serverAuth / clientAuth extended key usages the certificate carries. */
export function certificateUsages(certPem: string | crypto.X509Certificate): ('server' | 'client')[] {
  let oids: string[];
  try {
    oids = (typeof certPem === 'string' ? new crypto.X509Certificate(certPem) : certPem).keyUsage ?? [];
  } catch (err) {
    throw new InvalidInputError(`certificate is not a PEM X.509 certificate (${(err as Error).message})`, { cause: err });
  }
  const out: ('server' | 'client')[] = [];
  if (oids.includes(x509.ExtendedKeyUsage.serverAuth)) out.push('server');
  if (oids.includes(x509.ExtendedKeyUsage.clientAuth)) out.push('client');
  return out;
}

/** True when `certPem` names `caCertPem` as its issuer and carries a valid signature by its key. */
export function isSignedBy(certPem: string | crypto.X509Certificate, caCertPem: string | crypto.X509Certificate): boolean {
  try {
    const cert = typeof certPem === 'string' ? new crypto.X509Certificate(certPem) : certPem;
    const ca = typeof caCertPem === 'string' ? new crypto.X509Certificate(caCertPem) : caCertPem;
    return cert.checkIssued(ca) && cert.verify(ca.publicKey);
  } catch {
    return false;
  }
}
