import crypto from 'node:crypto';
import { InvalidInputError } from '../errors.js';
import { parseCertificate } from './inspect.js';
import { generateKeys, importSigningKey, keyMatchesCertificate, privateKeyPem, SIGNING } from './keys.js';
import { canonicalIp, isDnsName } from './names.js';
import { x509 } from './x509.js';

export interface KeyPairPem {
  certPem: string;
  keyPem: string;
}
export type CertificateAuthority = KeyPairPem;

type CertUsage = 'server' | 'client';

export interface CertRequest {
  commonName: string;
  /** Subject O= entries: Kubernetes reads them as groups. */
  organizations?: string[];
  dnsNames?: string[];
  /** IPv4 or IPv6. */
  ipAddresses?: string[];
  usages: CertUsage[];
  validityDays?: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;
// Clocks of the components may be a little behind ours.
const BACKDATE_MS = 5 * 60 * 1000;

function serialNumber(): string {
  const bytes = crypto.randomBytes(16);
  bytes[0] = ((bytes[0] ?? 0) & 0x7f) | 0x01; // positive and never zero (Go rejects both)
  return bytes.toString('hex');
}

/** Each organization its own RDN, then CN; a JSON name needs no DN-string escaping. */
function subjectName(commonName: string, organizations: readonly string[] = []): x509.JsonName {
  return [...organizations.map((o) => ({ O: [o] })), { CN: [commonName] }];
}

function checkValidityDays(what: string, days: number | undefined): void {
  if (days !== undefined && !(Number.isInteger(days) && days > 0)) {
    throw new InvalidInputError(`${what}: validityDays must be a positive whole number of days (got ${String(days)})`);
  }
}

function validityPeriod(days: number, notAfterLimit?: Date): { notBefore: Date; notAfter: Date } {
  const now = Date.now();
  const notAfter = now + days * DAY_MS;
  return { notBefore: new Date(now - BACKDATE_MS), notAfter: new Date(notAfterLimit ? Math.min(notAfter, notAfterLimit.getTime()) : notAfter) };
}

export async function createCA(commonName: string, opts: { validityDays?: number } = {}): Promise<CertificateAuthority> {
  if (!commonName?.trim()) throw new InvalidInputError('createCA: commonName must not be empty');
  checkValidityDays(`CA ${commonName}`, opts.validityDays);
  const keys = await generateKeys();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: subjectName(commonName),
    ...validityPeriod(opts.validityDays ?? 3650),
    keys,
    signingAlgorithm: SIGNING,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certPem: cert.toString('pem'), keyPem: await privateKeyPem(keys.privateKey) };
}

/** The request with IPs in canonical spelling and duplicates removed; throws on anything malformed. */
function normalizeRequest(req: CertRequest): CertRequest & { dnsNames: string[]; ipAddresses: string[] } {
  const cn = req.commonName;
  if (typeof cn !== 'string' || !cn.trim()) throw new InvalidInputError('certificate request: commonName must not be empty');
  const where = `certificate ${cn}`;
  const usages = req.usages ?? [];
  if (!usages.length) throw new InvalidInputError(`${where}: usages must name 'server', 'client' or both`);
  for (const u of usages) {
    if (u !== 'server' && u !== 'client') throw new InvalidInputError(`${where}: unknown usage '${String(u)}' (use 'server' or 'client')`);
  }
  for (const o of req.organizations ?? []) {
    if (!o.trim()) throw new InvalidInputError(`${where}: organizations must not contain empty names`);
  }
  checkValidityDays(where, req.validityDays);
  const ipAddresses = (req.ipAddresses ?? []).map((ip) => {
    const canonical = canonicalIp(ip);
    if (canonical === undefined) throw new InvalidInputError(`${where}: '${ip}' in ipAddresses is not an IPv4 or IPv6 address`);
    return canonical;
  });
  for (const dns of req.dnsNames ?? []) {
    if (!isDnsName(dns)) throw new InvalidInputError(`${where}: '${dns}' in dnsNames is not a DNS name`, { hint: 'put IP addresses in ipAddresses' });
  }
  return { ...req, usages: [...new Set(usages)], dnsNames: [...new Set(req.dnsNames ?? [])], ipAddresses: [...new Set(ipAddresses)] };
}

function checkAuthority(ca: CertificateAuthority): x509.X509Certificate {
  const caCert = parseCertificate(ca.certPem, 'CA certificate');
  if (!caCert.getExtension(x509.BasicConstraintsExtension)?.ca) {
    throw new InvalidInputError(`CA certificate ${caCert.subject} is not a CA (basicConstraints CA:FALSE or missing)`);
  }
  if (caCert.notAfter.getTime() <= Date.now()) {
    throw new InvalidInputError(`CA certificate ${caCert.subject} expired on ${caCert.notAfter.toISOString()}`, { hint: 'create a new CA' });
  }
  return caCert;
}

export async function issueCertificate(ca: CertificateAuthority, req: CertRequest): Promise<KeyPairPem> {
  const r = normalizeRequest(req);
  const caCert = checkAuthority(ca);
  const caKey = await importSigningKey(ca.keyPem, `CA key of ${caCert.subject}`);
  if (!keyMatchesCertificate(ca.certPem, ca.keyPem)) {
    throw new InvalidInputError(`CA key does not belong to CA certificate ${caCert.subject}`);
  }
  const keys = await generateKeys();
  const sans = [...r.dnsNames.map((value) => ({ type: 'dns' as const, value })), ...r.ipAddresses.map((value) => ({ type: 'ip' as const, value }))];
  const ekus = r.usages.map((u) => (u === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth));
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: subjectName(r.commonName, r.organizations),
    // The CA's own encoded name, so the issuer bytes equal the CA subject bytes (Go matches them byte for byte).
    issuer: caCert.subjectName,
    // A leaf never outlives its CA.
    ...validityPeriod(r.validityDays ?? 365, caCert.notAfter),
    publicKey: keys.publicKey,
    signingKey: caKey,
    signingAlgorithm: SIGNING,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension(ekus),
      ...(sans.length ? [new x509.SubjectAlternativeNameExtension(sans)] : []),
      await x509.AuthorityKeyIdentifierExtension.create(caCert),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certPem: cert.toString('pem'), keyPem: await privateKeyPem(keys.privateKey) };
}
