import { describe, expect, it } from 'vitest';
import protobuf from 'protobufjs';
import { decodePacket, encodePacket, PacketDecodeError, PacketType, randomDialID, UNRECOGNIZED, type Packet } from '../../src/tunnel/packet.js';

const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;

/**
 * An independent protobuf implementation (protobufjs reflection, schema built
 * here from the field numbers) to check our hand-written codec against.
 */
function reference(): protobuf.Type {
  const root = new protobuf.Root();
  const sub = (name: string, fields: [string, number, string][]): protobuf.Type => {
    const t = new protobuf.Type(name);
    for (const [n, id, type] of fields) t.add(new protobuf.Field(n, id, type));
    root.add(t);
    return t;
  };
  sub('DialRequest', [
    ['protocol', 1, 'string'],
    ['address', 2, 'string'],
    ['random', 3, 'int64'],
  ]);
  sub('DialResponse', [
    ['error', 1, 'string'],
    ['connectID', 2, 'int64'],
    ['random', 3, 'int64'],
  ]);
  sub('CloseRequest', [['connectID', 1, 'int64']]);
  sub('CloseResponse', [
    ['error', 1, 'string'],
    ['connectID', 2, 'int64'],
  ]);
  sub('CloseDial', [['random', 1, 'int64']]);
  sub('Drain', []);
  sub('Data', [
    ['connectID', 1, 'int64'],
    ['error', 2, 'string'],
    ['data', 3, 'bytes'],
  ]);
  const packet = new protobuf.Type('Packet');
  packet.add(new protobuf.Field('type', 1, 'int32'));
  const members: [string, number, string][] = [
    ['dialRequest', 2, 'DialRequest'],
    ['dialResponse', 3, 'DialResponse'],
    ['data', 4, 'Data'],
    ['closeRequest', 5, 'CloseRequest'],
    ['closeResponse', 6, 'CloseResponse'],
    ['closeDial', 7, 'CloseDial'],
    ['drain', 8, 'Drain'],
  ];
  const oneof = new protobuf.OneOf('payload');
  packet.add(oneof);
  for (const [n, id, t] of members) {
    const f = new protobuf.Field(n, id, t);
    packet.add(f);
    oneof.add(f);
  }
  root.add(packet);
  root.resolveAll();
  return packet;
}

const Ref = reference();

const samples: Packet[] = [
  { type: PacketType.DIAL_REQ, protocol: 'tcp', address: 'cluster1:443', random: 1234567890123456789n },
  { type: PacketType.DIAL_REQ, protocol: 'tcp', address: '[::1]:6443', random: INT64_MAX },
  { type: PacketType.DIAL_RSP, error: '', connectID: 1n, random: INT64_MIN },
  { type: PacketType.DIAL_RSP, error: 'No agent available', connectID: 0n, random: -1n },
  { type: PacketType.CLOSE_REQ, connectID: INT64_MAX },
  { type: PacketType.CLOSE_RSP, error: '', connectID: 0n },
  { type: PacketType.CLOSE_RSP, error: 'unrecognized connectID', connectID: 9007199254740993n },
  { type: PacketType.DATA, connectID: 42n, error: '', data: Buffer.from('hello, tunnel') },
  { type: PacketType.DATA, connectID: INT64_MIN, error: '', data: Buffer.alloc(0) },
  { type: PacketType.DIAL_CLS, random: 2n ** 53n + 1n },
  { type: PacketType.DRAIN },
];

function toReference(p: Packet): Record<string, unknown> {
  const { type, ...rest } = p as Packet & Record<string, unknown>;
  const member = (
    { 0: 'dialRequest', 1: 'dialResponse', 2: 'closeRequest', 3: 'closeResponse', 4: 'data', 5: 'closeDial', 6: 'drain' } as Record<number, string>
  )[type]!;
  const body: Record<string, unknown> = {};
  // proto3: fields holding their default value are not on the wire.
  for (const [k, v] of Object.entries(rest)) {
    if (v === '' || v === 0n || (Buffer.isBuffer(v) && v.length === 0)) continue;
    body[k] = typeof v === 'bigint' ? v.toString() : v;
  }
  return type === 0 ? { [member]: body } : { type, [member]: body };
}

describe('tunnel packet codec', () => {
  it.each(
    samples.map(
      (s) => [PacketType[Object.keys(PacketType).find((k) => PacketType[k as keyof typeof PacketType] === s.type) as keyof typeof PacketType], s] as const,
    ),
  )('round-trips %s exactly', (_t, p) => {
    const decoded = decodePacket(encodePacket(p));
    expect(decoded).toEqual(p);
  });

  it('encodes byte-for-byte like an independent protobuf implementation', () => {
    for (const p of samples) {
      const theirs = Buffer.from(Ref.encode(Ref.fromObject(toReference(p))).finish());
      expect(
        encodePacket(p).toString('hex'),
        JSON.stringify(p, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)),
      ).toBe(theirs.toString('hex'));
    }
  });

  it('decodes what the independent implementation encodes, int64 extremes exact', () => {
    for (const p of samples) {
      const theirs = Buffer.from(Ref.encode(Ref.fromObject(toReference(p))).finish());
      expect(decodePacket(theirs)).toEqual(p);
    }
  });

  it('keeps DATA payloads as views of the received buffer (no copy)', () => {
    const wire = encodePacket({ type: PacketType.DATA, connectID: 7n, error: '', data: Buffer.from('abcdef') });
    const d = decodePacket(wire);
    if (d.type !== PacketType.DATA) throw new Error('not DATA');
    expect(d.data.buffer).toBe(wire.buffer);
    expect(d.data.toString()).toBe('abcdef');
  });

  it('round-trips the FLOW extension packet', () => {
    const p: Packet = { type: PacketType.FLOW, connectID: 3n, paused: true };
    expect(decodePacket(encodePacket(p))).toEqual(p);
    expect(decodePacket(encodePacket({ ...p, paused: false }))).toEqual({ ...p, paused: false });
  });

  it('skips unknown fields', () => {
    const base = encodePacket({ type: PacketType.CLOSE_REQ, connectID: 5n });
    // field 15, varint 1 — appended at top level
    const withUnknown = Buffer.concat([base, Buffer.from([15 << 3, 1])]);
    expect(decodePacket(withUnknown)).toEqual({ type: PacketType.CLOSE_REQ, connectID: 5n });
  });

  it('rejects int64 values out of range when encoding', () => {
    expect(() => encodePacket({ type: PacketType.CLOSE_REQ, connectID: INT64_MAX + 1n })).toThrow(RangeError);
    expect(() => encodePacket({ type: PacketType.CLOSE_REQ, connectID: INT64_MIN - 1n })).toThrow(RangeError);
  });

  it('rejects malformed input with a clear error', () => {
    expect(() => decodePacket(Buffer.from([0x08, 0x04]))).toThrow(/carries no payload/);
    expect(() => decodePacket(Buffer.from([0x22, 0x10, 0x01]))).toThrow(PacketDecodeError);
    expect(() => decodePacket(Buffer.from([0x08, 0x02, 0x22, 0x00]))).toThrow(/does not match its payload/);
    expect(() => decodePacket(Buffer.from([0x08, 0xff]))).toThrow(/truncated varint/);
  });

  it('decodes a well-formed packet of an unknown type as unrecognized, to be ignored rather than break the stream', () => {
    expect(decodePacket(Buffer.from([0x08, 0x07]))).toEqual({ type: UNRECOGNIZED, declaredType: 7 });
    // An unknown payload field (9) under an unknown type.
    expect(decodePacket(Buffer.from([0x08, 0xc8, 0x01, 0x4a, 0x01, 0x00]))).toEqual({ type: UNRECOGNIZED, declaredType: 200 });
    // A known type without its payload, or an unknown type with a known payload, stays malformed.
    expect(() => decodePacket(Buffer.from([0x08, 0x04]))).toThrow(/carries no payload/);
    expect(() => decodePacket(Buffer.from([0x08, 0x07, 0x22, 0x00]))).toThrow(/does not match its payload/);
    expect(() => encodePacket({ type: UNRECOGNIZED, declaredType: 7 })).toThrow(/not one we can encode/);
  });

  it('makes positive int63 dial IDs', () => {
    expect(randomDialID(Buffer.from('ffffffffffffffff', 'hex'))).toBe(INT64_MAX);
    expect(randomDialID(Buffer.alloc(8))).toBe(1n);
  });
});
