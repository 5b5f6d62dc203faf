/** The gRPC frontend of the tunnel server: one /ProxyService/Proxy stream carrying one dial and its connection. */
import * as grpc from '@grpc/grpc-js';
import { PacketType, UNRECOGNIZED, type CloseRequestPacket, type CloseResponsePacket, type DataPacket, type DialRequestPacket } from './packet.js';
import type { MalformedPacket, TunnelServerStream, WirePacket } from './wire.js';
import { closeWithStatus, type Backend, type DialBroker, type Frontend } from './backend.js';

type StreamState = 'idle' | 'dialing' | 'established' | 'closing' | 'closed';

/** How long a client's CLOSE_REQ waits for the agent's CLOSE_RSP before the server answers itself. */
const CLOSE_CONFIRM_MS = 10_000;

export class GrpcFrontend implements Frontend {
  readonly mode = 'grpc';
  private state: StreamState = 'idle';
  private backend: Backend | undefined;
  private random: bigint | undefined;
  private connectID: bigint | undefined;
  private closeTimer: NodeJS.Timeout | undefined;
  private readonly drainWaiters: (() => void)[] = [];
  private warnedUnrecognized = false;
  private cleaned = false;

  constructor(
    private readonly call: TunnelServerStream,
    private readonly broker: DialBroker,
  ) {
    broker.metrics.add('grpc_connections', 1, { service_method: 'Proxy' });
    call.on('drain', () => this.drainWaiters.splice(0).forEach((fn) => fn()));
    call.on('data', (pkt: WirePacket | MalformedPacket) => this.onPacket(pkt));
    const cleanup = (): void => this.cleanup();
    call.on('end', cleanup);
    call.on('error', cleanup);
    call.on('cancelled', cleanup);
    call.on('close', cleanup);
  }

  // ------------------------------------------------------------------ Frontend, called from the agent side

  dialSucceeded(pkt: WirePacket & { type: 1 }): void {
    if (this.state !== 'dialing') return;
    this.state = 'established';
    this.connectID = pkt.connectID;
    this.call.write(pkt.raw);
  }

  dialFailed(reason: string, random: bigint): void {
    if (this.state !== 'dialing') return;
    this.call.write({ type: PacketType.DIAL_RSP, random, connectID: 0n, error: reason });
    this.finish();
  }

  deliver(pkt: WirePacket & DataPacket): boolean {
    return this.state === 'closed' ? true : this.call.write(pkt.raw);
  }

  onceWritable(fn: () => void): void {
    if (this.call.writableNeedDrain) this.drainWaiters.push(fn);
    else fn();
  }

  remoteClosed(pkt: (WirePacket & CloseResponsePacket) | undefined, connectID: bigint, reason?: string): void {
    if (this.state === 'closed') return;
    this.call.write(pkt?.raw ?? { type: PacketType.CLOSE_RSP, connectID, error: reason ?? '' });
    this.finish();
  }

  pauseSource(): void {
    this.call.pause();
  }

  resumeSource(): void {
    this.call.resume();
  }

  // ------------------------------------------------------------------ packets from the client

  private onPacket(pkt: WirePacket | MalformedPacket): void {
    if (this.state === 'closed') return;
    switch (pkt.type) {
      case 'malformed':
        this.broker.log(`frontend stream sent a malformed packet; closing it: ${pkt.reason}`);
        closeWithStatus(this.call, grpc.status.INVALID_ARGUMENT, pkt.reason);
        return;
      case UNRECOGNIZED:
        if (!this.warnedUnrecognized) {
          this.warnedUnrecognized = true;
          this.broker.log(`frontend stream sent a packet of unknown type ${pkt.declaredType}; ignored (logged once per stream)`);
        }
        return;
      case PacketType.DIAL_REQ:
        return this.onDialRequest(pkt);
      case PacketType.DATA:
        return this.onData(pkt);
      case PacketType.CLOSE_REQ:
        return this.onCloseRequest(pkt);
      case PacketType.DIAL_CLS: {
        // Only its own dial: another stream's pending dial is not this client's to cancel.
        if (this.state !== 'dialing' || pkt.random !== this.random) return;
        this.broker.abandon(this.backend, this.random, undefined);
        this.finish();
        return;
      }
      default:
        return;
    }
  }

  private onDialRequest(pkt: WirePacket & DialRequestPacket): void {
    if (this.state !== 'idle') return;
    this.state = 'dialing';
    this.random = pkt.random;
    const chosen = this.broker.startDial(this, pkt.address, pkt.random, pkt.raw);
    if (typeof chosen === 'string') {
      this.call.write({ type: PacketType.DIAL_RSP, random: pkt.random, connectID: 0n, error: chosen });
      this.finish();
      return;
    }
    this.backend = chosen;
  }

  private onData(pkt: WirePacket & DataPacket): void {
    if (this.state !== 'established' || !this.backend) {
      if (this.state === 'closing') return;
      this.call.write({ type: PacketType.CLOSE_RSP, connectID: pkt.connectID, error: 'backend not initialized' });
      return;
    }
    if (pkt.connectID !== this.connectID) return;
    if (!this.backend.send(pkt.raw)) {
      this.call.pause();
      this.backend.onceDrained(() => this.call.resume());
    }
  }

  private onCloseRequest(pkt: WirePacket & CloseRequestPacket): void {
    if (this.state !== 'established' || !this.backend || pkt.connectID !== this.connectID) {
      this.call.write({ type: PacketType.CLOSE_RSP, connectID: pkt.connectID, error: 'backend uninitialized' });
      return;
    }
    this.state = 'closing';
    this.backend.send(pkt.raw);
    // The agent answers with CLOSE_RSP, forwarded to remoteClosed by the agent side; answer ourselves if it never does.
    const b = this.backend;
    const id = pkt.connectID;
    this.closeTimer = setTimeout(() => {
      if (b.conns.get(id) === this) {
        b.conns.delete(id);
        this.broker.metrics.add('established_connections', -1);
      }
      this.call.write({ type: PacketType.CLOSE_RSP, connectID: id, error: 'agent did not confirm the close' });
      this.finish();
    }, CLOSE_CONFIRM_MS);
  }

  // ------------------------------------------------------------------ ending the stream

  private finish(): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    if (this.closeTimer) clearTimeout(this.closeTimer);
    if (!this.call.writableEnded && !this.call.destroyed) this.call.end();
  }

  private cleanup(): void {
    if (this.cleaned) return;
    this.cleaned = true;
    this.broker.metrics.add('grpc_connections', -1, { service_method: 'Proxy' });
    if (this.state === 'dialing') this.broker.abandon(this.backend, this.random, undefined);
    else if (this.state === 'established' || this.state === 'closing') this.broker.abandon(this.backend, undefined, this.connectID);
    this.finish();
  }
}
