/** The kubelet API's routes: /healthz, /pods, /containerLogs, and the exec and port-forward upgrades. */
import type http from 'node:http';
import type net from 'node:net';
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { EXEC_PROTOCOLS, parseExecRequest, runExecSession } from './exec.js';
import { authenticate, findPod, isHttpError, pathSegments, verbOf, writeHttpError, writeRawHttpError, type HttpError } from './http-util.js';
import { serveContainerLogs } from './logs.js';
import { PORT_FORWARD_PROTOCOLS, runPortForwardSession } from './port-forward.js';
import type { SpdySession } from './spdy-session.js';
import type { AllowedIdentities, KubeletBackend } from './types.js';
import { acceptSpdyUpgrade, isSpdyUpgrade, negotiateProtocol } from './upgrade.js';

/** What an upgrade request for exec or port-forward asks for, once checked. */
type StreamingPlan =
  | { kind: 'exec'; protocols: readonly string[]; run: (session: SpdySession, protocol: string) => Promise<void> }
  | { kind: 'portForward'; protocols: readonly string[]; run: (session: SpdySession, protocol: string) => Promise<void> };

/** Authenticates each request and answers it, or upgrades it to an exec or port-forward session. */
export class KubeletRouter {
  private readonly sessions = new Set<SpdySession>();

  constructor(
    private readonly backend: KubeletBackend,
    private readonly allowed: AllowedIdentities,
    private readonly streamCreationTimeoutMs: number,
    private readonly log: (line: string) => void,
  ) {}

  /** The HTTP handler: a failure becomes a 500 (or a reset once the answer has begun). */
  onRequest(req: http.IncomingMessage, res: http.ServerResponse): void {
    try {
      this.handleRequest(req, res);
    } catch (err) {
      this.log(`kubelet API: ${req.method} ${req.url}: ${(err as Error).message}`);
      if (!res.headersSent) writeHttpError(res, { status: 500, message: (err as Error).message });
      else res.destroy();
    }
  }

  /** The upgrade handler: exec and port-forward over SPDY/3.1. */
  onUpgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): void {
    try {
      this.handleUpgrade(req, socket, head);
    } catch (err) {
      this.log(`kubelet API: ${req.method} ${req.url} (upgrade): ${(err as Error).message}`);
      writeRawHttpError(socket, { status: 500, message: (err as Error).message });
    }
  }

  /** Ends every streaming session still open (the server is closing). */
  destroySessions(): void {
    for (const session of this.sessions) session.destroy();
  }

  /** Checks an exec/attach/portForward request; the plan to run once upgraded, or the HTTP error to give. */
  private planStreaming(req: http.IncomingMessage, url: URL): StreamingPlan | HttpError {
    const [root, ...rest] = pathSegments(url.pathname);
    if (req.method !== 'GET' && req.method !== 'POST') return { status: 405, message: 'Method Not Allowed', headers: { Allow: 'GET, POST' } };
    if (root === 'attach') return { status: 400, message: 'attach is not supported by this node (ocm-lab nodelet); use kubectl exec or kubectl logs -f' };
    if (root === 'exec') {
      const execReq = parseExecRequest(rest, url.searchParams);
      if (isHttpError(execReq)) return execReq;
      const pod = findPod(this.backend.pods(), execReq.ns, execReq.pod);
      if (!pod) return { status: 404, message: 'pod does not exist' };
      if (!pod.containers.includes(execReq.container)) return { status: 404, message: `container "${execReq.container}" not found in pod "${execReq.pod}"` };
      return {
        kind: 'exec',
        protocols: EXEC_PROTOCOLS,
        run: (session, protocol) => {
          this.log(`exec ${execReq.ns}/${execReq.pod}/${execReq.container}: ${execReq.command[0]}${execReq.tty ? ' (tty)' : ''} over ${protocol}`);
          return runExecSession(session, protocol, execReq, this.backend, { streamCreationTimeoutMs: this.streamCreationTimeoutMs, log: this.log });
        },
      };
    }
    if (root === 'portForward') {
      if (rest.length !== 2 && rest.length !== 3) return { status: 404, message: 'expected /portForward/{namespace}/{pod}' };
      const [ns, podName, uid] = rest as [string, string, string | undefined];
      const pod = findPod(this.backend.pods(), ns, podName);
      if (!pod) return { status: 404, message: 'pod does not exist' };
      if (uid && pod.uid && uid !== pod.uid) return { status: 404, message: 'pod not found' };
      return {
        kind: 'portForward',
        protocols: PORT_FORWARD_PROTOCOLS,
        run: (session) => {
          this.log(`port-forward ${ns}/${podName}: connection opened`);
          return runPortForwardSession(session, { ns, pod: podName, uid: pod.uid }, this.backend, {
            streamCreationTimeoutMs: this.streamCreationTimeoutMs,
            log: this.log,
          });
        },
      };
    }
    return { status: 404, message: '404 page not found' };
  }

  private handleRequest(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? '/', 'https://kubelet');
    const auth = authenticate(req.socket as TLSSocket, this.allowed, verbOf(req.method), url.pathname);
    if (isHttpError(auth)) {
      this.log(`kubelet API: ${auth.status} for ${req.method} ${url.pathname}`);
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
      const body = JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: {}, items: this.backend.pods() });
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(body);
      return;
    }
    if (root === 'containerLogs') {
      if (!getOnly()) return;
      serveContainerLogs(res, this.backend, rest, url.searchParams, this.log).catch((err: Error) => {
        this.log(`logs ${url.pathname}: ${err.message}`);
        if (!res.headersSent) writeHttpError(res, { status: 500, message: err.message });
        else res.destroy();
      });
      return;
    }
    if (root === 'exec' || root === 'attach' || root === 'portForward') {
      const plan = this.planStreaming(req, url);
      if (isHttpError(plan)) return writeHttpError(res, plan);
      return writeHttpError(res, {
        status: 400,
        message: `unable to upgrade: missing upgrade headers in request: Connection: ${req.headers.connection ?? ''}, Upgrade: ${req.headers.upgrade ?? ''}`,
      });
    }
    writeHttpError(res, { status: 404, message: '404 page not found' });
  }

  private handleUpgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => {});
    // Streaming connections live long; keepalive notices a peer that vanished without closing.
    (socket as net.Socket).setTimeout(0);
    (socket as net.Socket).setKeepAlive(true, 30_000);
    const url = new URL(req.url ?? '/', 'https://kubelet');
    const auth = authenticate(socket as TLSSocket, this.allowed, verbOf(req.method), url.pathname);
    if (isHttpError(auth)) {
      this.log(`kubelet API: ${auth.status} for ${req.method} ${url.pathname} (upgrade)`);
      return writeRawHttpError(socket, auth);
    }
    const plan = this.planStreaming(req, url);
    if (isHttpError(plan)) return writeRawHttpError(socket, plan);
    if (!isSpdyUpgrade(req)) {
      return writeRawHttpError(socket, {
        status: 400,
        message: `unable to upgrade: this node speaks SPDY/3.1 only (got Upgrade: ${req.headers.upgrade ?? ''})`,
      });
    }
    const protocol = negotiateProtocol(req, plan.protocols);
    if (isHttpError(protocol)) return writeRawHttpError(socket, protocol);
    const session = acceptSpdyUpgrade(socket, head, protocol, this.log);
    this.sessions.add(session);
    session.once('close', () => this.sessions.delete(session));
    plan.run(session, protocol).catch((err: Error) => {
      this.log(`${plan.kind} ${url.pathname}: ${err.message}`);
      session.destroy();
    });
  }
}
