import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import { createCA, issueCertificate } from '../../../src/pki/index.js';

export interface Pair {
  certPem: string;
  keyPem: string;
}

/** Certificates for one tunnel: a CA for everything, plus a foreign CA whose certificates must be refused. */
export interface TunnelPKI {
  caPem: string;
  server: Pair;
  agent: Pair;
  client: Pair;
  /** A TLS server certificate for `cluster1` (the name dialled through the tunnel). */
  target: Pair;
  foreignAgent: Pair;
  foreignClient: Pair;
}

export async function makeTunnelPKI(): Promise<TunnelPKI> {
  const ca = await createCA('tunnel-test-ca');
  const foreign = await createCA('foreign-ca');
  return {
    caPem: ca.certPem,
    server: await issueCertificate(ca, {
      commonName: 'proxy-server',
      dnsNames: ['localhost', 'proxy-entrypoint'],
      ipAddresses: ['127.0.0.1'],
      usages: ['server'],
    }),
    agent: await issueCertificate(ca, { commonName: 'proxy-agent', usages: ['client'] }),
    client: await issueCertificate(ca, { commonName: 'proxy-client', usages: ['client'] }),
    target: await issueCertificate(ca, { commonName: 'cluster1', dnsNames: ['cluster1'], usages: ['server'] }),
    foreignAgent: await issueCertificate(foreign, { commonName: 'proxy-agent', usages: ['client'] }),
    foreignClient: await issueCertificate(foreign, { commonName: 'proxy-client', usages: ['client'] }),
  };
}

export function serverTLS(pki: TunnelPKI, pair: Pair = pki.server): { certPem: string; keyPem: string; clientCaPem: string } {
  return { certPem: pair.certPem, keyPem: pair.keyPem, clientCaPem: pki.caPem };
}

export function peerTLS(pki: TunnelPKI, pair: Pair): { certPem: string; keyPem: string; caPem: string } {
  return { certPem: pair.certPem, keyPem: pair.keyPem, caPem: pki.caPem };
}

export interface Target {
  port: number;
  /** Sockets the target currently holds open. */
  open(): number;
  close(): Promise<void>;
}

/** A TCP server on 127.0.0.1 running `handle` for each connection. */
export async function startTarget(handle: (s: net.Socket) => void): Promise<Target> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined);
    handle(s);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    open: () => sockets.size,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Echoes every byte back. */
export const echo = (s: net.Socket): void => {
  s.pipe(s);
};

/** Writes `bytes` of random data through `sock` while reading the echo; resolves true when the checksums match. */
export async function echoRoundTrip(sock: NodeJS.ReadWriteStream & { destroy(): void }, bytes: number): Promise<boolean> {
  const data = crypto.randomBytes(bytes);
  const sent = crypto.createHash('sha256').update(data).digest('hex');
  const got = crypto.createHash('sha256');
  let received = 0;
  const done = new Promise<void>((resolve, reject) => {
    sock.on('data', (chunk: Buffer) => {
      got.update(chunk);
      received += chunk.length;
      if (received >= bytes) resolve();
    });
    sock.on('error', reject);
    sock.on('end', () => (received >= bytes ? resolve() : reject(new Error(`connection ended after ${received} of ${bytes} bytes`))));
  });
  for (let off = 0; off < bytes; off += 1 << 20) {
    if (!sock.write(data.subarray(off, off + (1 << 20)))) await new Promise((r) => sock.once('drain', r));
  }
  await done;
  return got.digest('hex') === sent;
}

export function openFileDescriptors(): number {
  return fs.readdirSync('/proc/self/fd').length;
}

export async function until(what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
