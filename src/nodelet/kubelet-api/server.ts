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
import type { TLSSocket } from 'node:tls';
import { EXEC_PROTOCOLS, parseExecRequest, runExecSession } from './exec.js';
import { authenticate, findPod, isHttpError, pathSegments, verbOf, writeHttpError, writeRawHttpError, type HttpError } from './http-util.js';
import { serveContainerLogs } from './logs.js';
import { PORT_FORWARD_PROTOCOLS, runPortForwardSession } from './port-forward.js';
import type { SpdySession } from './spdy-session.js';
import { DEFAULT_ALLOWED_IDENTITIES, type KubeletBackend, type KubeletServer, type KubeletServerOptions } from './types.js';
import { acceptSpdyUpgrade, isSpdyUpgrade, negotiateProtocol } from './upgrade.js';

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

/** What an upgrade request for exec or port-forward asks for, once checked. */
type StreamingPlan =
  | { kind: 'exec'; protocols: readonly string[]; run: (session: SpdySession, protocol: string) => Promise<void> }
  | { kind: 'portForward'; protocols: readonly string[]; run: (session: SpdySession, protocol: string) => Promise<void> };

export async function startKubeletServer(o: KubeletServerOptions): Promise<KubeletServer> {
  const [cert, key, ca] = await Promise.all([
    pemOf('cert', o.certPem, o.certFile),
    pemOf('key', o.keyPem, o.keyFile),
    pemOf('clientCa', o.clientCaPem, o.clientCaFile),
  ]);
  const log = o.log ?? (() => {});
  const allowed = o.allowedIdentities ?? DEFAULT_ALLOWED_IDENTITIES;
  const backend: KubeletBackend = o.backend;
  const streamCreationTimeoutMs = o.streamCreationTimeoutMs ?? DEFAULT_STREAM_CREATION_TIMEOUT_MS;
  const sockets = new Set<net.Socket>();
  const sessions = new Set<SpdySession>();

  /** Checks an exec/attach/portForward request; the plan to run once upgraded, or the HTTP error to give. */
  const planStreaming = (req: http.IncomingMessage, url: URL): StreamingPlan | HttpError => {
    const [root, ...rest] = pathSegments(url.pathname);
    if (req.method !== 'GET' && req.method !== 'POST') return { status: 405, message: 'Method Not Allowed', headers: { Allow: 'GET, POST' } };
    if (root === 'attach') return { status: 400, message: 'attach is not supported by this node (ocm-lab nodelet); use kubectl exec or kubectl logs -f' };
    if (root === 'exec') {
      const execReq = parseExecRequest(rest, url.searchParams);
      if (isHttpError(execReq)) return execReq;
      const pod = findPod(backend.pods(), execReq.ns, execReq.pod);
      if (!pod) return { status: 404, message: 'pod does not exist' };
      if (!pod.containers.includes(execReq.container)) return { status: 404, message: `container "${execReq.container}" not found in pod "${execReq.pod}"` };
      return {
        kind: 'exec',
        protocols: EXEC_PROTOCOLS,
        run: (session, protocol) => {
          log(`exec ${execReq.ns}/${execReq.pod}/${execReq.container}: ${execReq.command[0]}${execReq.tty ? ' (tty)' : ''} over ${protocol}`);
          return runExecSession(session, protocol, execReq, backend, { streamCreationTimeoutMs, log });
        },
      };
    }
    if (root === 'portForward') {
      if (rest.length !== 2 && rest.length !== 3) return { status: 404, message: 'expected /portForward/{namespace}/{pod}' };
      const [ns, podName, uid] = rest as [string, string, string | undefined];
      const pod = findPod(backend.pods(), ns, podName);
      if (!pod) return { status: 404, message: 'pod does not exist' };
      if (uid && pod.uid && uid !== pod.uid) return { status: 404, message: 'pod not found' };
      return {
        kind: 'portForward',
        protocols: PORT_FORWARD_PROTOCOLS,
        run: (session) => {
          log(`port-forward ${ns}/${podName}: connection opened`);
          return runPortForwardSession(session, { ns, pod: podName, uid: pod.uid }, backend, { streamCreationTimeoutMs, log });
        },
      };
    }
    return { status: 404, message: '404 page not found' };
  };

  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    try {
      handleRequest(req, res);
    } catch (err) {
      log(`kubelet API: ${req.method} ${req.url}: ${(err as Error).message}`);
      if (!res.headersSent) writeHttpError(res, { status: 500, message: (err as Error).message });
      else res.destroy();
    }
  };

  const handleRequest = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    const url = new URL(req.url ?? '/', 'https://kubelet');
    const auth = authenticate(req.socket as TLSSocket, allowed, verbOf(req.method), url.pathname);
    if (isHttpError(auth)) {
      log(`kubelet API: ${auth.status} for ${req.method} ${url.pathname}`);
      return writeHttpError(res, auth);
    }
    const [root, ...rest] = pathSegments(url.pathname);
    const getOnly = (): boolean => {
      if (req.method === 'GET' || req.method === 'HEAD') return true;
      writeHttpError(res, { status: 405, message: 'Method Not Allowed', headers: { Allow: 'GET' } });
      return false;
    };
    if (root === 'healthz' && rest.length === 0) {
      if (!getOnly()) return;
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end('ok');
      return;
    }
    if ((root === 'pods' || root === 'runningpods') && rest.length === 0) {
      if (!getOnly()) return;
      const body = JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: {}, items: backend.pods() });
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(body);
      return;
    }
    if (root === 'containerLogs') {
      if (!getOnly()) return;
      serveContainerLogs(res, backend, rest, url.searchParams, log).catch((err: Error) => {
        log(`logs ${url.pathname}: ${err.message}`);
        if (!res.headersSent) writeHttpError(res, { status: 500, message: err.message });
        else res.destroy();
      });
      return;
    }
    if (root === 'exec' || root === 'attach' || root === 'portForward') {
      const plan = planStreaming(req, url);
      if (isHttpError(plan)) return writeHttpError(res, plan);
      return writeHttpError(res, {
        status: 400,
        message: `unable to upgrade: missing upgrade headers in request: Connection: ${req.headers.connection ?? ''}, Upgrade: ${req.headers.upgrade ?? ''}`,
      });
    }
    writeHttpError(res, { status: 404, message: '404 page not found' });
  };

  const onUpgrade = (req: http.IncomingMessage, socket: Duplex, head: Buffer): void => {
    try {
      handleUpgrade(req, socket, head);
    } catch (err) {
      log(`kubelet API: ${req.method} ${req.url} (upgrade): ${(err as Error).message}`);
      writeRawHttpError(socket, { status: 500, message: (err as Error).message });
    }
  };

  const handleUpgrade = (req: http.IncomingMessage, socket: Duplex, head: Buffer): void => {
    socket.on('error', () => {});
    // Streaming connections live long; keepalive notices a peer that vanished without closing.
    (socket as net.Socket).setTimeout(0);
    (socket as net.Socket).setKeepAlive(true, 30_000);
    const url = new URL(req.url ?? '/', 'https://kubelet');
    const auth = authenticate(socket as TLSSocket, allowed, verbOf(req.method), url.pathname);
    if (isHttpError(auth)) {
      log(`kubelet API: ${auth.status} for ${req.method} ${url.pathname} (upgrade)`);
      return writeRawHttpError(socket, auth);
    }
    const plan = planStreaming(req, url);
    if (isHttpError(plan)) return writeRawHttpError(socket, plan);
    if (!isSpdyUpgrade(req)) {
      return writeRawHttpError(socket, {
        status: 400,
        message: `unable to upgrade: this node speaks SPDY/3.1 only (got Upgrade: ${req.headers.upgrade ?? ''})`,
      });
    }
    const protocol = negotiateProtocol(req, plan.protocols);
    if (isHttpError(protocol)) return writeRawHttpError(socket, protocol);
    const session = acceptSpdyUpgrade(socket, head, protocol, log);
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
    plan.run(session, protocol).catch((err: Error) => {
      log(`${plan.kind} ${url.pathname}: ${err.message}`);
      session.destroy();
    });
  };

  const server = https.createServer({ cert, key, ca, requestCert: true, rejectUnauthorized: false });
  server.on('request', onRequest);
  server.on('upgrade', onUpgrade);
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
      for (const session of sessions) session.destroy();
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}
