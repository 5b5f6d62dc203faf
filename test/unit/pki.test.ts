import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { certificateInfo, createCA, ensureClusterPki, issueCertificate, writeSecretFile, type CertificateAuthority } from '../../src/pki/index.js';
import { InvalidInputError } from '../../src/errors.js';

/** Mutual TLS handshake on loopback: resolves true when both sides accept each other. */
async function handshake(server: { certPem: string; keyPem: string; caPem: string }, client: { certPem: string; keyPem: string; caPem: string }): Promise<boolean> {
  const srv = tls.createServer({ cert: server.certPem, key: server.keyPem, ca: server.caPem, requestCert: true, rejectUnauthorized: true }, (s) => s.end('hi'));
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  try {
    return await new Promise<boolean>((resolve) => {
      const sock = tls.connect({ host: '127.0.0.1', port, cert: client.certPem, key: client.keyPem, ca: client.caPem, servername: 'localhost' });
      sock.on('data', () => {
        sock.destroy();
        resolve(true);
      });
      sock.on('error', () => resolve(false));
      sock.on('close', () => resolve(false));
    });
  } finally {
    srv.close();
  }
}

describe('certificates', () => {
  let ca: CertificateAuthority;
  let foreign: CertificateAuthority;
  beforeAll(async () => {
    [ca, foreign] = await Promise.all([createCA('test CA'), createCA('foreign CA')]);
  });

  it('issues certificates whose fields read back', async () => {
    const leaf = await issueCertificate(ca, { commonName: 'system:node:n1', organizations: ['system:nodes'], dnsNames: ['localhost'], ipAddresses: ['127.0.0.1', '::1'], usages: ['server', 'client'] });
    const info = certificateInfo(leaf.certPem);
    expect(info.commonName).toBe('system:node:n1');
    expect(info.organizations).toEqual(['system:nodes']);
    expect(info.dnsNames).toEqual(['localhost']);
    expect(info.ipAddresses.sort()).toEqual(['127.0.0.1', '::1'].sort());
    expect(info.isCA).toBe(false);
    expect(info.issuer).toBe(certificateInfo(ca.certPem).subject);
    expect(certificateInfo(ca.certPem).isCA).toBe(true);
    expect(leaf.keyPem).toContain('BEGIN PRIVATE KEY');
  });

  it('makes certificates a real TLS stack accepts, and rejects a foreign CA', async () => {
    const server = await issueCertificate(ca, { commonName: 'server', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'], usages: ['server'] });
    const client = await issueCertificate(ca, { commonName: 'client', usages: ['client'] });
    const stranger = await issueCertificate(foreign, { commonName: 'client', usages: ['client'] });
    expect(await handshake({ ...server, caPem: ca.certPem }, { ...client, caPem: ca.certPem })).toBe(true);
    expect(await handshake({ ...server, caPem: ca.certPem }, { ...stranger, caPem: ca.certPem })).toBe(false);
  });

  it('agrees with openssl verify', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-pki-'));
    try {
      const leaf = await issueCertificate(ca, { commonName: 'x', usages: ['client'] });
      await fs.writeFile(path.join(dir, 'ca.crt'), ca.certPem);
      await fs.writeFile(path.join(dir, 'leaf.crt'), leaf.certPem);
      const ok = await execa('openssl', ['verify', '-CAfile', path.join(dir, 'ca.crt'), path.join(dir, 'leaf.crt')], { reject: false });
      expect(ok.stdout).toContain('OK');
      await fs.writeFile(path.join(dir, 'foreign.crt'), foreign.certPem);
      const bad = await execa('openssl', ['verify', '-CAfile', path.join(dir, 'foreign.crt'), path.join(dir, 'leaf.crt')], { reject: false });
      expect(bad.exitCode).not.toBe(0);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('names a bad IP address', async () => {
    const err = await issueCertificate(ca, { commonName: 'x', ipAddresses: ['10.0.0.300'], usages: ['server'] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidInputError);
    expect((err as Error).message).toContain('10.0.0.300');
  });
});

describe('cluster PKI', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-cpki-'));
  });
  afterAll(async () => fs.rm(dir, { recursive: true, force: true }));

  const spec = { clusterName: 'hub', apiServerIPs: ['10.213.1.10', '127.0.0.1'], serviceIP: '10.96.0.1' };

  it('creates every file with private keys 0600 in a 0700 directory', async () => {
    const paths = await ensureClusterPki(path.join(dir, 'pki'), spec);
    expect((await fs.stat(paths.dir)).mode & 0o777).toBe(0o700);
    for (const key of [paths.caKey, paths.apiServerKey, paths.adminKey, paths.controllerManagerKey, paths.serviceAccountKey, paths.frontProxyCaKey, paths.frontProxyClientKey]) {
      expect((await fs.stat(key)).mode & 0o777).toBe(0o600);
    }
    const api = certificateInfo(await fs.readFile(paths.apiServerCert, 'utf8'));
    expect(api.ipAddresses.sort()).toEqual(['10.213.1.10', '127.0.0.1', '10.96.0.1'].sort());
    expect(api.dnsNames).toContain('kubernetes.default.svc.cluster.local');
    const admin = certificateInfo(await fs.readFile(paths.adminCert, 'utf8'));
    expect(admin.organizations).toEqual(['system:masters']);
    expect(await fs.readdir(paths.dir)).not.toContain(expect.stringMatching(/\.tmp$/));
  });

  it('is idempotent, and re-issues only the serving cert when addresses change', async () => {
    const pkiDir = path.join(dir, 'pki');
    const snapshot = async () => {
      const out: Record<string, string> = {};
      for (const f of await fs.readdir(pkiDir)) out[f] = await fs.readFile(path.join(pkiDir, f), 'utf8');
      return out;
    };
    const first = await snapshot();
    await ensureClusterPki(pkiDir, spec);
    expect(await snapshot()).toEqual(first);
    await ensureClusterPki(pkiDir, { ...spec, apiServerIPs: ['10.213.1.11', '127.0.0.1'] });
    const third = await snapshot();
    const changed = Object.keys(first).filter((f) => first[f] !== third[f]).sort();
    expect(changed).toEqual(['apiserver.crt', 'apiserver.key']);
  });

  it('writes secret files atomically with mode 0600', async () => {
    const file = path.join(dir, 'nested', 'token');
    await writeSecretFile(file, 'secret');
    expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
    expect(await fs.readdir(path.dirname(file))).toEqual(['token']);
  });
});
