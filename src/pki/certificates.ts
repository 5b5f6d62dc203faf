import 'reflect-metadata';
import crypto, { webcrypto } from 'node:crypto';
import net from 'node:net';
import * as x509 from '@peculiar/x509';
import { InvalidInputError } from '../errors.js';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

export interface KeyPairPem {
  certPem: string;
  keyPem: string;
}
export type CertificateAuthority = KeyPairPem;

export interface CertRequest {
  commonName: string;
  /** Subject O= entries: Kubernetes reads them as groups. */
  organizations?: string[];
  dnsNames?: string[];
  ipAddresses?: string[];
  usages: ('server' | 'client')[];
  validityDays?: number;
}

const EC_KEY = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGNING = { name: 'ECDSA', hash: 'SHA-256' } as const;
const DAY_MS = 24 * 60 * 60 * 1000;
// Clocks of the components may be a little behind ours.
const BACKDATE_MS = 5 * 60 * 1000;

async function generateKeys(): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(EC_KEY, true, ['sign', 'verify'])) as CryptoKeyPair;
}

async function privateKeyPem(key: CryptoKey): Promise<string> {
  const der = await webcrypto.subtle.exportKey('pkcs8', key);
  return x509.PemConverter.encode(der, 'PRIVATE KEY');
}

async function importPrivateKey(pem: string): Promise<CryptoKey> {
  const keyObject = crypto.createPrivateKey(pem);
  const der = keyObject.export({ format: 'der', type: 'pkcs8' });
  if (keyObject.asymmetricKeyType !== 'ec') {
    throw new InvalidInputError(`only ECDSA CA keys are supported (got ${String(keyObject.asymmetricKeyType)})`);
  }
  return (await webcrypto.subtle.importKey('pkcs8', der, EC_KEY, true, ['sign'])) as CryptoKey;
}

function serialNumber(): string {
  const bytes = crypto.randomBytes(16);
  bytes[0] = (bytes[0] ?? 0) & 0x7f; // positive
  return bytes.toString('hex');
}

function escapeDnValue(value: string): string {
  return value.replace(/([,+"\\<>;=])/g, '\\$1');
}

function subjectName(commonName: string, organizations: string[] = []): string {
  return [...organizations.map((o) => `O=${escapeDnValue(o)}`), `CN=${escapeDnValue(commonName)}`].join(', ');
}

export async function createCA(commonName: string, opts: { validityDays?: number } = {}): Promise<CertificateAuthority> {
  if (!commonName) throw new InvalidInputError('a CA needs a non-empty common name');
  const keys = await generateKeys();
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: subjectName(commonName),
    notBefore: new Date(now - BACKDATE_MS),
    notAfter: new Date(now + (opts.validityDays ?? 3650) * DAY_MS),
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

function checkRequest(req: CertRequest): void {
  if (!req.commonName) throw new InvalidInputError('a certificate needs a non-empty commonName');
  if (!req.usages.length) throw new InvalidInputError(`certificate ${req.commonName}: usages must name 'server', 'client' or both`);
  for (const ip of req.ipAddresses ?? []) {
    if (!net.isIP(ip)) throw new InvalidInputError(`certificate ${req.commonName}: '${ip}' in ipAddresses is not an IP address`);
  }
  for (const dns of req.dnsNames ?? []) {
    if (!/^(\*\.)?[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/i.test(dns)) {
      throw new InvalidInputError(`certificate ${req.commonName}: '${dns}' in dnsNames is not a DNS name`);
    }
  }
}

export async function issueCertificate(ca: CertificateAuthority, req: CertRequest): Promise<KeyPairPem> {
  checkRequest(req);
  const caCert = new x509.X509Certificate(ca.certPem);
  const caKey = await importPrivateKey(ca.keyPem);
  const keys = await generateKeys();
  const now = Date.now();
  const sans = [...(req.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })), ...(req.ipAddresses ?? []).map((value) => ({ type: 'ip' as const, value }))];
  const ekus = req.usages.map((u) => (u === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth));
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: subjectName(req.commonName, req.organizations),
    issuer: caCert.subject,
    notBefore: new Date(now - BACKDATE_MS),
    notAfter: new Date(Math.min(now + (req.validityDays ?? 365) * DAY_MS, caCert.notAfter.getTime())),
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

/** ServiceAccount token signing keys: PKCS#8 private key and SPKI public key. */
export async function createServiceAccountKeyPair(): Promise<{ privateKeyPem: string; publicKeyPem: string }> {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return {
    privateKeyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    publicKeyPem: publicKey.export({ format: 'pem', type: 'spki' }).toString(),
  };
}

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

export function certificateInfo(certPem: string): CertificateInfo {
  const cert = new x509.X509Certificate(certPem);
  const san = cert.getExtension(x509.SubjectAlternativeNameExtension);
  const names = san?.names.toJSON() ?? [];
  const basic = cert.getExtension(x509.BasicConstraintsExtension);
  const attr = (type: string) => cert.subjectName.getField(type);
  return {
    subject: cert.subject,
    issuer: cert.issuer,
    commonName: attr('CN')[0] ?? '',
    organizations: attr('O'),
    notBefore: cert.notBefore,
    notAfter: cert.notAfter,
    dnsNames: names.filter((n) => n.type === 'dns').map((n) => n.value),
    ipAddresses: names.filter((n) => n.type === 'ip').map((n) => n.value),
    isCA: basic?.ca ?? false,
  };
}
