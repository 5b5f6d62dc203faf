import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import tls from 'node:tls';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  certificateInfo,
  certificateUsages,
  createCA,
  createServiceAccountKeyPair,
  issueCertificate,
  keyMatchesCertificate,
  loadCA,
  writePublicFile,
  writeSecretFile,
  type CertificateAuthority,
  type KeyPairPem,
} from '../../src/pki/index.js';
import { InvalidInputError, NotFoundError } from '../../src/errors.js';
import { useTempDir } from '../support/temp-dir.js';

interface Side extends KeyPairPem {
  caPem: string;
}

/** Mutual TLS on 127.0.0.1 with Node's TLS stack: 'ok' when both sides accept each other, else the error seen. */
async function handshake(server: Side, client: Partial<Side> & { caPem: string }, servername?: string): Promise<string> {
  const srv = tls.createServer({ cert: server.certPem, key: server.keyPem, ca: server.caPem, requestCert: true, rejectUnauthorized: true }, (s) => s.end('hi'));
  srv.on('tlsClientError', () => {});
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  try {
    return await new Promise<string>((resolve) => {
      const sock = tls.connect({ host: '127.0.0.1', port, cert: client.certPem, key: client.keyPem, ca: client.caPem, ...(servername ? { servername } : {}) });
      sock.on('data', () => {
        sock.destroy();
        resolve('ok');
      });
      sock.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
      sock.on('close', () => resolve('closed'));
    });
  } finally {
    srv.close();
  }
}

const tmp = useTempDir('ocm-lab-pki-');

async function openssl(args: string[], files: Record<string, string>): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  const dir = await fs.mkdtemp(path.join(tmp.path, 'ossl-'));
  for (const [name, pem] of Object.entries(files)) await fs.writeFile(path.join(dir, name), pem);
  const r = await execa('openssl', args, { cwd: dir, reject: false });
  return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
}

describe('certificates', () => {
  let ca: CertificateAuthority;
  let foreign: CertificateAuthority;
  beforeAll(async () => {
    [ca, foreign] = await Promise.all([createCA('test CA'), createCA('foreign CA')]);
  });

  it('issues certificates whose fields read back', async () => {
    const leaf = await issueCertificate(ca, {
      commonName: 'system:node:n1',
      organizations: ['system:nodes', 'team, with comma'],
      dnsNames: ['localhost', 'n1.example'],
      ipAddresses: ['127.0.0.1', '::1', 'fd00:0:0::0001'],
      usages: ['server', 'client'],
      validityDays: 10,
    });
    const info = certificateInfo(leaf.certPem);
    expect(info.commonName).toBe('system:node:n1');
    expect(info.organizations).toEqual(['system:nodes', 'team, with comma']);
    expect(info.dnsNames).toEqual(['localhost', 'n1.example']);
    expect(info.ipAddresses).toEqual(['127.0.0.1', '::1', 'fd00::1']);
    expect(info.isCA).toBe(false);
    expect(info.issuer).toBe(certificateInfo(ca.certPem).subject);
    expect(certificateUsages(leaf.certPem)).toEqual(['server', 'client']);
    const now = Date.now();
    expect(info.notBefore.getTime()).toBeLessThan(now - 60_000);
    expect(Math.abs(info.notAfter.getTime() - (now + 10 * 86_400_000))).toBeLessThan(60_000);
    expect(leaf.keyPem).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    expect(keyMatchesCertificate(leaf.certPem, leaf.keyPem)).toBe(true);
    expect(keyMatchesCertificate(leaf.certPem, ca.keyPem)).toBe(false);
    expect(crypto.createPrivateKey(leaf.keyPem).asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
  });

  it('makes a CA that reads back as one, for the requested time', async () => {
    const short = await createCA('short CA', { validityDays: 2 });
    const info = certificateInfo(short.certPem);
    expect(info).toMatchObject({ commonName: 'short CA', isCA: true, organizations: [], dnsNames: [], ipAddresses: [] });
    expect(info.subject).toBe(info.issuer);
    expect(Math.abs(info.notAfter.getTime() - (Date.now() + 2 * 86_400_000))).toBeLessThan(60_000);
    const tenYears = certificateInfo(ca.certPem).notAfter.getTime() - Date.now();
    expect(Math.round(tenYears / 86_400_000)).toBe(3650);
    // A leaf never outlives its CA.
    const leaf = await issueCertificate(short, { commonName: 'x', usages: ['client'] });
    expect(certificateInfo(leaf.certPem).notAfter.getTime()).toBe(info.notAfter.getTime());
  });

  it('spells IPv4-mapped IPv6 addresses correctly (the library alone encodes ::ffff:1.2.3.4 as ::ffff:1)', async () => {
    const leaf = await issueCertificate(ca, { commonName: 'v6', ipAddresses: ['::ffff:1.2.3.4'], usages: ['server'] });
    expect(certificateInfo(leaf.certPem).ipAddresses).toEqual(['::ffff:102:304']);
    const text = await openssl(['x509', '-noout', '-ext', 'subjectAltName', '-in', 'c.crt'], { 'c.crt': leaf.certPem });
    expect(text.stdout).toContain('0:0:0:0:0:FFFF:102:304');
  });

  it('mutual TLS with Node: accepted with our CA; a foreign client or server certificate is rejected', async () => {
    const server = await issueCertificate(ca, { commonName: 'server', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'], usages: ['server'] });
    const client = await issueCertificate(ca, { commonName: 'client', usages: ['client'] });
    const strangerClient = await issueCertificate(foreign, { commonName: 'client', usages: ['client'] });
    const strangerServer = await issueCertificate(foreign, { commonName: 'server', dnsNames: ['localhost'], usages: ['server'] });
    expect(await handshake({ ...server, caPem: ca.certPem }, { ...client, caPem: ca.certPem }, 'localhost')).toBe('ok');
    // No servername: the client checks the IP SAN against 127.0.0.1.
    expect(await handshake({ ...server, caPem: ca.certPem }, { ...client, caPem: ca.certPem })).toBe('ok');
    expect(await handshake({ ...server, caPem: ca.certPem }, { ...strangerClient, caPem: ca.certPem }, 'localhost')).not.toBe('ok');
    expect(await handshake({ ...server, caPem: ca.certPem }, { caPem: ca.certPem }, 'localhost')).not.toBe('ok');
    expect(await handshake({ ...strangerServer, caPem: ca.certPem }, { ...client, caPem: ca.certPem }, 'localhost')).toBe('UNABLE_TO_VERIFY_LEAF_SIGNATURE');
    // Wrong name: a server-only cert for localhost does not pass as another host.
    expect(await handshake({ ...server, caPem: ca.certPem }, { ...client, caPem: ca.certPem }, 'elsewhere.example')).toBe('ERR_TLS_CERT_ALTNAME_INVALID');
  });

  it('agrees with openssl: chain verifies, foreign CA does not, extensions as specified', async () => {
    const leaf = await issueCertificate(ca, { commonName: 'kube-apiserver', dnsNames: ['kubernetes'], ipAddresses: ['10.96.0.1'], usages: ['server'] });
    const files = { 'ca.crt': ca.certPem, 'foreign.crt': foreign.certPem, 'leaf.crt': leaf.certPem };
    const ok = await openssl(['verify', '-x509_strict', '-purpose', 'sslserver', '-CAfile', 'ca.crt', 'leaf.crt'], files);
    expect(ok.stdout + ok.stderr).toContain('leaf.crt: OK');
    expect((await openssl(['verify', '-CAfile', 'foreign.crt', 'leaf.crt'], files)).exitCode).not.toBe(0);
    expect((await openssl(['verify', '-purpose', 'sslclient', '-CAfile', 'ca.crt', 'leaf.crt'], files)).exitCode).not.toBe(0);

    const caText = (await openssl(['x509', '-noout', '-text', '-in', 'ca.crt'], files)).stdout;
    expect(caText).toMatch(/Basic Constraints: critical\s+CA:TRUE/);
    expect(caText).toMatch(/Key Usage: critical\s+Digital Signature, Certificate Sign, CRL Sign/);
    expect(caText).toContain('ASN1 OID: prime256v1');
    const ski = /Subject Key Identifier:\s+([0-9A-F:]+)/.exec(caText)?.[1];
    expect(ski).toBeTruthy();

    const leafText = (await openssl(['x509', '-noout', '-text', '-in', 'leaf.crt'], files)).stdout;
    expect(leafText).toMatch(/Basic Constraints: critical\s+CA:FALSE/);
    expect(leafText).toMatch(/Key Usage: critical\s+Digital Signature, Key Encipherment/);
    expect(leafText).toMatch(/Extended Key Usage:\s+TLS Web Server Authentication\n/);
    expect(leafText).toMatch(/Subject Alternative Name:\s+DNS:kubernetes, IP Address:10\.96\.0\.1/);
    expect(leafText).toMatch(new RegExp(`Authority Key Identifier:\\s+(keyid:)?${ski}`));
    expect(leafText).toContain('Signature Algorithm: ecdsa-with-SHA256');
    // Random, positive serial numbers.
    const serial = (pem: string) => openssl(['x509', '-noout', '-serial', '-in', 'c.crt'], { 'c.crt': pem }).then((r) => r.stdout.trim());
    const other = await issueCertificate(ca, { commonName: 'kube-apiserver', usages: ['server'] });
    expect(await serial(leaf.certPem)).not.toBe(await serial(other.certPem));
    expect(await serial(leaf.certPem)).toMatch(/^serial=[0-7][0-9A-F]{31}$/);
  });

  it('rejects bad requests with InvalidInputError naming the value', async () => {
    const cases: [Parameters<typeof issueCertificate>[1], string][] = [
      [{ commonName: 'x', ipAddresses: ['10.0.0.300'], usages: ['server'] }, '10.0.0.300'],
      [{ commonName: 'x', ipAddresses: ['example.com'], usages: ['server'] }, 'example.com'],
      [{ commonName: 'x', dnsNames: ['not a name'], usages: ['server'] }, 'not a name'],
      [{ commonName: 'x', usages: [] }, 'usages'],
      [{ commonName: 'x', usages: ['peer' as 'server'] }, 'peer'],
      [{ commonName: '', usages: ['client'] }, 'commonName'],
      [{ commonName: 'x', usages: ['client'], validityDays: 0 }, 'validityDays'],
      [{ commonName: 'x', usages: ['client'], validityDays: 1.5 }, '1.5'],
    ];
    for (const [req, named] of cases) {
      const err = await issueCertificate(ca, req).catch((e: unknown) => e);
      expect(err, JSON.stringify(req)).toBeInstanceOf(InvalidInputError);
      expect((err as Error).message).toContain(named);
    }
    await expect(createCA('')).rejects.toBeInstanceOf(InvalidInputError);
    await expect(createCA('x', { validityDays: -1 })).rejects.toThrow(/validityDays/);
  });

  it('refuses to sign with a broken CA: key of another CA, a leaf as CA, garbage', async () => {
    const leaf = await issueCertificate(ca, { commonName: 'leaf', usages: ['client'] });
    const req = { commonName: 'x', usages: ['client' as const] };
    await expect(issueCertificate({ certPem: ca.certPem, keyPem: foreign.keyPem }, req)).rejects.toThrow(/does not belong to CA certificate CN=test CA/);
    await expect(issueCertificate(leaf, req)).rejects.toThrow(/is not a CA/);
    await expect(issueCertificate({ certPem: 'junk', keyPem: ca.keyPem }, req)).rejects.toBeInstanceOf(InvalidInputError);
    await expect(issueCertificate({ certPem: ca.certPem, keyPem: 'junk' }, req)).rejects.toThrow(/CA key .* is not a PEM private key/);
    const rsa = crypto.generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    await expect(issueCertificate({ certPem: ca.certPem, keyPem: rsa }, req)).rejects.toThrow(/must be an ECDSA P-256 key \(got rsa\)/);
    expect(() => certificateInfo('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n')).toThrow(InvalidInputError);
  });

  it('service account keys: PKCS#8 private, SPKI public, ES256 tokens verify', async () => {
    const sa = await createServiceAccountKeyPair();
    expect(sa.privateKeyPem).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    expect(sa.publicKeyPem).toMatch(/^-----BEGIN PUBLIC KEY-----\n/);
    const data = Buffer.from('header.payload');
    const sig = crypto.sign('sha256', data, { key: sa.privateKeyPem, dsaEncoding: 'ieee-p1363' });
    expect(sig.length).toBe(64);
    expect(crypto.verify('sha256', data, { key: sa.publicKeyPem, dsaEncoding: 'ieee-p1363' }, sig)).toBe(true);
    const other = await createServiceAccountKeyPair();
    expect(crypto.verify('sha256', data, { key: other.publicKeyPem, dsaEncoding: 'ieee-p1363' }, sig)).toBe(false);
  });

  it('loadCA reads a CA back from files, and names a missing file', async () => {
    const dir = path.join(tmp.path, 'load');
    await writePublicFile(path.join(dir, 'ca.crt'), ca.certPem);
    await writeSecretFile(path.join(dir, 'ca.key'), ca.keyPem);
    const loaded = await loadCA(path.join(dir, 'ca.crt'), path.join(dir, 'ca.key'));
    expect(loaded).toEqual(ca);
    const leaf = await issueCertificate(loaded, { commonName: 'from-file', usages: ['client'] });
    expect(certificateInfo(leaf.certPem).issuer).toBe('CN=test CA');
    const err = await loadCA(path.join(dir, 'ca.crt'), path.join(dir, 'missing.key')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect((err as Error).message).toContain(path.join(dir, 'missing.key'));
  });
});

describe('atomic files', () => {
  it('secret files are 0600 in 0700 parents, public files 0644, no temp files left', async () => {
    const file = path.join(tmp.path, 'nested', 'deeper', 'token');
    await writeSecretFile(file, 'secret');
    await writeSecretFile(file, 'secret2');
    expect(await fs.readFile(file, 'utf8')).toBe('secret2');
    expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
    expect((await fs.stat(path.dirname(file))).mode & 0o777).toBe(0o700);
    expect((await fs.stat(path.join(tmp.path, 'nested'))).mode & 0o777).toBe(0o700);
    expect(await fs.readdir(path.dirname(file))).toEqual(['token']);
    const pub = path.join(tmp.path, 'nested', 'ca.crt');
    await writePublicFile(pub, 'cert');
    expect((await fs.stat(pub)).mode & 0o777).toBe(0o644);
    // A secret file that existed with looser permissions is tightened by the rewrite.
    await fs.chmod(file, 0o644);
    await writeSecretFile(file, 'secret3');
    expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
  });

  it('a failed write leaves neither a temp file nor a changed target', async () => {
    const dir = path.join(tmp.path, 'failing');
    await fs.mkdir(path.join(dir, 'occupied'), { recursive: true });
    await fs.writeFile(path.join(dir, 'occupied', 'inside'), 'keep');
    // rename() onto a non-empty directory fails after the temp file was written.
    await expect(writeSecretFile(path.join(dir, 'occupied'), 'x')).rejects.toThrow();
    expect((await fs.readdir(dir)).sort()).toEqual(['occupied']);
    expect(await fs.readFile(path.join(dir, 'occupied', 'inside'), 'utf8')).toBe('keep');
  });
});
