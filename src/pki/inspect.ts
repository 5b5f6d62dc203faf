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

/** 'server' / 'client' for the serverAuth / clientAuth extended key usages the certificate carries. */
export function certificateUsages(certPem: string): ('server' | 'client')[] {
  const eku = parseCertificate(certPem).getExtension(x509.ExtendedKeyUsageExtension);
  const oids = (eku?.usages ?? []).map(String);
  const out: ('server' | 'client')[] = [];
  if (oids.includes(x509.ExtendedKeyUsage.serverAuth)) out.push('server');
  if (oids.includes(x509.ExtendedKeyUsage.clientAuth)) out.push('client');
  return out;
}

/** True when `certPem` carries a valid signature by the key of `caCertPem`. */
export async function isSignedBy(certPem: string, caCertPem: string): Promise<boolean> {
  try {
    const cert = new x509.X509Certificate(certPem);
    const ca = new x509.X509Certificate(caCertPem);
    return await cert.verify({ publicKey: ca.publicKey, signatureOnly: true });
  } catch {
    return false;
  }
}
