import fs from 'node:fs/promises';
import path from 'node:path';
import tls from 'node:tls';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import {
  certificateInfo,
  clusterPkiPaths,
  createCA,
  ensureClusterPki,
  isSignedBy,
  issueCertificate,
  issueClientCertFromFiles,
  keyMatchesCertificate,
  type ClusterPkiSpec,
} from '../../src/pki/index.js';
import { InvalidInputError, NotFoundError } from '../../src/errors.js';
import { useTempDir } from '../support/temp-dir.js';

const ALL_FILES = [
  'admin.crt',
  'admin.key',
  'apiserver-kubelet-client.crt',
  'apiserver-kubelet-client.key',
  'apiserver.crt',
  'apiserver.key',
  'ca.crt',
  'ca.key',
  'controller-manager.crt',
  'controller-manager.key',
  'front-proxy-ca.crt',
  'front-proxy-ca.key',
  'front-proxy-client.crt',
  'front-proxy-client.key',
  'sa.key',
  'sa.pub',
];
const CLUSTER_CA_FILES = [
  'ca.crt',
  'ca.key',
  'apiserver.crt',
  'apiserver.key',
  'admin.crt',
  'admin.key',
  'controller-manager.crt',
  'controller-manager.key',
  'apiserver-kubelet-client.crt',
  'apiserver-kubelet-client.key',
];

const spec: ClusterPkiSpec = { clusterName: 'hub', apiServerIPs: ['10.213.1.10', '127.0.0.1', '::1'], serviceIP: '10.96.0.1' };

interface FileState {
  contents: string;
  mtimeMs: number;
  ino: number;
}
type Snapshot = Record<string, FileState>;

async function snapshot(dir: string): Promise<Snapshot> {
  const out: Snapshot = {};
  for (const f of (await fs.readdir(dir)).sort()) {
    const st = await fs.stat(path.join(dir, f));
    out[f] = { contents: await fs.readFile(path.join(dir, f), 'utf8'), mtimeMs: st.mtimeMs, ino: st.ino };
  }
  return out;
}

function changedFiles(before: Snapshot, after: Snapshot): string[] {
  const names = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...names].filter((f) => before[f]?.contents !== after[f]?.contents).sort();
}

const tmp = useTempDir('ocm-lab-cpki-');
let n = 0;

/** A fresh, fully populated PKI directory per test, so tests do not depend on each other's order. */
async function freshPki(): Promise<{ dir: string; before: Snapshot }> {
  const dir = path.join(tmp.path, `pki-${++n}`);
  await ensureClusterPki(dir, spec);
  return { dir, before: await snapshot(dir) };
}

describe('ensureClusterPki', () => {
  it('creates every file, keys 0600 in a 0700 directory, each cert signed by the right CA', async () => {
    const dir = path.join(tmp.path, 'cold');
    const paths = await ensureClusterPki(dir, spec);
    expect(paths).toEqual(clusterPkiPaths(dir));
    expect((await fs.readdir(dir)).sort()).toEqual(ALL_FILES);
    expect((await fs.stat(dir)).mode & 0o777).toBe(0o700);
    for (const f of ALL_FILES) {
      expect((await fs.stat(path.join(dir, f))).mode & 0o777, f).toBe(f.endsWith('.key') ? 0o600 : 0o644);
    }
    const read = (f: string) => fs.readFile(f, 'utf8');
    const [ca, fpCa] = [await read(paths.caCert), await read(paths.frontProxyCaCert)];
    expect(certificateInfo(ca)).toMatchObject({ isCA: true, commonName: 'ocm-lab hub CA' });
    expect(certificateInfo(fpCa)).toMatchObject({ isCA: true, commonName: 'ocm-lab hub front-proxy CA' });

    const api = certificateInfo(await read(paths.apiServerCert));
    expect(api.commonName).toBe('kube-apiserver');
    expect(api.ipAddresses.sort()).toEqual(['10.213.1.10', '127.0.0.1', '::1', '10.96.0.1'].sort());
    expect(api.dnsNames.sort()).toEqual(
      ['kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local', 'localhost'].sort(),
    );
    expect(certificateInfo(await read(paths.adminCert))).toMatchObject({ commonName: 'kubernetes-admin', organizations: ['system:masters'] });
    expect(certificateInfo(await read(paths.controllerManagerCert))).toMatchObject({ commonName: 'system:kube-controller-manager', organizations: [] });
    expect(certificateInfo(await read(paths.frontProxyClientCert)).commonName).toBe('front-proxy-client');
    expect(certificateInfo(await read(paths.kubeletClientCert))).toMatchObject({ commonName: 'kube-apiserver-kubelet-client', organizations: [] });

    for (const [cert, key, issuer] of [
      [paths.apiServerCert, paths.apiServerKey, ca],
      [paths.adminCert, paths.adminKey, ca],
      [paths.controllerManagerCert, paths.controllerManagerKey, ca],
      [paths.frontProxyClientCert, paths.frontProxyClientKey, fpCa],
    ] as const) {
      const pem = await read(cert);
      expect(keyMatchesCertificate(pem, await read(key)), cert).toBe(true);
      expect(isSignedBy(pem, issuer), cert).toBe(true);
      expect(isSignedBy(pem, issuer === ca ? fpCa : ca), cert).toBe(false);
    }
    const purpose = (cert: string, caFile: string, p: string) =>
      execa('openssl', ['verify', '-x509_strict', '-purpose', p, '-CAfile', caFile, cert], { reject: false });
    expect((await purpose(paths.apiServerCert, paths.caCert, 'sslserver')).exitCode).toBe(0);
    expect((await purpose(paths.adminCert, paths.caCert, 'sslclient')).exitCode).toBe(0);
    expect((await purpose(paths.frontProxyClientCert, paths.frontProxyCaCert, 'sslclient')).exitCode).toBe(0);
    expect((await purpose(paths.frontProxyClientCert, paths.caCert, 'sslclient')).exitCode).not.toBe(0);

    const sa = await execa('openssl', ['pkey', '-in', paths.serviceAccountKey, '-pubout']);
    expect(sa.stdout.trim()).toBe((await read(paths.serviceAccountPub)).trim());
  });

  it('the apiserver cert serves mTLS to the admin cert by service name and by IP', async () => {
    const { dir } = await freshPki();
    const p = clusterPkiPaths(dir);
    const read = (f: string) => fs.readFile(f, 'utf8');
    const srv = tls.createServer(
      { cert: await read(p.apiServerCert), key: await read(p.apiServerKey), ca: await read(p.caCert), requestCert: true, rejectUnauthorized: true },
      (s) => s.end((s.getPeerCertificate().subject as { CN?: string }).CN ?? ''),
    );
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    try {
      const port = (srv.address() as { port: number }).port;
      const [cert, key, ca] = await Promise.all([read(p.adminCert), read(p.adminKey), read(p.caCert)]);
      const connect = (servername?: string) =>
        new Promise<string>((resolve, reject) => {
          const s = tls.connect({ host: '127.0.0.1', port, cert, key, ca, ...(servername ? { servername } : {}) });
          let got = '';
          s.on('data', (d: Buffer) => (got += d.toString()));
          s.on('end', () => resolve(got));
          s.on('error', reject);
        });
      expect(await connect('kubernetes.default.svc')).toBe('kubernetes-admin');
      expect(await connect()).toBe('kubernetes-admin');
    } finally {
      srv.close();
    }
  });

  it('a second call writes nothing: contents, mtimes and inodes unchanged', async () => {
    const { dir, before } = await freshPki();
    await new Promise((r) => setTimeout(r, 20));
    await ensureClusterPki(dir, spec);
    // Same addresses spelled differently and in another order are the same request.
    await ensureClusterPki(dir, { ...spec, apiServerIPs: ['0:0:0:0:0:0:0:1', '127.0.0.1', '10.213.1.10', '10.96.0.1'], apiServerDnsNames: ['localhost'] });
    expect(await snapshot(dir)).toEqual(before);
  });

  it('changed addresses or names re-issue only the apiserver serving cert', async () => {
    const { dir, before } = await freshPki();
    await ensureClusterPki(dir, { ...spec, apiServerIPs: ['10.213.1.11', '127.0.0.1', '::1'] });
    const afterIp = await snapshot(dir);
    expect(changedFiles(before, afterIp)).toEqual(['apiserver.crt', 'apiserver.key']);
    expect(certificateInfo(afterIp['apiserver.crt']!.contents).ipAddresses).toContain('10.213.1.11');
    await ensureClusterPki(dir, { ...spec, apiServerIPs: ['10.213.1.11', '127.0.0.1', '::1'], apiServerDnsNames: ['hub.lab.example'] });
    const afterDns = await snapshot(dir);
    expect(changedFiles(afterIp, afterDns)).toEqual(['apiserver.crt', 'apiserver.key']);
    expect(certificateInfo(afterDns['apiserver.crt']!.contents).dnsNames).toContain('hub.lab.example');
  });

  it('a lost cluster CA re-issues everything it signed, and nothing else', async () => {
    const { dir, before } = await freshPki();
    await fs.rm(path.join(dir, 'ca.crt'));
    await fs.rm(path.join(dir, 'ca.key'));
    await ensureClusterPki(dir, spec);
    const after = await snapshot(dir);
    expect(changedFiles(before, after)).toEqual([...CLUSTER_CA_FILES].sort());
    for (const leaf of ['apiserver.crt', 'admin.crt', 'controller-manager.crt', 'apiserver-kubelet-client.crt']) {
      expect(isSignedBy(after[leaf]!.contents, after['ca.crt']!.contents), leaf).toBe(true);
    }
  });

  it('a lost front-proxy CA key re-issues only the front-proxy pair', async () => {
    const { dir, before } = await freshPki();
    await fs.rm(path.join(dir, 'front-proxy-ca.key'));
    await ensureClusterPki(dir, spec);
    expect(changedFiles(before, await snapshot(dir))).toEqual(['front-proxy-ca.crt', 'front-proxy-ca.key', 'front-proxy-client.crt', 'front-proxy-client.key']);
  });

  it('a leaf left half-written (new key, old cert) or from another CA is re-issued', async () => {
    const { dir, before } = await freshPki();
    const stray = await issueCertificate(await createCA('other'), { commonName: 'kubernetes-admin', organizations: ['system:masters'], usages: ['client'] });
    await fs.writeFile(path.join(dir, 'admin.key'), stray.keyPem); // as if the process died between key and cert
    await fs.writeFile(path.join(dir, 'controller-manager.crt'), stray.certPem);
    await fs.writeFile(path.join(dir, 'controller-manager.key'), stray.keyPem);
    await ensureClusterPki(dir, spec);
    const after = await snapshot(dir);
    expect(changedFiles(before, after)).toEqual(['admin.crt', 'admin.key', 'controller-manager.crt', 'controller-manager.key']);
    expect(keyMatchesCertificate(after['admin.crt']!.contents, after['admin.key']!.contents)).toBe(true);
    expect(certificateInfo(after['controller-manager.crt']!.contents).commonName).toBe('system:kube-controller-manager');
  });

  it('an apiserver cert expiring within 30 days is renewed; one valid for longer is kept', async () => {
    const { dir } = await freshPki();
    const p = clusterPkiPaths(dir);
    const ca = { certPem: await fs.readFile(p.caCert, 'utf8'), keyPem: await fs.readFile(p.caKey, 'utf8') };
    const current = certificateInfo(await fs.readFile(p.apiServerCert, 'utf8'));
    const req = { commonName: 'kube-apiserver', dnsNames: current.dnsNames, ipAddresses: current.ipAddresses, usages: ['server' as const] };
    const longer = await issueCertificate(ca, { ...req, validityDays: 45 });
    await fs.writeFile(p.apiServerCert, longer.certPem);
    await fs.writeFile(p.apiServerKey, longer.keyPem);
    await ensureClusterPki(dir, spec);
    expect(await fs.readFile(p.apiServerCert, 'utf8')).toBe(longer.certPem);
    const expiring = await issueCertificate(ca, { ...req, validityDays: 20 });
    await fs.writeFile(p.apiServerCert, expiring.certPem);
    await fs.writeFile(p.apiServerKey, expiring.keyPem);
    await ensureClusterPki(dir, spec);
    const renewed = certificateInfo(await fs.readFile(p.apiServerCert, 'utf8'));
    expect(renewed.notAfter.getTime() - Date.now()).toBeGreaterThan(300 * 86_400_000);
  });

  it('keeps the service account key; a lost or wrong sa.pub is derived from it again', async () => {
    const { dir, before } = await freshPki();
    await fs.rm(path.join(dir, 'sa.pub'));
    await ensureClusterPki(dir, spec);
    expect(changedFiles(before, await snapshot(dir))).toEqual([]);
    await fs.writeFile(path.join(dir, 'sa.pub'), '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n');
    await ensureClusterPki(dir, spec);
    expect(changedFiles(before, await snapshot(dir))).toEqual([]);
    expect((await fs.stat(path.join(dir, 'sa.pub'))).mode & 0o777).toBe(0o644);
  });

  it('tightens a directory with looser permissions and leaves no temp files', async () => {
    const { dir } = await freshPki();
    await fs.chmod(dir, 0o755);
    await fs.rm(path.join(dir, 'admin.crt'));
    await ensureClusterPki(dir, spec);
    expect((await fs.stat(dir)).mode & 0o777).toBe(0o700);
    expect((await fs.readdir(dir)).sort()).toEqual(ALL_FILES);
  });

  it('bad input names the value and writes nothing', async () => {
    const dir = path.join(tmp.path, 'bad');
    const cases: [ClusterPkiSpec, RegExp][] = [
      [{ ...spec, apiServerIPs: ['10.213.1.300'] }, /'10\.213\.1\.300' in apiServerIPs/],
      [{ ...spec, serviceIP: '10.96.0.0/12' }, /serviceIP '10\.96\.0\.0\/12'/],
      [{ ...spec, apiServerDnsNames: ['bad name'] }, /'bad name' in apiServerDnsNames/],
      [{ ...spec, clusterName: '' }, /clusterName/],
    ];
    for (const [bad, message] of cases) {
      const err = await ensureClusterPki(dir, bad).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InvalidInputError);
      expect((err as Error).message).toMatch(message);
    }
    await expect(fs.stat(dir)).rejects.toMatchObject({ code: 'ENOENT' });
    const { dir: existing, before } = await freshPki();
    await expect(ensureClusterPki(existing, { ...spec, serviceIP: 'nope' })).rejects.toBeInstanceOf(InvalidInputError);
    expect(await snapshot(existing)).toEqual(before);
  });
});

describe('issueClientCertFromFiles', () => {
  it('issues a client cert signed by the cluster CA, and names a missing CA file', async () => {
    const { dir } = await freshPki();
    const p = clusterPkiPaths(dir);
    const node = await issueClientCertFromFiles(p.caCert, p.caKey, 'system:node:m1', ['system:nodes']);
    expect(certificateInfo(node.certPem)).toMatchObject({ commonName: 'system:node:m1', organizations: ['system:nodes'], isCA: false });
    expect(isSignedBy(node.certPem, await fs.readFile(p.caCert, 'utf8'))).toBe(true);
    const plain = await issueClientCertFromFiles(p.caCert, p.caKey, 'system:kube-scheduler');
    expect(certificateInfo(plain.certPem).organizations).toEqual([]);
    const err = await issueClientCertFromFiles(p.caCert, path.join(dir, 'nope.key'), 'x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect((err as Error).message).toContain(path.join(dir, 'nope.key'));
  });
});
