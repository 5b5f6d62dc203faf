import fs from 'node:fs/promises';
import path from 'node:path';
import { createCA, issueCertificate, type CertificateAuthority, type CertRequest, type KeyPairPem } from './certificates.js';
import { certificateInfo } from './inspect.js';
import { createServiceAccountKeyPair } from './keys.js';
import { loadCA, writePublicFile, writeSecretFile } from './files.js';

export interface ClusterPkiSpec {
  clusterName: string;
  apiServerIPs: string[];
  apiServerDnsNames?: string[];
  /** First address of the service CIDR: in-cluster clients reach the apiserver there. */
  serviceIP: string;
}

export interface ClusterPkiPaths {
  dir: string;
  caCert: string;
  caKey: string;
  apiServerCert: string;
  apiServerKey: string;
  adminCert: string;
  adminKey: string;
  controllerManagerCert: string;
  controllerManagerKey: string;
  serviceAccountKey: string;
  serviceAccountPub: string;
  frontProxyCaCert: string;
  frontProxyCaKey: string;
  frontProxyClientCert: string;
  frontProxyClientKey: string;
}

const BUILTIN_DNS_NAMES = ['localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local'];
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
  };
}

async function exists(file: string): Promise<boolean> {
  return fs.access(file).then(
    () => true,
    () => false,
  );
}

async function writePair(certFile: string, keyFile: string, pair: KeyPairPem): Promise<void> {
  // Key first: a cert without its key is useless, a key without its cert is re-issued next time.
  await writeSecretFile(keyFile, pair.keyPem);
  await writePublicFile(certFile, pair.certPem);
}

async function ensureCA(certFile: string, keyFile: string, commonName: string): Promise<{ ca: CertificateAuthority; renewed: boolean }> {
  if ((await exists(certFile)) && (await exists(keyFile))) return { ca: await loadCA(certFile, keyFile), renewed: false };
  const ca = await createCA(commonName);
  await writePair(certFile, keyFile, ca);
  return { ca, renewed: true };
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && [...a].sort().join('\n') === [...b].sort().join('\n');
}

async function leafIsCurrent(certFile: string, keyFile: string, ca: CertificateAuthority, req: CertRequest): Promise<boolean> {
  if (!(await exists(certFile)) || !(await exists(keyFile))) return false;
  const info = certificateInfo(await fs.readFile(certFile, 'utf8'));
  const caInfo = certificateInfo(ca.certPem);
  return (
    info.issuer === caInfo.subject &&
    info.commonName === req.commonName &&
    sameSet(info.organizations, req.organizations ?? []) &&
    sameSet(info.dnsNames, req.dnsNames ?? []) &&
    sameSet(info.ipAddresses, req.ipAddresses ?? []) &&
    info.notAfter.getTime() - Date.now() > RENEW_BEFORE_MS
  );
}

async function ensureLeaf(certFile: string, keyFile: string, ca: CertificateAuthority, caRenewed: boolean, req: CertRequest): Promise<void> {
  if (!caRenewed && (await leafIsCurrent(certFile, keyFile, ca, req))) return;
  await writePair(certFile, keyFile, await issueCertificate(ca, req));
}

/**
 * Creates what a cluster's control plane needs, keeping whatever is already
 * there and still right: a second call changes nothing; a changed address
 * re-issues only the serving certificate; a lost CA re-issues its leaves.
 */
export async function ensureClusterPki(dir: string, spec: ClusterPkiSpec): Promise<ClusterPkiPaths> {
  const paths = clusterPkiPaths(dir);
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  await fs.chmod(dir, 0o700);
  const cluster = await ensureCA(paths.caCert, paths.caKey, `ocm-lab ${spec.clusterName} CA`);
  const frontProxy = await ensureCA(paths.frontProxyCaCert, paths.frontProxyCaKey, `ocm-lab ${spec.clusterName} front-proxy CA`);
  await Promise.all([
    ensureLeaf(paths.apiServerCert, paths.apiServerKey, cluster.ca, cluster.renewed, {
      commonName: 'kube-apiserver',
      dnsNames: [...new Set([...BUILTIN_DNS_NAMES, ...(spec.apiServerDnsNames ?? [])])],
      ipAddresses: [...new Set([...spec.apiServerIPs, spec.serviceIP])],
      usages: ['server'],
    }),
    ensureLeaf(paths.adminCert, paths.adminKey, cluster.ca, cluster.renewed, {
      commonName: 'kubernetes-admin',
      organizations: ['system:masters'],
      usages: ['client'],
    }),
    ensureLeaf(paths.controllerManagerCert, paths.controllerManagerKey, cluster.ca, cluster.renewed, {
      commonName: 'system:kube-controller-manager',
      usages: ['client'],
    }),
    ensureLeaf(paths.frontProxyClientCert, paths.frontProxyClientKey, frontProxy.ca, frontProxy.renewed, {
      commonName: 'front-proxy-client',
      usages: ['client'],
    }),
  ]);
  if (!(await exists(paths.serviceAccountKey)) || !(await exists(paths.serviceAccountPub))) {
    const sa = await createServiceAccountKeyPair();
    await writeSecretFile(paths.serviceAccountKey, sa.privateKeyPem);
    await writePublicFile(paths.serviceAccountPub, sa.publicKeyPem);
  }
  return paths;
}

/** A client credential signed by a cluster CA (nodes, schedulers, agents). */
export async function issueClientCertFromFiles(caCertFile: string, caKeyFile: string, commonName: string, organizations?: string[]): Promise<KeyPairPem> {
  return issueCertificate(await loadCA(caCertFile, caKeyFile), { commonName, organizations, usages: ['client'] });
}
