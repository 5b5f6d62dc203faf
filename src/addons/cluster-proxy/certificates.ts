import crypto from 'node:crypto';
import type { KubeClient } from '../../kube/client.js';
import { createCA, issueCertificate, isSignedBy, type CertificateAuthority, type KeyPairPem } from '../../pki/index.js';
import { canonicalIp } from '../../pki/names.js';
import { ADDON_MANAGER_NAMESPACE } from '../framework/names.js';
import { collectionPath, fromBase64, getOrNull, type KubeObject, objectPath, toBase64 } from '../../kube/objects.js';
import { ENTRYPOINT_SERVICE, PROXY_NAMESPACE, SECRETS } from './constants.js';

interface Secret extends KubeObject {
  data?: Record<string, string>;
}

/**
 * Lifetimes as upstream cluster-proxy's: the self-signed CA lasts ten years; every
 * certificate it signs (proxy-server, agent-server, proxy-client and each cluster's
 * proxy-agent client certificate) 180 days, renewed once less than a fifth of its
 * lifetime is left.
 */
export const CERTIFICATE_LIFETIMES = { signerCaDays: 3650, leafDays: 180, renewWhenLeft: 1 / 5 } as const;

/** When a certificate valid from `notBefore` to `notAfter` is renewed. */
export function renewalTime(notBefore: Date, notAfter: Date): Date {
  return new Date(notAfter.getTime() - CERTIFICATE_LIFETIMES.renewWhenLeft * (notAfter.getTime() - notBefore.getTime()));
}

/**
 * The names a proxy-server certificate must carry: the address agents dial (none while a load balancer has none), the in-cluster
 * Service names and `spec.authentication.signer.selfSigned.additionalSANs` (each a
 * hostname or an IP address).
 */
export function proxyServerNames(entrypointHost: string | null, additionalSANs: string[] = []): { dnsNames: string[]; ipAddresses: string[] } {
  const dns = [ENTRYPOINT_SERVICE, `${ENTRYPOINT_SERVICE}.${PROXY_NAMESPACE}`, `${ENTRYPOINT_SERVICE}.${PROXY_NAMESPACE}.svc`, 'localhost'];
  const ips = ['127.0.0.1'];
  for (const name of [entrypointHost ?? '', ...additionalSANs].map((s) => s.trim()).filter(Boolean)) {
    const ip = canonicalIp(name);
    const [list, value] = ip ? [ips, ip] : [dns, name];
    if (!list.includes(value)) list.push(value);
  }
  return { dnsNames: dns, ipAddresses: ips };
}

function stillGood(pair: KeyPairPem, ca: CertificateAuthority, names?: { dnsNames: string[]; ipAddresses: string[] }): boolean {
  try {
    const cert = new crypto.X509Certificate(pair.certPem);
    if (!isSignedBy(cert, ca.certPem)) return false;
    if (Date.now() >= renewalTime(new Date(cert.validFrom), new Date(cert.validTo)).getTime()) return false;
    if (!names) return true;
    const san = cert.subjectAltName ?? '';
    return names.dnsNames.every((d) => san.includes(`DNS:${d}`)) && names.ipAddresses.every((ip) => san.includes(`IP Address:${ip}`));
  } catch {
    return false;
  }
}

type OwnerReference = NonNullable<KubeObject['metadata']['ownerReferences']>[number];

/** The owner references with `owner` among them (by uid). */
function withOwner(current: OwnerReference[] | undefined, owner: OwnerReference | undefined): OwnerReference[] | undefined {
  if (!owner || current?.some((r) => r.uid === owner.uid)) return current;
  return [...(current ?? []), owner];
}

async function writeSecret(
  hub: KubeClient,
  namespace: string,
  name: string,
  data: Record<string, string>,
  existing: Secret | null,
  labels: Record<string, string> = {},
  owner?: OwnerReference,
): Promise<void> {
  const ownerReferences = withOwner(existing?.metadata.ownerReferences, owner);
  const body: Secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      ...(existing?.metadata ?? {}),
      name,
      namespace,
      labels: { ...existing?.metadata.labels, ...labels },
      ...(ownerReferences ? { ownerReferences } : {}),
    },
    type: name === SECRETS.ca ? 'Opaque' : 'kubernetes.io/tls',
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, toBase64(v)])),
  };
  if (existing) await hub.put(objectPath(body), body);
  else await hub.post(collectionPath('v1', 'Secret', namespace), body);
}

async function readPair(hub: KubeClient, namespace: string, name: string): Promise<{ secret: Secret | null; pair: KeyPairPem }> {
  const secret = await getOrNull<Secret>(hub, objectPath({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace } }));
  return { secret, pair: { certPem: fromBase64(secret?.data?.['tls.crt']), keyPem: fromBase64(secret?.data?.['tls.key']) } };
}

/** The self-signed signer CA (upstream's `authentication.signer.type: SelfSigned`), created once. */
export async function ensureSignerCA(hub: KubeClient): Promise<CertificateAuthority> {
  const { secret, pair } = await readPair(hub, ADDON_MANAGER_NAMESPACE, SECRETS.signer);
  if (pair.certPem && pair.keyPem) return pair;
  const ca = await createCA('cluster-proxy-signer', { validityDays: CERTIFICATE_LIFETIMES.signerCaDays });
  await writeSecret(hub, ADDON_MANAGER_NAMESPACE, SECRETS.signer, { 'tls.crt': ca.certPem, 'tls.key': ca.keyPem }, secret);
  return ca;
}

/**
 * A certificate Secret in `namespace`, (re)issued when missing, from another CA, near expiry or lacking a name;
 * with `owner`, the Secret is that object's dependent (garbage-collected when it goes).
 */
export async function ensureCertificateSecret(
  hub: KubeClient,
  ca: CertificateAuthority,
  namespace: string,
  name: string,
  request: { commonName: string; usages: ('server' | 'client')[]; dnsNames?: string[]; ipAddresses?: string[] },
  labels: Record<string, string> = {},
  owner?: OwnerReference,
): Promise<KeyPairPem & { issued: boolean }> {
  const { secret, pair } = await readPair(hub, namespace, name);
  const names = request.usages.includes('server') ? { dnsNames: request.dnsNames ?? [], ipAddresses: request.ipAddresses ?? [] } : undefined;
  if (pair.certPem && pair.keyPem && stillGood(pair, ca, names)) {
    // A Secret written before it had an owner gets one, so it still goes with that owner.
    const ownerReferences = withOwner(secret?.metadata.ownerReferences, owner);
    if (secret && ownerReferences !== secret.metadata.ownerReferences)
      await hub.put(objectPath(secret), { ...secret, metadata: { ...secret.metadata, ownerReferences } });
    return { ...pair, issued: false };
  }
  const issued = await issueCertificate(ca, { ...request, validityDays: CERTIFICATE_LIFETIMES.leafDays });
  await writeSecret(hub, namespace, name, { 'tls.crt': issued.certPem, 'tls.key': issued.keyPem, 'ca.crt': ca.certPem }, secret, labels, owner);
  return { ...issued, issued: true };
}

/** `proxy-server-ca`: the CA certificate alone, for whoever verifies the proxy-server. */
export async function ensureCaSecret(hub: KubeClient, ca: CertificateAuthority): Promise<void> {
  const existing = await getOrNull<Secret>(hub, objectPath({ apiVersion: 'v1', kind: 'Secret', metadata: { name: SECRETS.ca, namespace: PROXY_NAMESPACE } }));
  if (fromBase64(existing?.data?.['ca.crt']) === ca.certPem) return;
  await writeSecret(hub, PROXY_NAMESPACE, SECRETS.ca, { 'ca.crt': ca.certPem }, existing);
}
