/**
 * The kubelet API of a nodelet: HTTPS on the Node's InternalIP, client certificates checked
 * against the API server's kubelet-client CA, and the endpoints kube-apiserver calls for
 * `kubectl logs`, `exec` and `port-forward` (plus /healthz and /pods).
 */
import { readFile } from 'node:fs/promises';
import type http from 'node:http';
import https from 'node:https';
import type net from 'node:net';
import type { Duplex } from 'node:stream';
import { KubeletRouter } from './router.js';
import { DEFAULT_ALLOWED_IDENTITIES, type KubeletServer, type KubeletServerOptions } from './types.js';

const DEFAULT_STREAM_CREATION_TIMEOUT_MS = 30_000;

async function pemOf(what: string, pem: string | undefined, file: string | undefined): Promise<string> {
  if (pem) return pem;
  if (file) {
    try {
      return await readFile(file, 'utf8');
    } catch (err) {
      throw new Error(`kubelet API: cannot read the ${what} file ${file}: ${(err as Error).message}`);
    }
  }
  throw new Error(`kubelet API: no ${what} given (set ${what}Pem or ${what}File)`);
}

export async function startKubeletServer(o: KubeletServerOptions): Promise<KubeletServer> {
  const [cert, key, ca] = await Promise.all([
    pemOf('cert', o.certPem, o.certFile),
    pemOf('key', o.keyPem, o.keyFile),
    pemOf('clientCa', o.clientCaPem, o.clientCaFile),
  ]);
  const log = o.log ?? (() => {});
  const router = new KubeletRouter(
    o.backend,
    o.allowedIdentities ?? DEFAULT_ALLOWED_IDENTITIES,
    o.streamCreationTimeoutMs ?? DEFAULT_STREAM_CREATION_TIMEOUT_MS,
    log,
  );
  const sockets = new Set<net.Socket>();

  const server = https.createServer({ cert, key, ca, requestCert: true, rejectUnauthorized: false });
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => router.onRequest(req, res));
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => router.onUpgrade(req, socket, head));
  server.on('secureConnection', (s: net.Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  server.on('tlsClientError', (err) => log(`kubelet API: TLS handshake failed: ${err.message}`));

  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(new Error(`kubelet API: cannot listen on ${o.address}:${o.port}: ${err.message}`, { cause: err })),
    );
    server.listen(o.port, o.address, () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;
  log(`kubelet API listening on https://${o.address.includes(':') ? `[${o.address}]` : o.address}:${port}`);

  return {
    port,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      router.destroySessions();
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}
