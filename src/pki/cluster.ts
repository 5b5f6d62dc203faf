import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { InvalidInputError } from '../errors.js';
import { createCA, issueCertificate, type CertificateAuthority, type CertRequest, type KeyPairPem } from './certificates.js';
import { certificateInfo, certificateUsages, isSignedBy } from './inspect.js';
import { createServiceAccountKeyPair, keyMatchesCertificate, publicKeyMatches, publicKeyPemOf } from './keys.js';
import { loadCA, writePublicFile, writeSecretFile } from './files.js';
import { canonicalIp, isDnsName } from './names.js';

export interface ClusterPkiSpec {
  clusterName: string;
  /** Addresses clients use to reach the apiserver (VPC address, 127.0.0.1); the service IP is added. */
  apiServerIPs: string[];
  /** Extra names; localhost and the kubernetes.default.svc family are always included. */
  apiServerDnsNames?: string[];
  /** First address of the service CIDR: in-cluster clients reach the apiserver there. */
  serviceIP: string;
}

export interface ClusterPkiPaths {
  dir: string;
  /** Cluster CA: apiserver --client-ca-file, and kube-controller-manager's CSR signer. */
  caCert: string;
  caKey: string;
  apiServerCert: string;
  apiServerKey: string;
  /** CN=kubernetes-admin, O=system:masters. */
  adminCert: string;
  adminKey: string;
  controllerManagerCert: string;
  controllerManagerKey: string;
  /** --service-account-signing-key-file / --service-account-key-file. */
  serviceAccountKey: string;
  serviceAccountPub: string;
  /** --requestheader-client-ca-file. */
  frontProxyCaCert: string;
  frontProxyCaKey: string;
  /** --proxy-client-cert-file / --proxy-client-key-file. */
  frontProxyClientCert: string;
  frontProxyClientKey: string;
  /** --kubelet-client-certificate / --kubelet-client-key: how the apiserver authenticates to nodelets (logs, exec, port-forward). */
  kubeletClientCert: string;
  kubeletClientKey: string;
}

/** The identity kube-apiserver presents to nodelets; the nodelet's kubelet API admits it. */
const KUBELET_CLIENT_COMMON_NAME = 'kube-apiserver-kubelet-client';

const BUILTIN_DNS_NAMES = ['localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local'];
/** Certificates closer than this to expiry are replaced. */
const RENEW_BEFORE_MS = 30 * 24 * 60 * 60 * 1000;

export function clusterPkiPaths(dir: string): ClusterPkiPaths {
  const p = (f: string) => path.join(dir, f);
  return {
    dir,
    caCert: p('ca.crt'),
    caKey: p('ca.key'),
    apiServerCert: p('apiserver.crt'),
    apiServerKey: p('apiserver.key'),
    adminCert: p('admin.crt'),
    adminKey: p('admin.key'),
    controllerManagerCert: p('controller-manager.crt'),
    controllerManagerKey: p('controller-manager.key'),
    serviceAccountKey: p('sa.key'),
    serviceAccountPub: p('sa.pub'),
    frontProxyCaCert: p('front-proxy-ca.crt'),
    frontProxyCaKey: p('front-proxy-ca.key'),
    frontProxyClientCert: p('front-proxy-client.crt'),
    frontProxyClientKey: p('front-proxy-client.key'),
    kubeletClientCert: p('apiserver-kubelet-client.crt'),
    kubeletClientKey: p('apiserver-kubelet-client.key'),
  };
}

/** Checked before anything is written, so bad input leaves the directory as it was. */
function checkSpec(spec: ClusterPkiSpec): void {
  if (!spec.clusterName?.trim()) throw new InvalidInputError('cluster PKI: clusterName must not be empty');
  const where = `cluster PKI for ${spec.clusterName}`;
  for (const ip of spec.apiServerIPs ?? []) {
    if (canonicalIp(ip) === undefined) throw new InvalidInputError(`${where}: '${ip}' in apiServerIPs is not an IP address`);
  }
  if (canonicalIp(spec.serviceIP ?? '') === undefined) {
    throw new InvalidInputError(`${where}: serviceIP '${String(spec.serviceIP)}' is not an IP address`, {
      hint: 'use the first address of the service CIDR, e.g. 10.96.0.1',
    });
  }
  for (const name of spec.apiServerDnsNames ?? []) {
    if (!isDnsName(name)) throw new InvalidInputError(`${where}: '${name}' in apiServerDnsNames is not a DNS name`);
  }
}

async function readIfExists(file: string): Promise<string | undefined> {
  try {
    return await fs.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

async function writePair(certFile: string, keyFile: string, pair: KeyPairPem): Promise<void> {
  // Key first: after a crash in between, the old cert no longer matches the key and the pair is re-issued.
  await writeSecretFile(keyFile, pair.keyPem);
  await writePublicFile(certFile, pair.certPem);
}

/** An existing pair as found on disk, parsed once: every check of a warm call reuses it. */
interface LoadedPair extends KeyPairPem {
  cert: crypto.X509Certificate;
}

/** A usable existing pair, or undefined when it is missing, unreadable, mismatched or about to expire. */
async function existingPair(certFile: string, keyFile: string): Promise<LoadedPair | undefined> {
  const [certPem, keyPem] = await Promise.all([readIfExists(certFile), readIfExists(keyFile)]);
  if (certPem === undefined || keyPem === undefined) return undefined;
  let cert: crypto.X509Certificate;
  try {
    cert = new crypto.X509Certificate(certPem);
  } catch {
    return undefined;
  }
  if (!keyMatchesCertificate(cert, keyPem) || Date.parse(cert.validTo) - Date.now() <= RENEW_BEFORE_MS) return undefined;
  return { certPem, keyPem, cert };
}

interface Authority {
  ca: CertificateAuthority;
  cert: crypto.X509Certificate;
  created: boolean;
}

async function ensureCA(certFile: string, keyFile: string, commonName: string): Promise<Authority> {
  const existing = await existingPair(certFile, keyFile);
  if (existing?.cert.ca) return { ca: existing, cert: existing.cert, created: false };
  const ca = await createCA(commonName);
  await writePair(certFile, keyFile, ca);
  return { ca, cert: new crypto.X509Certificate(ca.certPem), created: true };
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const sa = new Set(a);
  const sb = new Set(b);
  return sa.size === sb.size && [...sa].every((x) => sb.has(x));
}

function leafIsCurrent(pair: LoadedPair, authority: Authority, req: CertRequest): boolean {
  if (pair.cert.ca || !isSignedBy(pair.cert, authority.cert)) return false;
  const info = certificateInfo(pair.certPem);
  return (
    info.commonName === req.commonName &&
    sameSet(info.organizations, req.organizations ?? []) &&
    sameSet(info.dnsNames, req.dnsNames ?? []) &&
    sameSet(
      info.ipAddresses,
      (req.ipAddresses ?? []).map((ip) => canonicalIp(ip) ?? ip),
    ) &&
    sameSet(certificateUsages(pair.cert), req.usages)
  );
}

async function ensureLeaf(certFile: string, keyFile: string, authority: Authority, req: CertRequest): Promise<void> {
  if (!authority.created) {
    const existing = await existingPair(certFile, keyFile);
    if (existing && leafIsCurrent(existing, authority, req)) return;
  }
  await writePair(certFile, keyFile, await issueCertificate(authority.ca, req));
}

/** Keeps an existing signing key (tokens already issued stay valid); sa.pub always follows sa.key. */
async function ensureServiceAccountKeys(keyFile: string, pubFile: string): Promise<void> {
  const [keyPem, pubPem] = await Promise.all([readIfExists(keyFile), readIfExists(pubFile)]);
  if (keyPem !== undefined) {
    let derived: string | undefined;
    try {
      derived = publicKeyPemOf(keyPem);
    } catch {
      derived = undefined;
    }
    if (derived !== undefined) {
      if (pubPem === undefined || !publicKeyMatches(keyPem, pubPem)) await writePublicFile(pubFile, derived);
      return;
    }
  }
  const sa = await createServiceAccountKeyPair();
  await writeSecretFile(keyFile, sa.privateKeyPem);
  await writePublicFile(pubFile, sa.publicKeyPem);
}

/**
 * Creates what a cluster's control plane needs, keeping whatever is already
 * there and still right: a second call writes nothing; changed addresses
 * re-issue only the serving certificate; a lost or broken CA re-issues every
 * certificate it signed; anything within 30 days of expiry is renewed.
 */
export async function ensureClusterPki(dir: string, spec: ClusterPkiSpec): Promise<ClusterPkiPaths> {
  checkSpec(spec);
  const paths = clusterPkiPaths(dir);
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  await fs.chmod(dir, 0o700);
  const [cluster, frontProxy] = await Promise.all([
    ensureCA(paths.caCert, paths.caKey, `ocm-lab ${spec.clusterName} CA`),
    ensureCA(paths.frontProxyCaCert, paths.frontProxyCaKey, `ocm-lab ${spec.clusterName} front-proxy CA`),
  ]);
  await Promise.all([
    ensureLeaf(paths.apiServerCert, paths.apiServerKey, cluster, {
      commonName: 'kube-apiserver',
      dnsNames: [...new Set([...BUILTIN_DNS_NAMES, ...(spec.apiServerDnsNames ?? [])])],
      ipAddresses: [...new Set([...spec.apiServerIPs, spec.serviceIP].map((ip) => canonicalIp(ip) ?? ip))],
      usages: ['server'],
    }),
    ensureLeaf(paths.adminCert, paths.adminKey, cluster, { commonName: 'kubernetes-admin', organizations: ['system:masters'], usages: ['client'] }),
    ensureLeaf(paths.controllerManagerCert, paths.controllerManagerKey, cluster, { commonName: 'system:kube-controller-manager', usages: ['client'] }),
    ensureLeaf(paths.frontProxyClientCert, paths.frontProxyClientKey, frontProxy, { commonName: 'front-proxy-client', usages: ['client'] }),
    ensureLeaf(paths.kubeletClientCert, paths.kubeletClientKey, cluster, { commonName: KUBELET_CLIENT_COMMON_NAME, usages: ['client'] }),
    ensureServiceAccountKeys(paths.serviceAccountKey, paths.serviceAccountPub),
  ]);
  return paths;
}

/** A client credential signed by a cluster CA (nodes, schedulers, agents); the caller writes it. */
export async function issueClientCertFromFiles(caCertFile: string, caKeyFile: string, commonName: string, organizations?: string[]): Promise<KeyPairPem> {
  return issueCertificate(await loadCA(caCertFile, caKeyFile), { commonName, ...(organizations ? { organizations } : {}), usages: ['client'] });
}
