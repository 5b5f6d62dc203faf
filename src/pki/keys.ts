import crypto, { webcrypto } from 'node:crypto';
import { InvalidInputError } from '../errors.js';
import { x509 } from './x509.js';

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

/** ECDSA P-256: quick to generate, accepted by Go TLS (kube-apiserver, etcd) and grpc-js. */
const EC_KEY = { name: 'ECDSA', namedCurve: 'P-256' } as const;
export const SIGNING = { name: 'ECDSA', hash: 'SHA-256' } as const;

export async function generateKeys(): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(EC_KEY, true, ['sign', 'verify'])) as CryptoKeyPair;
}

export async function privateKeyPem(key: CryptoKey): Promise<string> {
  const der = await webcrypto.subtle.exportKey('pkcs8', key);
  return x509.PemConverter.encode(der, 'PRIVATE KEY');
}

function parsePrivateKey(pem: string, what: string): crypto.KeyObject {
  try {
    return crypto.createPrivateKey(pem);
  } catch (err) {
    throw new InvalidInputError(`${what} is not a PEM private key (${(err as Error).message})`, { cause: err });
  }
}

/** A PEM private key (PKCS#8 or SEC1) as a WebCrypto signing key; only ECDSA P-256 is supported. */
export async function importSigningKey(pem: string, what: string): Promise<CryptoKey> {
  const keyObject = parsePrivateKey(pem, what);
  const curve = keyObject.asymmetricKeyDetails?.namedCurve;
  if (keyObject.asymmetricKeyType !== 'ec' || curve !== 'prime256v1') {
    throw new InvalidInputError(`${what} must be an ECDSA P-256 key (got ${String(keyObject.asymmetricKeyType)}${curve ? ` ${curve}` : ''})`, {
      hint: 'create CAs with createCA() or ensureClusterPki()',
    });
  }
  const der = keyObject.export({ format: 'der', type: 'pkcs8' });
  return (await webcrypto.subtle.importKey('pkcs8', der, EC_KEY, true, ['sign'])) as CryptoKey;
}

/** True when `keyPem` is the private half of the public key in `certPem` (both parse). */
export function keyMatchesCertificate(certPem: string | crypto.X509Certificate, keyPem: string): boolean {
  try {
    const cert = typeof certPem === 'string' ? new crypto.X509Certificate(certPem) : certPem;
    return cert.checkPrivateKey(crypto.createPrivateKey(keyPem));
  } catch {
    return false;
  }
}

/** True when `publicKeyPem` (SPKI) is the public half of `privateKeyPem`. */
export function publicKeyMatches(privateKeyPem: string, publicKeyPem: string): boolean {
  try {
    const derived = crypto.createPublicKey(crypto.createPrivateKey(privateKeyPem)).export({ format: 'der', type: 'spki' });
    return derived.equals(crypto.createPublicKey(publicKeyPem).export({ format: 'der', type: 'spki' }));
  } catch {
    return false;
  }
}

/** The SPKI "PUBLIC KEY" PEM of a private key. */
export function publicKeyPemOf(privateKeyPem: string): string {
  return crypto.createPublicKey(parsePrivateKey(privateKeyPem, 'private key')).export({ format: 'pem', type: 'spki' }).toString();
}

/** ServiceAccount token signing keys (ES256): PKCS#8 private key and SPKI public key. */
export async function createServiceAccountKeyPair(): Promise<{ privateKeyPem: string; publicKeyPem: string }> {
  const keys = await generateKeys();
  const key = await privateKeyPem(keys.privateKey);
  // Spelled exactly as ensureClusterPki re-derives it, so a restored sa.pub is byte-identical.
  return { privateKeyPem: key, publicKeyPem: publicKeyPemOf(key) };
}
