/**
 * The tunnel's wire message, encoded and decoded by hand (protobuf wire format,
 * proto3 rules) so that DATA payloads stay zero-copy Buffers and every int64
 * stays an exact bigint. Field numbers follow apiserver-network-proxy v0.36
 * (see docs/tunnel.md); the message has no protobuf package.
 */

export const PacketType = {
  DIAL_REQ: 0,
  DIAL_RSP: 1,
  CLOSE_REQ: 2,
  CLOSE_RSP: 3,
  DATA: 4,
  DIAL_CLS: 5,
  DRAIN: 6,
  /**
   * ocm-lab extension, only sent to peers that announced it in metadata
   * (FLOW_CONTROL_HEADER): pause or resume one connection's sender. Upstream
   * peers never see it.
   */
  FLOW: 100,
} as const;

/** Oneof member numbers inside Packet. */
const Field = {
  type: 1,
  dialRequest: 2,
  dialResponse: 3,
  data: 4,
  closeRequest: 5,
  closeResponse: 6,
  closeDial: 7,
  drain: 8,
  flow: 100,
} as const;

export interface DialRequestPacket {
  type: 0;
  protocol: string;
  address: string;
  random: bigint;
}
interface DialResponsePacket {
  type: 1;
  error: string;
  connectID: bigint;
  random: bigint;
}
export interface CloseRequestPacket {
  type: 2;
  connectID: bigint;
}
export interface CloseResponsePacket {
  type: 3;
  error: string;
  connectID: bigint;
}
export interface DataPacket {
  type: 4;
  connectID: bigint;
  error: string;
  data: Buffer;
}
interface CloseDialPacket {
  type: 5;
  random: bigint;
}
interface DrainPacket {
  type: 6;
}
interface FlowPacket {
  type: 100;
  connectID: bigint;
  paused: boolean;
}
/**
 * A well-formed packet of a type this version does not know (no payload, or one
 * in a field we do not know): receivers ignore it, as upstream does, so a newer
 * peer's packet types never break a tunnel. Never encoded.
 */
interface UnrecognizedPacket {
  type: -1;
  declaredType: number;
}

/** `type` of an UnrecognizedPacket; not a value on the wire. */
export const UNRECOGNIZED = -1;

export type Packet =
  | DialRequestPacket
  | DialResponsePacket
  | CloseRequestPacket
  | CloseResponsePacket
  | DataPacket
  | CloseDialPacket
  | DrainPacket
  | FlowPacket
  | UnrecognizedPacket;

export class PacketDecodeError extends Error {
  constructor(message: string) {
    super(`malformed tunnel packet: ${message}`);
    this.name = 'PacketDecodeError';
  }
}

const WIRE_VARINT = 0;
const WIRE_I64 = 1;
const WIRE_LEN = 2;
const WIRE_I32 = 5;

const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;

// ---------------------------------------------------------------- encoding

function varintSize(v: number): number {
  let n = 1;
  while (v >= 0x80) {
    v = Math.floor(v / 128);
    n++;
  }
  return n;
}

/** int64 as an unsigned 64-bit value (negatives take 10 bytes, as protobuf says). */
function int64Unsigned(v: bigint): bigint {
  if (v < INT64_MIN || v > INT64_MAX) throw new RangeError(`int64 out of range: ${v}`);
  return BigInt.asUintN(64, v);
}

function bigVarintSize(u: bigint): number {
  if (u < 0x20000000000000n) return varintSize(Number(u));
  let n = 1;
  while (u >= 0x80n) {
    u >>= 7n;
    n++;
  }
  return n;
}

class Writer {
  readonly buf: Buffer;
  pos = 0;
  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(size);
  }
  varint(v: number): void {
    while (v >= 0x80) {
      this.buf[this.pos++] = (v % 128) | 0x80;
      v = Math.floor(v / 128);
    }
    this.buf[this.pos++] = v;
  }
  bigVarint(u: bigint): void {
    if (u < 0x20000000000000n) {
      this.varint(Number(u));
      return;
    }
    while (u >= 0x80n) {
      this.buf[this.pos++] = Number(u & 0x7fn) | 0x80;
      u >>= 7n;
    }
    this.buf[this.pos++] = Number(u);
  }
  tag(field: number, wire: number): void {
    this.varint(field * 8 + wire);
  }
  bytes(b: Uint8Array): void {
    this.varint(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }
}

/** One submessage field: number, and either an int64, a string/bytes or a bool. */
type SubField =
  | { n: number; kind: 'i64'; v: bigint }
  | { n: number; kind: 'str'; v: string }
  | { n: number; kind: 'bytes'; v: Uint8Array }
  | { n: number; kind: 'bool'; v: boolean };

function subFields(p: Packet): SubField[] {
  switch (p.type) {
    case PacketType.DIAL_REQ:
      return [
        { n: 1, kind: 'str', v: p.protocol },
        { n: 2, kind: 'str', v: p.address },
        { n: 3, kind: 'i64', v: p.random },
      ];
    case PacketType.DIAL_RSP:
      return [
        { n: 1, kind: 'str', v: p.error },
        { n: 2, kind: 'i64', v: p.connectID },
        { n: 3, kind: 'i64', v: p.random },
      ];
    case PacketType.CLOSE_REQ:
      return [{ n: 1, kind: 'i64', v: p.connectID }];
    case PacketType.CLOSE_RSP:
      return [
        { n: 1, kind: 'str', v: p.error },
        { n: 2, kind: 'i64', v: p.connectID },
      ];
    case PacketType.DATA:
      return [
        { n: 1, kind: 'i64', v: p.connectID },
        { n: 2, kind: 'str', v: p.error },
        { n: 3, kind: 'bytes', v: p.data },
      ];
    case PacketType.DIAL_CLS:
      return [{ n: 1, kind: 'i64', v: p.random }];
    case PacketType.DRAIN:
      return [];
    case PacketType.FLOW:
      return [
        { n: 1, kind: 'i64', v: p.connectID },
        { n: 2, kind: 'bool', v: p.paused },
      ];
    case UNRECOGNIZED:
      throw new RangeError(`packet type ${p.declaredType} is not one we can encode`);
  }
}

function oneofField(type: number): number {
  switch (type) {
    case PacketType.DIAL_REQ:
      return Field.dialRequest;
    case PacketType.DIAL_RSP:
      return Field.dialResponse;
    case PacketType.CLOSE_REQ:
      return Field.closeRequest;
    case PacketType.CLOSE_RSP:
      return Field.closeResponse;
    case PacketType.DATA:
      return Field.data;
    case PacketType.DIAL_CLS:
      return Field.closeDial;
    case PacketType.DRAIN:
      return Field.drain;
    case PacketType.FLOW:
      return Field.flow;
    default:
      throw new RangeError(`unknown packet type ${type}`);
  }
}

/** Encodes a packet; fields holding proto3 defaults are left out, the oneof member never. */
export function encodePacket(p: Packet): Buffer {
  const fields = subFields(p);
  // Encode strings once; sizes are needed before writing.
  const prepared: { n: number; wire: number; varint?: bigint; bytes?: Uint8Array }[] = [];
  let subSize = 0;
  for (const f of fields) {
    if (f.kind === 'i64') {
      if (f.v === 0n) continue;
      const u = int64Unsigned(f.v);
      prepared.push({ n: f.n, wire: WIRE_VARINT, varint: u });
      subSize += varintSize(f.n * 8) + bigVarintSize(u);
    } else if (f.kind === 'bool') {
      if (!f.v) continue;
      prepared.push({ n: f.n, wire: WIRE_VARINT, varint: 1n });
      subSize += varintSize(f.n * 8) + 1;
    } else {
      const b = f.kind === 'str' ? Buffer.from(f.v, 'utf8') : f.v;
      if (b.length === 0) continue;
      prepared.push({ n: f.n, wire: WIRE_LEN, bytes: b });
      subSize += varintSize(f.n * 8) + varintSize(b.length) + b.length;
    }
  }
  const member = oneofField(p.type);
  const typeSize = p.type === 0 ? 0 : 1 + varintSize(p.type);
  const total = typeSize + varintSize(member * 8) + varintSize(subSize) + subSize;
  const w = new Writer(total);
  if (p.type !== 0) {
    w.tag(Field.type, WIRE_VARINT);
    w.varint(p.type);
  }
  w.tag(member, WIRE_LEN);
  w.varint(subSize);
  for (const f of prepared) {
    w.tag(f.n, f.wire);
    if (f.varint !== undefined) w.bigVarint(f.varint);
    else w.bytes(f.bytes!);
  }
  if (w.pos !== total) throw new Error(`packet encoder size mismatch: ${w.pos} != ${total}`);
  return w.buf;
}

// ---------------------------------------------------------------- decoding

class Reader {
  pos: number;
  constructor(
    readonly buf: Buffer,
    start: number,
    readonly end: number,
  ) {
    this.pos = start;
  }
  done(): boolean {
    return this.pos >= this.end;
  }
  /** A varint as a number; only for tags, lengths and small enums. */
  varint(): number {
    let result = 0;
    let mul = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new PacketDecodeError('truncated varint');
      const b = this.buf[this.pos++]!;
      result += (b & 0x7f) * mul;
      if (b < 0x80) {
        if (result > Number.MAX_SAFE_INTEGER) throw new PacketDecodeError('varint too large for a length or tag');
        return result;
      }
      mul *= 128;
    }
    throw new PacketDecodeError('varint longer than 10 bytes');
  }
  /** A varint as an exact signed int64. */
  int64(): bigint {
    let lo = 0;
    let shift = 0;
    // Fast path: up to 7 bytes (49 bits) fit a double exactly.
    const start = this.pos;
    for (let i = 0; i < 7; i++) {
      if (this.pos >= this.end) throw new PacketDecodeError('truncated varint');
      const b = this.buf[this.pos++]!;
      lo += (b & 0x7f) * 2 ** shift;
      shift += 7;
      if (b < 0x80) return BigInt(lo);
    }
    this.pos = start;
    let u = 0n;
    let s = 0n;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new PacketDecodeError('truncated varint');
      const b = this.buf[this.pos++]!;
      u |= BigInt(b & 0x7f) << s;
      s += 7n;
      if (b < 0x80) return BigInt.asIntN(64, u);
    }
    throw new PacketDecodeError('varint longer than 10 bytes');
  }
  lengthDelimited(): [number, number] {
    const len = this.varint();
    const start = this.pos;
    if (start + len > this.end) throw new PacketDecodeError(`field length ${len} runs past the end`);
    this.pos = start + len;
    return [start, start + len];
  }
  skip(wire: number): void {
    switch (wire) {
      case WIRE_VARINT:
        this.varint64Skip();
        return;
      case WIRE_I64:
        this.advance(8);
        return;
      case WIRE_LEN:
        this.lengthDelimited();
        return;
      case WIRE_I32:
        this.advance(4);
        return;
      default:
        throw new PacketDecodeError(`unsupported wire type ${wire}`);
    }
  }
  private varint64Skip(): void {
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new PacketDecodeError('truncated varint');
      if (this.buf[this.pos++]! < 0x80) return;
    }
    throw new PacketDecodeError('varint longer than 10 bytes');
  }
  private advance(n: number): void {
    if (this.pos + n > this.end) throw new PacketDecodeError('truncated fixed-width field');
    this.pos += n;
  }
}

interface SubValues {
  ints: Map<number, bigint>;
  spans: Map<number, [number, number]>;
}

function readSub(buf: Buffer, start: number, end: number): SubValues {
  const r = new Reader(buf, start, end);
  const ints = new Map<number, bigint>();
  const spans = new Map<number, [number, number]>();
  while (!r.done()) {
    const tag = r.varint();
    const n = Math.floor(tag / 8);
    const wire = tag & 7;
    if (wire === WIRE_VARINT) ints.set(n, r.int64());
    else if (wire === WIRE_LEN) spans.set(n, r.lengthDelimited());
    else r.skip(wire);
  }
  return { ints, spans };
}

/**
 * Decodes a packet. `data` of a DATA packet is a view into `buf` (no copy).
 * The payload decides the shape; `type` is checked against it when present,
 * since proto3 leaves out type 0 (DIAL_REQ).
 */
export function decodePacket(buf: Buffer): Packet {
  const r = new Reader(buf, 0, buf.length);
  let type = 0;
  let member = 0;
  let span: [number, number] = [0, 0];
  while (!r.done()) {
    const tag = r.varint();
    const n = Math.floor(tag / 8);
    const wire = tag & 7;
    if (n === Field.type && wire === WIRE_VARINT) {
      type = Number(r.int64());
    } else if (n >= Field.dialRequest && n <= Field.drain && wire === WIRE_LEN) {
      member = n;
      span = r.lengthDelimited();
    } else if (n === Field.flow && wire === WIRE_LEN) {
      member = n;
      span = r.lengthDelimited();
    } else {
      r.skip(wire);
    }
  }
  if (member === 0) {
    if (!KNOWN_TYPES.has(type)) return { type: UNRECOGNIZED, declaredType: type };
    throw new PacketDecodeError(`packet of type ${type} carries no payload`);
  }
  const expected = oneofField(memberType(member));
  if (expected !== member || memberType(member) !== type) {
    throw new PacketDecodeError(`packet type ${type} does not match its payload (field ${member})`);
  }
  const { ints, spans } = readSub(buf, span[0], span[1]);
  const i64 = (k: number): bigint => ints.get(k) ?? 0n;
  const str = (k: number): string => {
    const s = spans.get(k);
    return s ? buf.toString('utf8', s[0], s[1]) : '';
  };
  switch (member) {
    case Field.dialRequest:
      return { type: 0, protocol: str(1), address: str(2), random: i64(3) };
    case Field.dialResponse:
      return { type: 1, error: str(1), connectID: i64(2), random: i64(3) };
    case Field.closeRequest:
      return { type: 2, connectID: i64(1) };
    case Field.closeResponse:
      return { type: 3, error: str(1), connectID: i64(2) };
    case Field.data: {
      const s = spans.get(3);
      return { type: 4, connectID: i64(1), error: str(2), data: s ? buf.subarray(s[0], s[1]) : Buffer.alloc(0) };
    }
    case Field.closeDial:
      return { type: 5, random: i64(1) };
    case Field.drain:
      return { type: 6 };
    default:
      return { type: 100, connectID: i64(1), paused: i64(2) !== 0n };
  }
}

const KNOWN_TYPES = new Set<number>(Object.values(PacketType));

function memberType(member: number): number {
  switch (member) {
    case Field.dialRequest:
      return PacketType.DIAL_REQ;
    case Field.dialResponse:
      return PacketType.DIAL_RSP;
    case Field.closeRequest:
      return PacketType.CLOSE_REQ;
    case Field.closeResponse:
      return PacketType.CLOSE_RSP;
    case Field.data:
      return PacketType.DATA;
    case Field.closeDial:
      return PacketType.DIAL_CLS;
    case Field.drain:
      return PacketType.DRAIN;
    default:
      return PacketType.FLOW;
  }
}

/** Random dial IDs: positive int63, like upstream clients use. */
export function randomDialID(bytes: Buffer): bigint {
  return bytes.readBigUInt64BE(0) & INT64_MAX || 1n;
}
