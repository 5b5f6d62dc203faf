import net from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { encodePacket, PacketType, type Packet } from '../../../src/tunnel/packet.js';
import { CONNECT_METHOD, Header, PROXY_METHOD, deserialize, serialize, type WirePacket } from '../../../src/tunnel/wire.js';
import type { TunnelPKI } from './fixture.js';
import { Rng as FuzzRng, fuzzSeed as seedFromEnv } from '../fuzz/rng.js';

// Tools for feeding the tunnel input a well-behaved peer never sends: raw
// gRPC streams that put any bytes on the wire, a seeded packet generator, and
// hand-built encodings (unknown types, a type that contradicts its payload).

/** The fuzz suites' seeded generator, with tunnel IDs: the same seed gives the same packets. */
export class Rng extends FuzzRng {
  /** An int64 from a small pool that collides with real IDs, or anywhere in range. */
  id(): bigint {
    if (this.chance(0.7)) return BigInt(this.int(6));
    const hi = BigInt(this.int(2 ** 32));
    const lo = BigInt(this.int(2 ** 32));
    return BigInt.asIntN(64, (hi << 32n) | lo);
  }
}

/** The seed of this run: $TUNNEL_FUZZ_SEED to replay one, else a fresh one (printed by the tests). */
export function fuzzSeed(): number {
  return seedFromEnv('TUNNEL_FUZZ_SEED');
}

function varint(v: number): number[] {
  const out: number[] = [];
  while (v >= 0x80) {
    out.push((v % 128) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return out;
}

/** A Packet with any `type` value and any payload field number, as protobuf bytes. */
export function rawPacket(type: number, member: number | undefined, body: Buffer = Buffer.alloc(0)): Buffer {
  const parts: number[] = [];
  if (type !== 0) parts.push(0x08, ...varint(type));
  const head = Buffer.from(parts);
  if (member === undefined) return head;
  return Buffer.concat([head, Buffer.from([...varint(member * 8 + 2), ...varint(body.length)]), body]);
}

/** Labels of what the generator makes; the tests count each. */
type HostileKind =
  'garbage' | 'truncated' | 'unknown-type' | 'type-mismatch' | 'DIAL_REQ' | 'DIAL_RSP' | 'DATA' | 'CLOSE_REQ' | 'CLOSE_RSP' | 'DIAL_CLS' | 'DRAIN' | 'FLOW';

const MALFORMED_KINDS: readonly HostileKind[] = ['garbage', 'truncated', 'type-mismatch'];

export interface Generated {
  kind: HostileKind;
  bytes: Buffer;
}

/** Oneof field numbers of the known payloads (2–8 and FLOW's 100). */
const MEMBERS = [2, 3, 4, 5, 6, 7, 8, 100];
const MEMBER_TYPE: Record<number, number> = { 2: 0, 3: 1, 4: 4, 5: 2, 6: 3, 7: 5, 8: 6, 100: 100 };

export function unknownTypePacket(rng: Rng): Buffer {
  const type = rng.chance(0.5) ? 7 + rng.int(93) : 101 + rng.int(1 << 20);
  // No payload, or one in a field no version of the protocol uses.
  return rng.chance(0.5) ? rawPacket(type, undefined) : rawPacket(type, 9 + rng.int(90), rng.bytes(rng.int(16)));
}

export function mismatchedPacket(rng: Rng): Buffer {
  const member = rng.pick(MEMBERS);
  let type = rng.pick(Object.values(PacketType) as number[]);
  if (type === MEMBER_TYPE[member]) type = MEMBER_TYPE[rng.pick(MEMBERS.filter((m) => m !== member))]!;
  return rawPacket(type, member, Buffer.alloc(0));
}

export interface GeneratorOptions {
  /** Addresses DIAL_REQs may carry; every one must be safe to dial (loopback only). */
  addresses: readonly string[];
  /** Weight of the malformed kinds (each kills the stream it is sent on). */
  malformed: number;
}

/** One random packet, biased towards IDs that collide with real connections. */
export function hostilePacket(rng: Rng, opts: GeneratorOptions): Generated {
  if (rng.chance(opts.malformed)) {
    const kind = rng.pick(MALFORMED_KINDS);
    if (kind === 'garbage') return { kind, bytes: rng.bytes(1 + rng.int(64)) };
    if (kind === 'truncated') {
      const whole = encodePacket({ type: PacketType.DATA, connectID: rng.id() || 1n, error: '', data: rng.bytes(8 + rng.int(32)) });
      return { kind, bytes: whole.subarray(0, 1 + rng.int(whole.length - 1)) };
    }
    return { kind, bytes: mismatchedPacket(rng) };
  }
  const kind = rng.pick<HostileKind>(['unknown-type', 'DIAL_REQ', 'DIAL_RSP', 'DATA', 'CLOSE_REQ', 'CLOSE_RSP', 'DIAL_CLS', 'DRAIN', 'FLOW']);
  let p: Packet;
  switch (kind) {
    case 'unknown-type':
      return { kind, bytes: unknownTypePacket(rng) };
    case 'DIAL_REQ':
      p = {
        type: PacketType.DIAL_REQ,
        protocol: rng.chance(0.9) ? 'tcp' : rng.pick(['udp', 'unix', '', 'TCP']),
        address: rng.pick(opts.addresses),
        random: rng.id(),
      };
      break;
    case 'DIAL_RSP':
      p = { type: PacketType.DIAL_RSP, random: rng.id(), connectID: rng.id(), error: rng.chance(0.3) ? 'fuzz' : '' };
      break;
    case 'DATA':
      p = { type: PacketType.DATA, connectID: rng.id(), error: '', data: rng.bytes(rng.int(64)) };
      break;
    case 'CLOSE_REQ':
      p = { type: PacketType.CLOSE_REQ, connectID: rng.id() };
      break;
    case 'CLOSE_RSP':
      p = { type: PacketType.CLOSE_RSP, connectID: rng.id(), error: '' };
      break;
    case 'DIAL_CLS':
      p = { type: PacketType.DIAL_CLS, random: rng.id() };
      break;
    case 'DRAIN':
      p = { type: PacketType.DRAIN };
      break;
    default:
      p = { type: PacketType.FLOW, connectID: rng.id(), paused: rng.chance(0.5) };
  }
  return { kind, bytes: encodePacket(p) };
}

/** Counts per input kind, printed by each suite for docs/reliability.md. */
export class Counts {
  private readonly m = new Map<string, number>();
  add(kind: string, n = 1): void {
    this.m.set(kind, (this.m.get(kind) ?? 0) + n);
  }
  total(): number {
    return [...this.m.values()].reduce((a, b) => a + b, 0);
  }
  render(title: string): string {
    const rows = [...this.m.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `  ${k.padEnd(40)} ${v}`);
    return `${title}: ${this.total()} inputs\n${rows.join('\n')}`;
  }
}

/** A received message: a packet, or the bytes when they are not one. */
export type Received = WirePacket | { type: 'undecodable'; raw: Buffer };

function lenientDeserialize(buf: Buffer): Received {
  try {
    return deserialize(buf);
  } catch {
    return { type: 'undecodable', raw: buf };
  }
}

/** A gRPC stream that sends bytes as given (Buffer) or encodes packets, and records what comes back. */
export class RawStream {
  readonly received: Received[] = [];
  status: grpc.StatusObject | undefined;
  readonly headers: Promise<grpc.Metadata>;
  readonly closed: Promise<grpc.StatusObject>;
  private readonly waiters = new Set<() => void>();

  constructor(readonly call: grpc.ClientDuplexStream<Buffer | Packet, Received>) {
    this.headers = new Promise((resolve) => call.once('metadata', resolve));
    this.closed = new Promise((resolve) => {
      call.on('status', (s: grpc.StatusObject) => {
        this.status = s;
        resolve(s);
        this.wake();
      });
    });
    call.on('error', () => undefined);
    call.on('data', (p: Received) => {
      this.received.push(p);
      this.wake();
    });
  }

  send(p: Buffer | Packet): void {
    if (!this.call.writableEnded && !this.call.destroyed) this.call.write(Buffer.isBuffer(p) ? p : encodePacket(p));
  }

  /** Resolves with the first received message matching `pred` (already received or later). */
  next<T extends Received>(what: string, pred: (p: Received) => p is T, timeoutMs?: number): Promise<T>;
  next(what: string, pred: (p: Received) => boolean, timeoutMs?: number): Promise<Received>;
  next(what: string, pred: (p: Received) => boolean, timeoutMs = 10_000): Promise<Received> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        const hit = this.received.find(pred);
        if (hit) {
          done();
          resolve(hit);
        } else if (this.status) {
          done();
          reject(new Error(`stream closed (${grpc.status[this.status.code]}: ${this.status.details}) before ${what}; received ${describe(this.received)}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`no ${what} within ${timeoutMs} ms; received ${describe(this.received)}`));
      }, timeoutMs);
      const done = (): void => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      this.waiters.add(check);
      check();
    });
  }

  cancel(): void {
    this.call.cancel();
  }

  private wake(): void {
    for (const w of [...this.waiters]) w();
  }
}

function describe(ps: readonly Received[]): string {
  return `[${ps.map((p) => (p.type === 'undecodable' ? 'undecodable' : JSON.stringify({ ...p, raw: undefined, data: undefined }, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v)))).join(', ')}]`;
}

const rawMethod = { serialize: (b: Buffer | Packet) => serialize(b), deserialize: lenientDeserialize };

/** A gRPC client to a tunnel port with a certificate of our CA; message limits lifted so oversized frames can be sent. */
export function rawClient(port: number, pki: TunnelPKI, pair = pki.client): grpc.Client {
  const creds = grpc.credentials.createSsl(Buffer.from(pki.caPem), Buffer.from(pair.keyPem), Buffer.from(pair.certPem));
  return new grpc.Client(`127.0.0.1:${port}`, creds, {
    'grpc.ssl_target_name_override': 'localhost',
    'grpc.default_authority': 'localhost',
    'grpc.max_send_message_length': -1,
    'grpc.max_receive_message_length': -1,
  });
}

export function openProxyStream(client: grpc.Client): RawStream {
  return new RawStream(client.makeBidiStreamRequest(PROXY_METHOD, rawMethod.serialize, rawMethod.deserialize, new grpc.Metadata()));
}

export function openConnectStream(client: grpc.Client, agentID: string | undefined, identifiers: string): RawStream {
  const md = new grpc.Metadata();
  if (agentID !== undefined) md.set(Header.agentID, agentID);
  md.set(Header.agentIdentifiers, identifiers);
  return new RawStream(client.makeBidiStreamRequest(CONNECT_METHOD, rawMethod.serialize, rawMethod.deserialize, md));
}

export const isPacket =
  <N extends number>(type: N) =>
  (p: Received): p is Extract<WirePacket, { type: N }> =>
    p.type === type;

/** A port on 127.0.0.1 nothing listens on (bound, then released). */
export async function closedLoopbackPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

export const OVERSIZED_BYTES = 16 * 1024 * 1024 + 1024;

/**
 * One long-lived connection through the tunnel to an echo target: each probe
 * sends fresh random bytes and expects exactly them back, so a byte injected
 * into or lost from this connection by someone else's input fails the probe.
 */
export class GoodConnection {
  private pending = Buffer.alloc(0);
  private wake: (() => void) | undefined;
  private failure: Error | undefined;
  probes = 0;

  constructor(
    private readonly sock: NodeJS.ReadWriteStream & { destroy(): void },
    readonly label: string,
  ) {
    sock.on('data', (d: Buffer) => {
      this.pending = Buffer.concat([this.pending, d]);
      this.wake?.();
    });
    sock.on('error', (err: Error) => {
      this.failure = err;
      this.wake?.();
    });
    sock.on('end', () => {
      this.failure ??= new Error('the connection ended');
      this.wake?.();
    });
  }

  async probe(bytes = 4096, timeoutMs = 10_000): Promise<void> {
    const data = Buffer.from(Array.from({ length: bytes }, () => Math.floor(Math.random() * 256)));
    this.sock.write(data);
    const deadline = Date.now() + timeoutMs;
    while (this.pending.length < bytes) {
      if (this.failure) throw new Error(`good connection ${this.label} broke: ${this.failure.message}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`good connection ${this.label}: ${this.pending.length} of ${bytes} echoed bytes within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
    }
    const got = this.pending.subarray(0, bytes);
    this.pending = this.pending.subarray(bytes);
    if (!got.equals(data)) throw new Error(`good connection ${this.label}: the echo differs from what was sent (foreign bytes got in)`);
    if (this.pending.length) throw new Error(`good connection ${this.label}: ${this.pending.length} bytes more than were sent came back`);
    this.probes++;
  }

  close(): void {
    this.sock.destroy();
  }
}
