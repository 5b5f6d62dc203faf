/** The HTTP CONNECT frontend of the tunnel server: one CONNECT socket carrying one dial and its connection. */
import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import type net from 'node:net';
import { PacketType, randomDialID } from './packet.js';
import { MAX_DATA_CHUNK } from './wire.js';
import type { Backend, DialBroker, Frontend } from './backend.js';

/** Serves one CONNECT request of a client: dials its target through an agent and then copies bytes both ways. */
export function serveHttpConnect(broker: DialBroker, req: http.IncomingMessage, socket: net.Socket, head: Buffer): void {
  const address = req.url ?? '';
  broker.openSockets.add(socket);
  broker.metrics.add('http_connections', 1);
  socket.setNoDelay(true);
  const random = randomDialID(randomBytes(8));
  let state: 'dialing' | 'established' | 'closed' = 'dialing';
  let backend: Backend | undefined;
  let connectID: bigint | undefined;
  const writableWaiters: (() => void)[] = [];
  socket.on('drain', () => writableWaiters.splice(0).forEach((fn) => fn()));

  const fail = (status: number, text: string, message: string): void => {
    if (state === 'closed') return;
    state = 'closed';
    socket.end(`HTTP/1.1 ${status} ${text}\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n${message}\n`);
  };
  const frontend: Frontend = {
    mode: 'http-connect',
    dialSucceeded: (pkt) => {
      if (state !== 'dialing') return;
      state = 'established';
      connectID = pkt.connectID;
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) sendClientBytes(head);
      socket.resume();
    },
    dialFailed: (reason) => fail(502, 'Bad Gateway', `tunnel dial to ${address} failed: ${reason}`),
    deliver: (pkt) => (state === 'established' ? socket.write(pkt.data) : true),
    onceWritable: (fn) => {
      if (socket.writableNeedDrain) writableWaiters.push(fn);
      else fn();
    },
    remoteClosed: () => {
      if (state === 'closed') return;
      state = 'closed';
      socket.end();
    },
    pauseSource: () => socket.pause(),
    resumeSource: () => socket.resume(),
  };
  const sendClientBytes = (chunk: Buffer): void => {
    if (!backend || connectID === undefined) return;
    for (let off = 0; off < chunk.length; off += MAX_DATA_CHUNK) {
      const ok = backend.send({ type: PacketType.DATA, connectID, error: '', data: chunk.subarray(off, off + MAX_DATA_CHUNK) });
      if (!ok) {
        socket.pause();
        backend.onceDrained(() => socket.resume());
      }
    }
  };

  socket.pause();
  socket.on('data', (chunk: Buffer) => {
    if (state === 'established') sendClientBytes(chunk);
  });
  socket.on('error', () => undefined);
  socket.on('close', () => {
    broker.openSockets.delete(socket);
    broker.metrics.add('http_connections', -1);
    if (state === 'dialing') broker.abandon(backend, random, undefined);
    else if (state === 'established') broker.abandon(backend, undefined, connectID);
    state = 'closed';
  });
  socket.on('end', () => {
    if (state === 'established') broker.abandon(backend, undefined, connectID);
    state = 'closed';
    socket.end();
  });

  if (!/^[^\s/]+:\d+$/.test(address)) {
    fail(400, 'Bad Request', `CONNECT target ${JSON.stringify(address)} is not host:port`);
    return;
  }
  const chosen = broker.startDial(frontend, address, random, undefined);
  if (typeof chosen === 'string') {
    fail(503, 'Service Unavailable', `currently no tunnels available: ${chosen}`);
    return;
  }
  backend = chosen;
}
