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
  const { log } = opts;
  const pairs = new Map<string, StreamPair>();
  const sockets = new Set<net.Socket>();
  const where = `port-forward ${target.ns}/${target.pod}`;

  const printError = (pair: StreamPair, message: string): void => {
    if (pair.error && !pair.error.writableEnded) pair.error.write(message);
  };

  const forward = async (pair: StreamPair): Promise<void> => {
    const data = pair.data!;
    const error = pair.error!;
    const closePair = (): void => {
      if (!error.writableEnded) error.end();
      if (!data.writableEnded) data.end();
    };
    let socket: net.Socket;
    try {
      socket = await backend.dialPort(target.ns, target.pod, pair.port);
    } catch (err) {
      const message = `error forwarding port ${pair.port} to pod ${target.pod}, uid ${target.uid}: ${(err as Error).message}`;
      log(`${where}: ${message}`);
      printError(pair, message);
      data.resume();
      closePair();
      return;
    }
    if (session.closed || data.destroyed) {
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
    socket.on('error', (err) => log(`${where}: connection to port ${pair.port}: ${err.message}`));
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
  };

  const onStream = (stream: SpdyStream): void => {
    const invalid = invalidPortForwardStream(stream.headers);
    if (invalid) {
      log(`${where}: rejecting stream ${stream.id}: ${invalid}`);
      stream.reset(RstStatus.Cancel);
      return;
    }
    stream.reply();
    const type = headerValue(stream.headers, 'streamtype') as 'error' | 'data';
    const port = Number(headerValue(stream.headers, 'port'));
    // Old clients send no requestid: their error stream is N and its data stream N+2.
    const requestId = headerValue(stream.headers, 'requestid') ?? String(type === 'error' ? stream.id : stream.id - 2);
    let pair = pairs.get(requestId);
    if (!pair) {
      const created: StreamPair = {
        requestId,
        port,
        timer: setTimeout(() => {
          pairs.delete(requestId);
          const message = `(conn=${where}, request=${requestId}) timed out waiting for streams`;
          log(`${where}: ${message}`);
          printError(created, message);
          created.error?.end();
          created.data?.reset(RstStatus.Cancel);
        }, opts.streamCreationTimeoutMs),
      };
      created.timer.unref();
      pair = created;
      pairs.set(requestId, pair);
    }
    if (pair[type]) {
      const message = `error processing stream for request ${requestId}: ${type} stream already assigned`;
      log(`${where}: ${message}`);
      printError(pair, message);
      stream.reset(RstStatus.Cancel);
      return;
    }
    pair[type] = stream;
    if (type === 'error') stream.resume(); // the client writes nothing here and FINs it at once
    if (pair.data && pair.error) {
      clearTimeout(pair.timer);
      pairs.delete(requestId);
      void forward(pair);
    }
  };

  session.on('stream', onStream);
  return new Promise((resolve) => {
    session.once('close', () => {
      session.off('stream', onStream);
      for (const pair of pairs.values()) clearTimeout(pair.timer);
      pairs.clear();
      for (const s of sockets) s.destroy();
      sockets.clear();
      resolve();
    });
  });
}
