/** What the tunnel server's agent side and its frontends share: an agent stream, a client connection, and the dial broker between them. */
import type net from 'node:net';
import type * as grpc from '@grpc/grpc-js';
import type { DataPacket, CloseResponsePacket } from './packet.js';
import type { Outgoing, TunnelServerStream, WirePacket } from './wire.js';
import type { AgentIdentifiers } from './identifiers.js';
import type { Metrics } from './metrics.js';

/** One client connection: a gRPC Proxy stream or an HTTP CONNECT socket. */
export interface Frontend {
  readonly mode: 'grpc' | 'http-connect';
  dialSucceeded(pkt: WirePacket & { type: 1 }): void;
  dialFailed(reason: string, random: bigint): void;
  /** Returns false when the client reads slower than data arrives. */
  deliver(pkt: WirePacket & DataPacket): boolean;
  /** Called once after deliver() returned false, when the client has caught up. */
  onceWritable(fn: () => void): void;
  remoteClosed(pkt: (WirePacket & CloseResponsePacket) | undefined, connectID: bigint, reason?: string): void;
  pauseSource(): void;
  resumeSource(): void;
}

/** One agent's Connect stream, with the connections and dials it carries. */
export class Backend {
  readonly conns = new Map<bigint, Frontend>();
  readonly pending = new Set<bigint>();
  draining = false;
  warnedUnrecognized = false;
  private readonly waitingForDrain = new Set<() => void>();
  /** Frontends whose slowness paused this whole stream (only with peers lacking FLOW). */
  blockedBy = 0;

  constructor(
    readonly agentID: string,
    readonly identifiers: AgentIdentifiers,
    readonly call: TunnelServerStream,
    readonly flowControl: boolean,
  ) {
    call.on('drain', () => {
      const fns = [...this.waitingForDrain];
      this.waitingForDrain.clear();
      for (const fn of fns) fn();
    });
  }

  send(p: Outgoing): boolean {
    if (this.call.destroyed || this.call.writableEnded) return true;
    return this.call.write(p);
  }

  onceDrained(fn: () => void): void {
    this.waitingForDrain.add(fn);
  }
}

/** What a frontend asks of the server: dials to agents, and their cancellation. */
export interface DialBroker {
  readonly metrics: Metrics;
  readonly log: (line: string) => void;
  /** Open HTTP CONNECT sockets, destroyed when the server closes. */
  readonly openSockets: Set<net.Socket>;
  /** Sends a DIAL_REQ to a chosen agent, or returns an error message. */
  startDial(frontend: Frontend, address: string, random: bigint, raw: Buffer | undefined): Backend | string;
  /** The client went away or cancelled: tell the agent to drop whatever it holds for it. */
  abandon(backend: Backend | undefined, random: bigint | undefined, connectID: bigint | undefined): void;
}

/** Ends a server stream with a gRPC status (grpc-js turns an emitted error into the status it sends). */
export function closeWithStatus(call: TunnelServerStream, code: grpc.status, details: string): void {
  if (call.destroyed) return;
  call.emit('error', Object.assign(new Error(details), { code, details }));
}
