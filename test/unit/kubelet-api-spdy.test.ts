import { once } from 'node:events';
import net from 'node:net';
import zlib from 'node:zlib';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { encodeExecStatus, JsonObjectSplitter, parseExecRequest } from '../../src/nodelet/kubelet-api/exec.js';
import { parseLogOptions } from '../../src/nodelet/kubelet-api/logs.js';
import { invalidPortForwardStream } from '../../src/nodelet/kubelet-api/port-forward.js';
import {
  FLAG_FIN,
  FrameParser,
  FrameType,
  encodeData,
  encodeGoAway,
  encodePing,
  encodeRstStream,
  parseGoAway,
  parsePing,
  parseStreamHeaders,
  parseWindowUpdate,
  type RawFrame,
  encodeSynReply,
  encodeSynStream,
  parseSynStream,
} from '../../src/nodelet/kubelet-api/spdy-frames.js';
import { SpdySession, type SpdyStream } from '../../src/nodelet/kubelet-api/spdy-session.js';
import { adler32, decodeHeaderBlock, encodeHeaderBlock, HeaderDeflater, HeaderInflater, type SpdyHeaders } from '../../src/nodelet/kubelet-api/spdy-headers.js';

const require = createRequire(import.meta.url);
const DICT: Buffer = require('spdy-transport/lib/spdy-transport/protocol/spdy/dictionary.js')[3];

/** A long-lived zlib context with the SPDY dictionary, sync-flushed per block: what Go's spdy framer does. */
async function goLikeCompress(blocks: Buffer[]): Promise<Buffer[]> {
  const z = zlib.createDeflate({ dictionary: DICT, level: 9 });
  const out: Buffer[] = [];
  let cur: Buffer[] = [];
  z.on('data', (c: Buffer) => cur.push(c));
  for (const b of blocks) {
    await new Promise<void>((resolve) => {
      z.write(b);
      z.flush(zlib.constants.Z_SYNC_FLUSH, () => resolve());
    });
    await new Promise((r) => setImmediate(r));
    out.push(Buffer.concat(cur));
    cur = [];
  }
  z.close();
  return out;
}

async function goLikeDecompress(blocks: Buffer[]): Promise<Buffer[]> {
  const z = zlib.createInflate({ dictionary: DICT });
  const out: Buffer[] = [];
  let cur: Buffer[] = [];
  z.on('data', (c: Buffer) => cur.push(c));
  for (const b of blocks) {
    await new Promise<void>((resolve, reject) => {
      z.once('error', reject);
      z.write(b);
      z.flush(zlib.constants.Z_SYNC_FLUSH, () => {
        z.off('error', reject);
        resolve();
      });
    });
    await new Promise((r) => setImmediate(r));
    out.push(Buffer.concat(cur));
    cur = [];
  }
  z.close();
  return out;
}

describe('SPDY header blocks', () => {
  it('uses the 1423-byte SPDY/3 dictionary', () => {
    expect(DICT.length).toBe(1423);
    // Adler-32 of the dictionary, as it appears in Go's zlib header (FDICT).
    expect(adler32(DICT)).toBe(zlib.deflateSync(Buffer.alloc(0), { dictionary: DICT }).readUInt32BE(2));
  });

  it('encodes and decodes name/value blocks with lowercased names and NUL-joined values', () => {
    const raw = encodeHeaderBlock({ StreamType: 'error', port: '8080', multi: 'a\0b' });
    expect(raw.readUInt32BE(0)).toBe(3);
    expect(decodeHeaderBlock(raw)).toEqual({ streamtype: 'error', port: '8080', multi: 'a\0b' });
  });

  it('decompresses blocks from one long-lived compression context (as Go sends them)', async () => {
    const headers: SpdyHeaders[] = [
      { streamtype: 'error' },
      { streamtype: 'stdout' },
      { streamtype: 'data', port: '80', requestid: '0' },
      { streamtype: 'data', port: '80', requestid: '1' },
    ];
    const compressed = await goLikeCompress(headers.map((h) => encodeHeaderBlock(h)));
    const inflater = new HeaderInflater();
    expect(compressed.map((b) => inflater.decompress(b))).toEqual(headers);
    // later blocks really do reference earlier ones (so a fresh context could not read them)
    expect(compressed[3]!.length).toBeLessThan(encodeHeaderBlock(headers[3]!).length / 2);
  });

  it('compresses blocks that one long-lived decompression context reads (as Go reads them)', async () => {
    const deflater = new HeaderDeflater();
    const headers = Array.from({ length: 50 }, (_, i) => ({ streamtype: i % 2 ? 'data' : 'error', port: String(8000 + i), requestid: String(i) }));
    const blocks = headers.map((h) => deflater.compress(h));
    expect(blocks[0]![0]).toBe(0x78);
    expect(blocks[0]![1]! & 0x20).toBe(0x20); // FDICT
    const raw = await goLikeDecompress(blocks);
    expect(raw.map(decodeHeaderBlock)).toEqual(headers);
  });

  it('rejects a header block compressed with another dictionary', () => {
    const other = zlib.deflateSync(encodeHeaderBlock({ a: 'b' }), { dictionary: Buffer.from('not the spdy dictionary') });
    expect(() => new HeaderInflater().decompress(other)).toThrow(/not the SPDY\/3 dictionary/);
  });
});

describe('SPDY frames', () => {
  it('parses frames split at any byte boundary', () => {
    const deflater = new HeaderDeflater();
    const bytes = Buffer.concat([
      encodeSynStream(1, deflater.compress({ streamtype: 'error' })),
      encodeData(1, Buffer.from('hello'), false),
      encodeData(1, Buffer.alloc(0), true),
      encodePing(7),
      encodeGoAway(1, 0),
    ]);
    for (let cut = 1; cut < bytes.length; cut += 3) {
      const parser = new FrameParser();
      const frames = [...parser.push(bytes.subarray(0, cut)), ...parser.push(bytes.subarray(cut))];
      expect(frames.map((f) => (f.control ? `c${f.type}` : `d${f.streamId}:${f.data.toString()}:${f.flags}`))).toEqual([
        `c${FrameType.SynStream}`,
        'd1:hello:0',
        `d1::${FLAG_FIN}`,
        `c${FrameType.Ping}`,
        `c${FrameType.GoAway}`,
      ]);
    }
  });

  it('lays out SYN_STREAM and SYN_REPLY as SPDY/3 does', () => {
    const block = Buffer.from([1, 2, 3]);
    const syn = encodeSynStream(5, block, { fin: true });
    expect(syn.readUInt16BE(0)).toBe(0x8003);
    expect(syn.readUInt16BE(2)).toBe(FrameType.SynStream);
    expect(syn[4]).toBe(FLAG_FIN);
    expect(syn.readUInt32BE(4) & 0xffffff).toBe(10 + 3);
    expect(parseSynStream(syn.subarray(8))).toMatchObject({ streamId: 5, associatedId: 0, priority: 0 });
    const reply = encodeSynReply(5, block);
    expect(reply.readUInt32BE(4) & 0xffffff).toBe(4 + 3);
  });
});

describe('remotecommand details', () => {
  it('reads the channel flags kube-apiserver sends (input/output/error/tty) and the stdin/stdout names', () => {
    const q = new URLSearchParams('command=sh&command=-c&command=true&input=1&output=1&error=1');
    expect(parseExecRequest(['ns', 'p', 'c'], q)).toMatchObject({
      ns: 'ns',
      pod: 'p',
      container: 'c',
      command: ['sh', '-c', 'true'],
      stdin: true,
      stdout: true,
      stderr: true,
      tty: false,
    });
    expect(parseExecRequest(['ns', 'p', 'uid', 'c'], new URLSearchParams('command=ls&stdout=1&stderr=1&tty=1'))).toMatchObject({
      container: 'c',
      stdout: true,
      stderr: false,
      tty: true,
    });
    expect(parseExecRequest(['ns', 'p', 'c'], new URLSearchParams('command=ls'))).toMatchObject({ status: 400 });
  });

  it('writes v4 statuses as metav1.Status JSON and older ones as text', () => {
    expect(encodeExecStatus('v4.channel.k8s.io', { status: 'Success' })!.toString()).toBe('{"metadata":{},"status":"Success"}');
    const failure = {
      status: 'Failure' as const,
      message: 'command terminated with non-zero exit code: x',
      reason: 'NonZeroExitCode',
      details: { causes: [{ reason: 'ExitCode', message: '3' }] },
    };
    expect(JSON.parse(encodeExecStatus('v4.channel.k8s.io', failure)!.toString())).toEqual({ metadata: {}, ...failure });
    expect(encodeExecStatus('v3.channel.k8s.io', { status: 'Success' })).toBeUndefined();
    expect(encodeExecStatus('v2.channel.k8s.io', failure)!.toString()).toBe('command terminated with non-zero exit code: x');
  });

  it('splits terminal size objects however they are chunked', () => {
    const s = new JsonObjectSplitter();
    expect(s.push('{"Width":80,')).toEqual([]);
    expect(s.push('"Height":24}\n{"Width":1')).toEqual([{ Width: 80, Height: 24 }]);
    expect(s.push('00,"Height":30}{"Width":1,"Height":2}')).toEqual([
      { Width: 100, Height: 30 },
      { Width: 1, Height: 2 },
    ]);
  });
});

describe('containerLogs query', () => {
  const now = new Date('2026-11-23T10:00:00Z');
  it('decodes what kube-apiserver sends', () => {
    expect(parseLogOptions(new URLSearchParams('follow=true&tailLines=10&timestamps=true&previous=true&limitBytes=500'), now)).toEqual({
      follow: true,
      timestamps: true,
      previous: true,
      tailLines: 10,
      limitBytes: 500,
    });
    expect(parseLogOptions(new URLSearchParams('sinceSeconds=60'), now)).toMatchObject({ sinceTime: new Date('2026-11-23T09:59:00Z'), follow: false });
    expect(parseLogOptions(new URLSearchParams('sinceTime=2026-11-23T09:00:00Z'), now)).toMatchObject({ sinceTime: new Date('2026-11-23T09:00:00Z') });
    expect(parseLogOptions(new URLSearchParams('tail=5'), now)).toMatchObject({ tailLines: 5 });
    expect(parseLogOptions(new URLSearchParams('stream=Stderr'), now)).toMatchObject({ stream: 'Stderr' });
  });

  it('answers 400 for what it cannot decode and 422 for invalid options', () => {
    expect(parseLogOptions(new URLSearchParams('tailLines=abc'), now)).toMatchObject({ status: 400 });
    expect(parseLogOptions(new URLSearchParams('sinceTime=yesterday'), now)).toMatchObject({ status: 400 });
    expect(parseLogOptions(new URLSearchParams('tailLines=-1'), now)).toMatchObject({ status: 422 });
    expect(parseLogOptions(new URLSearchParams('sinceSeconds=5&sinceTime=2026-11-23T09:00:00Z'), now)).toMatchObject({ status: 422 });
  });
});

describe('port-forward stream headers', () => {
  it('requires a port and a stream type as the kubelet does', () => {
    expect(invalidPortForwardStream({ streamtype: 'data', port: '80', requestid: '0' })).toBeUndefined();
    expect(invalidPortForwardStream({ streamtype: 'data' })).toMatch(/port/);
    expect(invalidPortForwardStream({ streamtype: 'data', port: '0' })).toMatch(/must be > 0/);
    expect(invalidPortForwardStream({ streamtype: 'data', port: '99999' })).toMatch(/unable to parse/);
    expect(invalidPortForwardStream({ streamtype: 'stdin', port: '80' })).toMatch(/invalid stream type/);
  });
});

describe('SPDY session (server side, raw frames from the client)', () => {
  /** A server session on loopback and a raw client socket that collects the frames it receives. */
  async function pair(
    onStream: (s: SpdyStream) => void,
  ): Promise<{ client: net.Socket; frames: RawFrame[]; server: Promise<SpdySession>; cleanup: () => void }> {
    let resolveSession!: (s: SpdySession) => void;
    const server = new Promise<SpdySession>((r) => (resolveSession = r));
    const listener = net.createServer((sock) => {
      const session = new SpdySession(sock, { isServer: true });
      session.on('stream', onStream);
      resolveSession(session);
    });
    listener.listen(0, '127.0.0.1');
    await once(listener, 'listening');
    const client = net.connect((listener.address() as net.AddressInfo).port, '127.0.0.1');
    await once(client, 'connect');
    const frames: RawFrame[] = [];
    const parser = new FrameParser();
    client.on('data', (c: Buffer) => frames.push(...parser.push(c)));
    return { client, frames, server, cleanup: () => (client.destroy(), listener.close()) };
  }

  it('replies, sends WINDOW_UPDATE for consumed data, echoes PING and ignores data for unknown streams', async () => {
    const received: Buffer[] = [];
    const t = await pair((s) => {
      s.reply();
      s.on('data', (c: Buffer) => received.push(c));
    });
    try {
      const deflater = new HeaderDeflater();
      t.client.write(encodeSynStream(1, deflater.compress({ streamtype: 'data', port: '80' })));
      for (let i = 0; i < 4; i++) t.client.write(encodeData(1, Buffer.alloc(32 * 1024, i), false));
      t.client.write(encodeData(99, Buffer.from('nobody'), false));
      t.client.write(encodePing(1));
      await expect.poll(() => t.frames.filter((f) => f.control && f.type === FrameType.Ping).length).toBe(1);
      expect(parsePing((t.frames.find((f) => f.control && f.type === FrameType.Ping) as { payload: Buffer }).payload)).toBe(1);
      await expect.poll(() => Buffer.concat(received).length).toBe(128 * 1024);
      const reply = t.frames.find((f) => f.control && f.type === FrameType.SynReply) as { payload: Buffer };
      const { streamId, headerBlock } = parseStreamHeaders(reply.payload, 'SYN_REPLY');
      expect(streamId).toBe(1);
      expect(new HeaderInflater().decompress(headerBlock)).toEqual({});
      const acked = t.frames.filter((f) => f.control && f.type === FrameType.WindowUpdate).map((f) => parseWindowUpdate((f as { payload: Buffer }).payload));
      expect(acked.every((w) => w.streamId === 1)).toBe(true);
      expect(acked.reduce((n, w) => n + w.delta, 0)).toBeGreaterThanOrEqual(64 * 1024);
      expect((await t.server).streamCount).toBe(1);
    } finally {
      t.cleanup();
    }
  });

  it("sends without waiting for windows and closes after the client's GOAWAY once streams are done", async () => {
    const t = await pair((s) => {
      s.reply();
      s.end(Buffer.alloc(1024 * 1024, 7)); // far beyond SPDY's 64 KiB initial window
    });
    try {
      const deflater = new HeaderDeflater();
      t.client.write(encodeSynStream(1, deflater.compress({ streamtype: 'stdout' })));
      const dataBytes = (): number => t.frames.reduce((n, f) => n + (!f.control && f.streamId === 1 ? f.data.length : 0), 0);
      await expect.poll(dataBytes).toBe(1024 * 1024);
      expect(t.frames.some((f) => !f.control && f.streamId === 1 && (f.flags & FLAG_FIN) !== 0)).toBe(true);
      const closed = once(t.client, 'close');
      t.client.write(encodeGoAway(1, 0));
      t.client.write(encodeData(1, Buffer.alloc(0), true)); // our side of the stream ends too
      await closed;
      const goaway = t.frames.find((f) => f.control && f.type === FrameType.GoAway) as { payload: Buffer } | undefined;
      expect(goaway && parseGoAway(goaway.payload)).toEqual({ lastGoodStreamId: 1, status: 0 });
    } finally {
      t.cleanup();
    }
  });

  it('answers RST_STREAM from the peer by tearing the stream down', async () => {
    let stream: SpdyStream | undefined;
    const t = await pair((s) => {
      s.reply();
      stream = s;
    });
    try {
      const deflater = new HeaderDeflater();
      t.client.write(encodeSynStream(1, deflater.compress({ streamtype: 'data', port: '1' })));
      await expect.poll(() => stream).toBeDefined();
      const closed = once(stream!, 'close');
      t.client.write(encodeRstStream(1, 5));
      await closed;
      expect(stream!.resetByPeer).toBe(true);
      expect((await t.server).streamCount).toBe(0);
    } finally {
      t.cleanup();
    }
  });
});
