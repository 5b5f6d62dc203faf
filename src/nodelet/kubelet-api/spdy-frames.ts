/**
 * SPDY/3.1 frames: an incremental parser for what arrives on the socket and encoders for
 * what we send. Header blocks stay compressed here; spdy-headers.ts handles them.
 */

export const SPDY_VERSION = 3;

export const FrameType = {
  SynStream: 1,
  SynReply: 2,
  RstStream: 3,
  Settings: 4,
  Ping: 6,
  GoAway: 7,
  Headers: 8,
  WindowUpdate: 9,
} as const;

export const FLAG_FIN = 0x01;
export const FLAG_UNIDIRECTIONAL = 0x02;

export const RstStatus = {
  ProtocolError: 1,
  InvalidStream: 2,
  RefusedStream: 3,
  UnsupportedVersion: 4,
  Cancel: 5,
  InternalError: 6,
  FlowControlError: 7,
  StreamInUse: 8,
  StreamAlreadyClosed: 9,
} as const;

export const GoAwayStatus = { Ok: 0, ProtocolError: 1, InternalError: 2 } as const;

const MAX_FRAME_LENGTH = 0xffffff;

export type RawFrame =
  { control: false; streamId: number; flags: number; data: Buffer } | { control: true; version: number; type: number; flags: number; payload: Buffer };

/** Splits a byte stream into frames; keeps partial frames until the rest arrives. */
export class FrameParser {
  private chunks: Buffer[] = [];
  private buffered = 0;

  push(chunk: Buffer): RawFrame[] {
    if (chunk.length) {
      this.chunks.push(chunk);
      this.buffered += chunk.length;
    }
    const frames: RawFrame[] = [];
    while (this.buffered >= 8) {
      const head = this.peek(8);
      const length = head.readUInt32BE(4) & 0xffffff;
      if (this.buffered < 8 + length) break;
      const frame = this.take(8 + length);
      const flags = frame[4]!;
      if (frame[0]! & 0x80) {
        frames.push({ control: true, version: frame.readUInt16BE(0) & 0x7fff, type: frame.readUInt16BE(2), flags, payload: frame.subarray(8) });
      } else {
        frames.push({ control: false, streamId: frame.readUInt32BE(0) & 0x7fffffff, flags, data: frame.subarray(8) });
      }
    }
    return frames;
  }

  private peek(n: number): Buffer {
    if (this.chunks[0]!.length < n) this.chunks = [Buffer.concat(this.chunks)];
    return this.chunks[0]!.subarray(0, n);
  }

  private take(n: number): Buffer {
    if (this.chunks[0]!.length < n) this.chunks = [Buffer.concat(this.chunks)];
    const first = this.chunks[0]!;
    const out = first.subarray(0, n);
    if (first.length === n) this.chunks.shift();
    else this.chunks[0] = first.subarray(n);
    this.buffered -= n;
    return out;
  }
}

function controlFrame(type: number, flags: number, payload: Buffer): Buffer {
  if (payload.length > MAX_FRAME_LENGTH) throw new Error(`SPDY control frame of ${payload.length} bytes is too long`);
  const head = Buffer.alloc(8);
  head.writeUInt16BE(0x8000 | SPDY_VERSION, 0);
  head.writeUInt16BE(type, 2);
  head.writeUInt32BE(((flags & 0xff) << 24) | payload.length, 4);
  return Buffer.concat([head, payload]);
}

export function encodeData(streamId: number, data: Buffer, fin: boolean): Buffer {
  if (data.length > MAX_FRAME_LENGTH) throw new Error(`SPDY data frame of ${data.length} bytes is too long`);
  const head = Buffer.alloc(8);
  head.writeUInt32BE(streamId & 0x7fffffff, 0);
  head.writeUInt32BE(((fin ? FLAG_FIN : 0) << 24) | data.length, 4);
  return data.length ? Buffer.concat([head, data]) : head;
}

export function encodeSynStream(streamId: number, headerBlock: Buffer, opts: { fin?: boolean; priority?: number } = {}): Buffer {
  const p = Buffer.alloc(10);
  p.writeUInt32BE(streamId & 0x7fffffff, 0);
  p.writeUInt32BE(0, 4); // associated stream
  p[8] = ((opts.priority ?? 0) & 0x7) << 5;
  p[9] = 0; // slot
  return controlFrame(FrameType.SynStream, opts.fin ? FLAG_FIN : 0, Buffer.concat([p, headerBlock]));
}

export function encodeSynReply(streamId: number, headerBlock: Buffer, fin = false): Buffer {
  const p = Buffer.alloc(4);
  p.writeUInt32BE(streamId & 0x7fffffff, 0);
  return controlFrame(FrameType.SynReply, fin ? FLAG_FIN : 0, Buffer.concat([p, headerBlock]));
}

export function encodeRstStream(streamId: number, status: number): Buffer {
  const p = Buffer.alloc(8);
  p.writeUInt32BE(streamId & 0x7fffffff, 0);
  p.writeUInt32BE(status, 4);
  return controlFrame(FrameType.RstStream, 0, p);
}

export function encodePing(id: number): Buffer {
  const p = Buffer.alloc(4);
  p.writeUInt32BE(id >>> 0, 0);
  return controlFrame(FrameType.Ping, 0, p);
}

export function encodeGoAway(lastGoodStreamId: number, status: number): Buffer {
  const p = Buffer.alloc(8);
  p.writeUInt32BE(lastGoodStreamId & 0x7fffffff, 0);
  p.writeUInt32BE(status, 4);
  return controlFrame(FrameType.GoAway, 0, p);
}

export function encodeWindowUpdate(streamId: number, delta: number): Buffer {
  const p = Buffer.alloc(8);
  p.writeUInt32BE(streamId & 0x7fffffff, 0);
  p.writeUInt32BE(delta & 0x7fffffff, 4);
  return controlFrame(FrameType.WindowUpdate, 0, p);
}

function need(payload: Buffer, n: number, what: string): void {
  if (payload.length < n) throw new Error(`SPDY ${what} frame too short (${payload.length} bytes)`);
}

export function parseSynStream(payload: Buffer): { streamId: number; associatedId: number; priority: number; headerBlock: Buffer } {
  need(payload, 10, 'SYN_STREAM');
  return {
    streamId: payload.readUInt32BE(0) & 0x7fffffff,
    associatedId: payload.readUInt32BE(4) & 0x7fffffff,
    priority: payload[8]! >> 5,
    headerBlock: payload.subarray(10),
  };
}

/** SYN_REPLY and HEADERS share this layout. */
export function parseStreamHeaders(payload: Buffer, what: string): { streamId: number; headerBlock: Buffer } {
  need(payload, 4, what);
  return { streamId: payload.readUInt32BE(0) & 0x7fffffff, headerBlock: payload.subarray(4) };
}

export function parseRstStream(payload: Buffer): { streamId: number; status: number } {
  need(payload, 8, 'RST_STREAM');
  return { streamId: payload.readUInt32BE(0) & 0x7fffffff, status: payload.readUInt32BE(4) };
}

export function parsePing(payload: Buffer): number {
  need(payload, 4, 'PING');
  return payload.readUInt32BE(0);
}

export function parseGoAway(payload: Buffer): { lastGoodStreamId: number; status: number } {
  need(payload, 4, 'GOAWAY');
  return { lastGoodStreamId: payload.readUInt32BE(0) & 0x7fffffff, status: payload.length >= 8 ? payload.readUInt32BE(4) : 0 };
}

export function parseWindowUpdate(payload: Buffer): { streamId: number; delta: number } {
  need(payload, 8, 'WINDOW_UPDATE');
  return { streamId: payload.readUInt32BE(0) & 0x7fffffff, delta: payload.readUInt32BE(4) & 0x7fffffff };
}
