/**
 * `kubectl port-forward` on the node (kubernetes pkg/kubelet/cri/streaming/portforward,
 * protocol portforward.k8s.io). Every forwarded connection is a pair of streams, `error`
 * and `data`, sharing `port` and `requestid` headers; the data stream is piped to a new
 * connection to that port in the pod, and failures are reported as text on the error stream.
 */
import type net from 'node:net';
import { headerValue } from './spdy-headers.js';
import { RstStatus } from './spdy-frames.js';
import type { SpdySession, SpdyStream } from './spdy-session.js';
import type { KubeletBackend } from './types.js';

export const PORT_FORWARD_PROTOCOLS = ['portforward.k8s.io'] as const;

interface StreamPair {
  requestId: string;
  port: number;
  data?: SpdyStream;
  error?: SpdyStream;
  timer: NodeJS.Timeout;
}

export interface PortForwardTarget {
  ns: string;
  pod: string;
  uid: string;
}

/** Why a stream cannot be part of a pair (the kubelet resets such streams), or undefined. */
export function invalidPortForwardStream(headers: Record<string, string>): string | undefined {
  const port = headerValue(headers, 'port');
  if (!port) return '"port" header is required';
  if (!/^\d+$/.test(port) || Number(port) > 65535) return `unable to parse "${port}" as a port`;
  if (Number(port) < 1) return `port "${port}" must be > 0`;
  const type = headerValue(headers, 'streamtype');
  if (!type) return '"streamType" header is required';
  if (type !== 'error' && type !== 'data') return `invalid stream type "${type}"`;
  return undefined;
}

/** Serves the pairs of one connection until the client closes it. */
export function runPortForwardSession(
  session: SpdySession,
  target: PortForwardTarget,
  backend: KubeletBackend,
  opts: { streamCreationTimeoutMs: number; log: (line: string) => void },
): Promise<void> {
  return new PortForwardSession(session, target, backend, opts).run();
}

/** One port-forward connection: pairs its streams by request ID and copies each pair to a connection into the pod. */
class PortForwardSession {
  private readonly pairs = new Map<string, StreamPair>();
  private readonly sockets = new Set<net.Socket>();
  private readonly where: string;
  private readonly log: (line: string) => void;

  constructor(
    private readonly session: SpdySession,
    private readonly target: PortForwardTarget,
    private readonly backend: KubeletBackend,
    private readonly opts: { streamCreationTimeoutMs: number; log: (line: string) => void },
  ) {
    this.log = opts.log;
    this.where = `port-forward ${target.ns}/${target.pod}`;
  }

  /** Resolves when the client closes the connection; everything still open is then torn down. */
  run(): Promise<void> {
    const session = this.session;
    session.on('stream', this.onStream);
    return new Promise((resolve) => {
      session.once('close', () => {
        session.off('stream', this.onStream);
        for (const pair of this.pairs.values()) clearTimeout(pair.timer);
        this.pairs.clear();
        for (const s of this.sockets) s.destroy();
        this.sockets.clear();
        resolve();
      });
    });
  }

  private printError(pair: StreamPair, message: string): void {
    if (pair.error && !pair.error.writableEnded) pair.error.write(message);
  }

  private readonly onStream = (stream: SpdyStream): void => {
    const where = this.where;
    const invalid = invalidPortForwardStream(stream.headers);
    if (invalid) {
      this.log(`${where}: rejecting stream ${stream.id}: ${invalid}`);
      stream.reset(RstStatus.Cancel);
      return;
    }
    stream.reply();
    const type = headerValue(stream.headers, 'streamtype') as 'error' | 'data';
    const port = Number(headerValue(stream.headers, 'port'));
    // Old clients send no requestid: their error stream is N and its data stream N+2.
    const requestId = headerValue(stream.headers, 'requestid') ?? String(type === 'error' ? stream.id : stream.id - 2);
    const pair = this.pairs.get(requestId) ?? this.newPair(requestId, port);
    if (pair[type]) {
      const message = `error processing stream for request ${requestId}: ${type} stream already assigned`;
      this.log(`${where}: ${message}`);
      this.printError(pair, message);
      stream.reset(RstStatus.Cancel);
      return;
    }
    pair[type] = stream;
    if (type === 'error') stream.resume(); // the client writes nothing here and FINs it at once
    if (pair.data && pair.error) {
      clearTimeout(pair.timer);
      this.pairs.delete(requestId);
      void this.forward(pair);
    }
  };

  /** A pair waiting for its second stream, given up after the stream creation timeout. */
  private newPair(requestId: string, port: number): StreamPair {
    const where = this.where;
    const created: StreamPair = {
      requestId,
      port,
      timer: setTimeout(() => {
        this.pairs.delete(requestId);
        const message = `(conn=${where}, request=${requestId}) timed out waiting for streams`;
        this.log(`${where}: ${message}`);
        this.printError(created, message);
        created.error?.end();
        created.data?.reset(RstStatus.Cancel);
      }, this.opts.streamCreationTimeoutMs),
    };
    created.timer.unref();
    this.pairs.set(requestId, created);
    return created;
  }

  private async forward(pair: StreamPair): Promise<void> {
    const { target, where, sockets } = this;
    const data = pair.data!;
    const error = pair.error!;
    const closePair = (): void => {
      if (!error.writableEnded) error.end();
      if (!data.writableEnded) data.end();
    };
    let socket: net.Socket;
    try {
      socket = await this.backend.dialPort(target.ns, target.pod, pair.port);
    } catch (err) {
      const message = `error forwarding port ${pair.port} to pod ${target.pod}, uid ${target.uid}: ${(err as Error).message}`;
      this.log(`${where}: ${message}`);
      this.printError(pair, message);
      data.resume();
      closePair();
      return;
    }
    if (this.session.closed || data.destroyed) {
      socket.destroy();
      return;
    }
    sockets.add(socket);
    let podDone = false;
    let clientDone = false;
    const settle = (): void => {
      if (podDone && clientDone) {
        closePair();
        socket.destroy();
      }
    };
    socket.on('error', (err) => this.log(`${where}: connection to port ${pair.port}: ${err.message}`));
    // The pod's side is gone in both directions: finish the pair (FIN on both streams).
    socket.on('close', () => {
      sockets.delete(socket);
      data.unpipe(socket);
      closePair();
    });
    // pod → client; the data stream's FIN follows the pod's.
    socket.pipe(data);
    socket.on('end', () => {
      podDone = true;
      settle();
    });
    // client → pod; the client's FIN half-closes the pod connection.
    data.pipe(socket);
    data.on('end', () => {
      clientDone = true;
      settle();
    });
    data.on('close', () => {
      if (data.resetByPeer) socket.destroy();
    });
  }
}
