import * as grpc from '@grpc/grpc-js';
import { decodePacket, encodePacket, PacketDecodeError, type Packet } from './packet.js';

/** gRPC method paths; the upstream protos have no package name. */
export const PROXY_METHOD = '/ProxyService/Proxy';
export const CONNECT_METHOD = '/AgentService/Connect';

/** Metadata keys (gRPC lower-cases them on the wire). */
export const Header = {
  agentID: 'agentid',
  agentIdentifiers: 'agentidentifiers',
  serverID: 'serverid',
  serverCount: 'servercount',
  /** ocm-lab extension: the peer understands FLOW packets (per-connection pause/resume). */
  flowControl: 'x-ocm-lab-flow-control',
} as const;

/** A received packet together with the exact bytes it came in, so it can be forwarded without re-encoding. */
export type WirePacket = Packet & { raw: Buffer };

/** What we hand to a stream: a packet, or bytes already encoded (forwarding). */
export type Outgoing = Packet | Buffer;

export function serialize(p: Outgoing): Buffer {
  return Buffer.isBuffer(p) ? p : encodePacket(p);
}

export function deserialize(buf: Buffer): WirePacket {
  const p = decodePacket(buf) as WirePacket;
  p.raw = buf;
  return p;
}

/** A received message that is not a valid packet; `reason` says why. */
export interface MalformedPacket {
  type: 'malformed';
  reason: string;
  raw: Buffer;
}

/**
 * For the server's side: grpc-js answers a deserializer's exception with a bare
 * INTERNAL "Error deserializing request" and logs nothing, so the server takes
 * the failure as a value and closes the stream itself, saying why.
 */
function deserializeOrMalformed(buf: Buffer): WirePacket | MalformedPacket {
  try {
    return deserialize(buf);
  } catch (err) {
    if (!(err instanceof PacketDecodeError)) throw err;
    return { type: 'malformed', reason: err.message, raw: buf };
  }
}

/** The server's view: requests are received packets (or malformed ones), responses are what it sends. */
function bidi(path: string): grpc.MethodDefinition<WirePacket | MalformedPacket, Outgoing> {
  return {
    path,
    requestStream: true,
    responseStream: true,
    requestSerialize: (p) => serialize(p as Outgoing),
    requestDeserialize: deserializeOrMalformed,
    responseSerialize: serialize,
    responseDeserialize: deserialize,
  };
}

export const proxyServiceDefinition: grpc.ServiceDefinition = { Proxy: bidi(PROXY_METHOD) };
export const agentServiceDefinition: grpc.ServiceDefinition = { Connect: bidi(CONNECT_METHOD) };

export type TunnelServerStream = grpc.ServerDuplexStream<WirePacket | MalformedPacket, Outgoing>;
export type TunnelClientStream = grpc.ClientDuplexStream<Outgoing, WirePacket>;

/** Largest DATA payload we put in one packet (upstream peers accept up to 4 MiB messages). */
export const MAX_DATA_CHUNK = 256 * 1024;

/** Message size limit we accept; generous so a peer's large packets never break a stream. */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

export function firstMetadataValue(md: grpc.Metadata, key: string): string | undefined {
  const v = md.get(key);
  if (v.length === 0) return undefined;
  const first = v[0]!;
  return typeof first === 'string' ? first : first.toString('utf8');
}

/** `host:port` → [host, port]; accepts `[v6]:port`. */
export function splitHostPort(address: string): [string, string] {
  const m = /^\[([^\]]+)\]:(\d+)$/.exec(address) ?? /^([^:]*):(\d+)$/.exec(address);
  if (!m) throw new Error(`address ${JSON.stringify(address)} is not host:port`);
  return [m[1]!, m[2]!];
}
