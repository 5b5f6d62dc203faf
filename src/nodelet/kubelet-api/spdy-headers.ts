/**
 * SPDY/3 name/value header blocks and their compression.
 *
 * Each direction of a connection is one zlib stream (with the SPDY/3 dictionary) that
 * every header block continues, sync-flushed at the end of each block. Rather than keep
 * a zlib context alive across asynchronous stream calls, each side keeps the last 32 KiB
 * of uncompressed header bytes (the deflate window, starting with the dictionary) and
 * compresses/decompresses one block at a time as raw deflate with that window as the
 * preset dictionary. Because the peer flushes at every block boundary, no deflate block
 * spans two frames, so this is exactly equivalent to one long-lived context.
 */
import { createRequire } from 'node:module';
import zlib from 'node:zlib';

const require = createRequire(import.meta.url);
// The exact dictionary bytes from the SPDY/3 draft, as shipped by spdy-transport (Go's spdystream uses the same 1423 bytes).
const SPDY3_DICTIONARY: Buffer = (require('spdy-transport/lib/spdy-transport/protocol/spdy/dictionary.js') as Record<number, Buffer>)[3]!;

const WINDOW = 32 * 1024;
/** Far above any real header block; stops a compressed block from inflating without bound. */
const MAX_HEADER_BLOCK = 1024 * 1024;

/** Header names lowercased (SPDY requires it); a value holding several values separates them with NUL. */
export type SpdyHeaders = Record<string, string>;

export function adler32(buf: Uint8Array): number {
  let a = 1;
  let b = 0;
  for (let i = 0; i < buf.length;) {
    // 3800 bytes keep the sums far below 2^31 before each modulo.
    const end = Math.min(i + 3800, buf.length);
    for (; i < end; i++) {
      a += buf[i]!;
      b += a;
    }
    a %= 65521;
    b %= 65521;
  }
  return ((b << 16) | a) >>> 0;
}

export function encodeHeaderBlock(headers: SpdyHeaders): Buffer {
  const entries = Object.entries(headers);
  const parts: Buffer[] = [];
  const count = Buffer.alloc(4);
  count.writeUInt32BE(entries.length);
  parts.push(count);
  for (const [name, value] of entries) {
    const n = Buffer.from(name.toLowerCase(), 'utf8');
    const v = Buffer.from(value, 'utf8');
    const nl = Buffer.alloc(4);
    nl.writeUInt32BE(n.length);
    const vl = Buffer.alloc(4);
    vl.writeUInt32BE(v.length);
    parts.push(nl, n, vl, v);
  }
  return Buffer.concat(parts);
}

export function decodeHeaderBlock(block: Buffer): SpdyHeaders {
  const headers: SpdyHeaders = {};
  let off = 0;
  const u32 = (): number => {
    if (off + 4 > block.length) throw new Error('truncated SPDY header block');
    const v = block.readUInt32BE(off);
    off += 4;
    return v;
  };
  const bytes = (len: number): string => {
    if (off + len > block.length) throw new Error('truncated SPDY header block');
    const s = block.toString('utf8', off, off + len);
    off += len;
    return s;
  };
  const count = u32();
  for (let i = 0; i < count; i++) {
    const name = bytes(u32()).toLowerCase();
    const value = bytes(u32());
    headers[name] = name in headers ? `${headers[name]}\0${value}` : value;
  }
  return headers;
}

/** The first value of a header (SPDY joins repeated values with NUL). */
export function headerValue(headers: SpdyHeaders, name: string): string | undefined {
  return headers[name.toLowerCase()]?.split('\0')[0];
}

function appendWindow(window: Buffer, data: Buffer): Buffer {
  const joined = Buffer.concat([window, data]);
  return joined.length > WINDOW ? joined.subarray(joined.length - WINDOW) : joined;
}

/** The outgoing header compression context of one connection. */
export class HeaderDeflater {
  private window: Buffer = SPDY3_DICTIONARY;
  private started = false;

  compress(headers: SpdyHeaders): Buffer {
    const raw = encodeHeaderBlock(headers);
    const body = zlib.deflateRawSync(raw, { dictionary: this.window, finishFlush: zlib.constants.Z_SYNC_FLUSH, level: 9 });
    this.window = appendWindow(this.window, raw);
    if (this.started) return body;
    this.started = true;
    return Buffer.concat([zlibHeaderWithDictionary(), body]);
  }
}

/** The incoming header decompression context of one connection. */
export class HeaderInflater {
  private window: Buffer = SPDY3_DICTIONARY;
  private started = false;

  decompress(block: Buffer): SpdyHeaders {
    let deflate = block;
    if (!this.started) {
      deflate = block.subarray(zlibHeaderLength(block));
      this.started = true;
    }
    const raw = zlib.inflateRawSync(deflate, { dictionary: this.window, finishFlush: zlib.constants.Z_SYNC_FLUSH, maxOutputLength: MAX_HEADER_BLOCK });
    this.window = appendWindow(this.window, raw);
    return decodeHeaderBlock(raw);
  }
}

/** CMF 0x78 (deflate, 32 KiB window), FLG with FDICT and a valid check, then the dictionary's Adler-32. */
function zlibHeaderWithDictionary(): Buffer {
  const cmf = 0x78;
  let flg = 0x20;
  flg |= 31 - ((cmf * 256 + flg) % 31 || 31);
  const header = Buffer.alloc(6);
  header[0] = cmf;
  header[1] = flg;
  header.writeUInt32BE(adler32(SPDY3_DICTIONARY), 2);
  return header;
}

function zlibHeaderLength(block: Buffer): number {
  if (block.length < 2) throw new Error('SPDY header block too short for a zlib header');
  const cmf = block[0]!;
  const flg = block[1]!;
  if ((cmf & 0x0f) !== 8 || (cmf * 256 + flg) % 31 !== 0) throw new Error('SPDY header block does not start with a zlib header');
  if (!(flg & 0x20)) return 2;
  if (block.length < 6) throw new Error('SPDY header block too short for the zlib dictionary id');
  const dictId = block.readUInt32BE(2);
  if (dictId !== adler32(SPDY3_DICTIONARY)) {
    throw new Error(`SPDY header block uses zlib dictionary ${dictId.toString(16)}, not the SPDY/3 dictionary`);
  }
  return 6;
}
