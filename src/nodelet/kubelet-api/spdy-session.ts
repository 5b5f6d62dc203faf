/**
 * One SPDY/3.1 connection (the protocol Kubernetes' httpstream/spdy speaks over an upgraded
 * HTTP/1.1 connection), with its streams as Node Duplex streams.
 *
 * Flow control: Go's moby/spdystream, the peer we serve, neither sends nor obeys
 * WINDOW_UPDATE (it hands WINDOW_UPDATE and SETTINGS to its "unhandled frame" branch) and
 * relies on TCP backpressure. So we never wait for send windows (that would stall after
 * 64 KiB), and we slow a fast sender down by pausing the socket while any stream's read
 * buffer is full. We still send WINDOW_UPDATE for data our consumers have taken, so a
 * peer that does count windows keeps sending.
 */
import { EventEmitter } from 'node:events';
import { Duplex } from 'node:stream';
import {
  FLAG_FIN,
  FLAG_UNIDIRECTIONAL,
  FrameParser,
  FrameType,
  GoAwayStatus,
  RstStatus,
  SPDY_VERSION,
  encodeData,
  encodeGoAway,
  encodePing,
  encodeRstStream,
  encodeSynReply,
  encodeSynStream,
  encodeWindowUpdate,
  parseGoAway,
  parsePing,
  parseRstStream,
  parseStreamHeaders,
  parseSynStream,
  parseWindowUpdate,
  type RawFrame,
} from './spdy-frames.js';
import { HeaderDeflater, HeaderInflater, type SpdyHeaders } from './spdy-headers.js';

/** Largest data frame we send; TLS records carry 16 KiB, so bigger frames only add latency. */
const MAX_DATA_FRAME = 32 * 1024;
/** SPDY/3's initial window is 64 KiB; acknowledge consumed data once half of it is used. */
const WINDOW_UPDATE_THRESHOLD = 32 * 1024;
const STREAM_READ_BUFFER = 256 * 1024;
/** How long a closed session waits for the peer to close the socket before destroying it. */
const CLOSE_GRACE_MS = 5_000;

export interface SpdySessionOptions {
  /** Server streams get even IDs and answer the client's odd ones. */
  isServer: boolean;
  /** Bytes read past the HTTP upgrade response/request that already belong to the SPDY connection. */
  head?: Buffer;
  log?: (line: string) => void;
}

export class SpdyStream extends Duplex {
  /** Headers of the SYN_STREAM (a peer's stream) or of the SYN_REPLY and HEADERS frames (our stream). */
  headers: SpdyHeaders;
  resetByPeer = false;
  private localFin = false;
  private remoteFin = false;
  private wasReset = false;
  private replySent = false;
  private unacknowledged = 0;
  /** Resolves when the peer has answered our SYN_STREAM. */
  readonly replied: Promise<SpdyHeaders>;
  private resolveReplied!: (h: SpdyHeaders) => void;

  constructor(
    private readonly session: SpdySession,
    readonly id: number,
    headers: SpdyHeaders,
  ) {
    super({ allowHalfOpen: true, readableHighWaterMark: STREAM_READ_BUFFER, decodeStrings: true });
    this.headers = headers;
    this.replied = new Promise((resolve) => (this.resolveReplied = resolve));
    // Errors end up as 'close'; a reset stream must not crash whoever pipes into it.
    this.on('error', () => {});
  }

  /** Accepts a peer's stream (SYN_REPLY). */
  reply(headers: SpdyHeaders = {}): void {
    if (this.replySent || this.wasReset || this.session.closed) return;
    this.replySent = true;
    this.session.sendFrame(encodeSynReply(this.id, this.session.compressHeaders(headers)));
  }

  /** Sends RST_STREAM and tears the stream down in both directions. */
  reset(status: number = RstStatus.Cancel): void {
    if (!this.wasReset && !(this.localFin && this.remoteFin)) {
      this.wasReset = true;
      this.session.sendFrame(encodeRstStream(this.id, status));
    }
    this.wasReset = true;
    this.destroy();
  }

  get isLocalFinished(): boolean {
    return this.localFin || this.wasReset;
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    if (this.wasReset || this.localFin) return cb();
    this.session.sendData(this.id, chunk, cb);
  }

  override _final(cb: (err?: Error | null) => void): void {
    if (!this.wasReset && !this.localFin) {
      this.localFin = true;
      this.session.sendFrame(encodeData(this.id, Buffer.alloc(0), true));
      this.session.streamMaybeDone(this);
    }
    cb();
  }

  override _read(): void {
    this.session.streamDrained(this);
    this.acknowledge();
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    if (!this.wasReset && !(this.localFin && this.remoteFin) && !this.session.closed) {
      this.wasReset = true;
      this.session.sendFrame(encodeRstStream(this.id, RstStatus.Cancel));
    }
    this.session.forget(this);
    cb(err);
  }

  // ---- called by the session ----

  /** @internal */
  onData(data: Buffer, fin: boolean): void {
    if (this.remoteFin || this.destroyed) return;
    if (data.length) {
      this.unacknowledged += data.length;
      if (!this.push(data)) this.session.streamCongested(this);
      else this.acknowledge();
    }
    if (fin) this.onRemoteFin();
  }

  /** @internal */
  onRemoteFin(): void {
    if (this.remoteFin) return;
    this.remoteFin = true;
    this.push(null);
    this.session.streamMaybeDone(this);
  }

  /** @internal */
  onPeerReset(): void {
    this.resetByPeer = true;
    this.wasReset = true;
    this.destroy();
  }

  /** @internal */
  onReply(headers: SpdyHeaders): void {
    Object.assign(this.headers, headers);
    this.resolveReplied(headers);
  }

  /** @internal */
  markLocalFinished(): void {
    this.localFin = true;
  }

  /** @internal */
  get fullyClosed(): boolean {
    return this.wasReset || (this.localFin && this.remoteFin);
  }

  /** Half the initial window: a peer that counts windows always has at least that much left. */
  private acknowledge(): void {
    if (this.unacknowledged < WINDOW_UPDATE_THRESHOLD || this.remoteFin || this.wasReset) return;
    this.session.sendFrame(encodeWindowUpdate(this.id, this.unacknowledged));
    this.unacknowledged = 0;
  }
}

export class SpdySession extends EventEmitter {
  closed = false;
  /** True once the peer sent GOAWAY. */
  peerGoneAway = false;
  private sentGoAway = false;
  private readonly streams = new Map<number, SpdyStream>();
  private readonly parser = new FrameParser();
  private readonly deflater = new HeaderDeflater();
  private readonly inflater = new HeaderInflater();
  private readonly congested = new Set<SpdyStream>();
  private readonly drainWaiters: (() => void)[] = [];
  private readonly pings = new Map<number, { done: () => void; fail: (err: Error) => void }>();
  private closing = false;
  private nextStreamId: number;
  private nextPingId: number;
  private lastPeerStreamId = 0;
  private readonly log: (line: string) => void;

  constructor(
    readonly socket: Duplex,
    private readonly opts: SpdySessionOptions,
  ) {
    super();
    this.nextStreamId = opts.isServer ? 2 : 1;
    this.nextPingId = opts.isServer ? 2 : 1;
    this.log = opts.log ?? (() => {});
    socket.on('data', (chunk: Buffer) => this.onSocketData(chunk));
    socket.on('drain', () => this.flushDrainWaiters());
    socket.on('error', (err: Error) => this.log(`spdy: connection error: ${err.message}`));
    socket.on('end', () => this.teardown());
    socket.on('close', () => this.teardown());
    if (opts.head?.length) queueMicrotask(() => this.onSocketData(opts.head!));
  }

  get streamCount(): number {
    return this.streams.size;
  }

  /** Opens a stream (SYN_STREAM); the peer's answer arrives on `stream.replied`. */
  openStream(headers: SpdyHeaders, opts: { fin?: boolean } = {}): SpdyStream {
    if (this.closed || this.peerGoneAway || this.sentGoAway) throw new Error('SPDY session is closing; cannot open a stream');
    const id = this.nextStreamId;
    this.nextStreamId += 2;
    const stream = new SpdyStream(this, id, { ...headers });
    this.streams.set(id, stream);
    this.sendFrame(encodeSynStream(id, this.compressHeaders(headers), { fin: opts.fin ?? false }));
    if (opts.fin) {
      stream.markLocalFinished();
      stream.end();
    }
    return stream;
  }

  /** Round trip of a PING, in milliseconds. */
  ping(timeoutMs = 10_000): Promise<number> {
    const id = this.nextPingId;
    this.nextPingId += 2;
    const started = Date.now();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pings.delete(id);
        reject(new Error(`SPDY PING ${id} not answered within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pings.set(id, {
        done: () => {
          clearTimeout(timer);
          resolve(Date.now() - started);
        },
        fail: (err) => {
          clearTimeout(timer);
          reject(err);
        },
      });
      this.sendFrame(encodePing(id));
    });
  }

  /**
   * Ends the connection the way Kubernetes' httpstream does: reset the streams whose
   * sending side is still open, send GOAWAY, then close the socket once written.
   */
  close(): void {
    if (this.closed || this.closing) return;
    this.closing = true;
    for (const s of [...this.streams.values()]) if (!s.isLocalFinished) s.reset(RstStatus.Cancel);
    this.goAway(GoAwayStatus.Ok);
    this.socket.end();
    setTimeout(() => this.socket.destroy(), CLOSE_GRACE_MS).unref();
  }

  goAway(status: number = GoAwayStatus.Ok): void {
    if (this.sentGoAway || this.closed) return;
    this.sentGoAway = true;
    this.sendFrame(encodeGoAway(this.lastPeerStreamId, status));
  }

  destroy(): void {
    this.socket.destroy();
    this.teardown();
  }

  // ---- used by streams ----

  /** @internal */
  compressHeaders(headers: SpdyHeaders): Buffer {
    return this.deflater.compress(headers);
  }

  /** @internal */
  sendFrame(frame: Buffer): boolean {
    if (this.closed || this.socket.destroyed || this.socket.writableEnded) return true;
    return this.socket.write(frame);
  }

  /** @internal Writes data frames; `done` runs once the socket can take more (backpressure). */
  sendData(streamId: number, data: Buffer, done: () => void): void {
    let ok = true;
    for (let off = 0; off < data.length; off += MAX_DATA_FRAME) {
      ok = this.sendFrame(encodeData(streamId, data.subarray(off, off + MAX_DATA_FRAME), false));
    }
    if (ok || this.closed) done();
    else this.drainWaiters.push(done);
  }

  /** @internal */
  streamCongested(stream: SpdyStream): void {
    this.congested.add(stream);
    if (this.congested.size === 1) this.socket.pause();
  }

  /** @internal */
  streamDrained(stream: SpdyStream): void {
    if (this.congested.delete(stream) && this.congested.size === 0 && !this.closed) this.socket.resume();
  }

  /** @internal */
  streamMaybeDone(stream: SpdyStream): void {
    if (stream.fullyClosed) this.forget(stream);
  }

  /** @internal */
  forget(stream: SpdyStream): void {
    this.streamDrained(stream);
    if (this.streams.get(stream.id) === stream) this.streams.delete(stream.id);
    if (this.peerGoneAway && this.streams.size === 0) this.close();
  }

  // ---- incoming frames ----

  private onSocketData(chunk: Buffer): void {
    if (this.closed) return;
    try {
      for (const frame of this.parser.push(chunk)) {
        if (this.closed) return;
        this.handleFrame(frame);
      }
    } catch (err) {
      // A broken frame or header block leaves the shared compression context unusable.
      this.log(`spdy: protocol error, closing connection: ${(err as Error).message}`);
      this.goAway(GoAwayStatus.ProtocolError);
      this.socket.end();
      this.teardown();
    }
  }

  private handleFrame(frame: RawFrame): void {
    if (!frame.control) {
      const stream = this.streams.get(frame.streamId);
      // Data for a stream we already reset or forgot can still be in flight: drop it.
      stream?.onData(frame.data, (frame.flags & FLAG_FIN) !== 0);
      return;
    }
    if (frame.version !== SPDY_VERSION) throw new Error(`SPDY version ${frame.version} control frame (only version 3 is spoken)`);
    switch (frame.type) {
      case FrameType.SynStream:
        return this.onSynStream(frame.payload, frame.flags);
      case FrameType.SynReply: {
        const { streamId, headerBlock } = parseStreamHeaders(frame.payload, 'SYN_REPLY');
        const headers = this.inflater.decompress(headerBlock);
        const stream = this.streams.get(streamId);
        stream?.onReply(headers);
        if (frame.flags & FLAG_FIN) stream?.onRemoteFin();
        return;
      }
      case FrameType.Headers: {
        const { streamId, headerBlock } = parseStreamHeaders(frame.payload, 'HEADERS');
        const headers = this.inflater.decompress(headerBlock);
        const stream = this.streams.get(streamId);
        if (stream) Object.assign(stream.headers, headers);
        if (frame.flags & FLAG_FIN) stream?.onRemoteFin();
        return;
      }
      case FrameType.RstStream: {
        const { streamId } = parseRstStream(frame.payload);
        this.streams.get(streamId)?.onPeerReset();
        return;
      }
      case FrameType.Ping: {
        const id = parsePing(frame.payload);
        const ours = (id % 2 === 0) === this.opts.isServer;
        if (ours) {
          const pending = this.pings.get(id);
          this.pings.delete(id);
          pending?.done();
        } else {
          this.sendFrame(encodePing(id));
        }
        return;
      }
      case FrameType.GoAway: {
        const { lastGoodStreamId, status } = parseGoAway(frame.payload);
        this.peerGoneAway = true;
        this.emit('goaway', { lastGoodStreamId, status });
        if (this.streams.size === 0) this.close();
        return;
      }
      case FrameType.WindowUpdate:
        parseWindowUpdate(frame.payload); // we do not hold data back for windows (see the file comment)
        return;
      case FrameType.Settings:
        return;
      default:
        // SPDY/3 says to ignore unknown control frames.
        return;
    }
  }

  private onSynStream(payload: Buffer, flags: number): void {
    const { streamId, headerBlock } = parseSynStream(payload);
    // Always inflate: skipping a block would desynchronise the compression context.
    const headers = this.inflater.decompress(headerBlock);
    const peerParity = this.opts.isServer ? 1 : 0;
    if (streamId === 0 || streamId % 2 !== peerParity || streamId <= this.lastPeerStreamId) {
      this.log(`spdy: refusing SYN_STREAM with invalid stream id ${streamId}`);
      this.sendFrame(encodeRstStream(streamId, RstStatus.ProtocolError));
      return;
    }
    this.lastPeerStreamId = streamId;
    if (this.sentGoAway) {
      this.sendFrame(encodeRstStream(streamId, RstStatus.RefusedStream));
      return;
    }
    const stream = new SpdyStream(this, streamId, headers);
    this.streams.set(streamId, stream);
    if (flags & FLAG_UNIDIRECTIONAL) stream.markLocalFinished();
    this.emit('stream', stream);
    if (flags & FLAG_FIN) stream.onRemoteFin();
  }

  private flushDrainWaiters(): void {
    const waiters = this.drainWaiters.splice(0);
    for (const w of waiters) w();
  }

  private teardown(): void {
    if (this.closed) return;
    this.closed = true;
    this.flushDrainWaiters();
    for (const stream of [...this.streams.values()]) stream.destroy();
    this.streams.clear();
    this.congested.clear();
    for (const pending of this.pings.values()) pending.fail(new Error('SPDY connection closed before the PING was answered'));
    this.pings.clear();
    this.emit('close');
  }
}
