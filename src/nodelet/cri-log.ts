/**
 * Container logs in the CRI log format, the one the kubelet reads
 * (kubernetes pkg/kubelet/kuberuntime/logs/logs.go) and container runtimes
 * write (containerd internal/cri/io/logger.go):
 *
 *   2016-10-06T00:17:09.669794202Z stdout P log content 1
 *   2016-10-06T00:17:09.669794203Z stderr F log content 2
 *
 * one record per line: RFC3339Nano time, stream, tag, a space, content. Tag
 * `F` ends a line (the newline itself is not stored); `P` is a piece of a
 * line that goes on in the next record of the same stream: a line longer than
 * the runtime's maximum record size, or output that had no newline when the
 * stream closed. A tag may carry more fields after a `:` (kept for
 * compatibility, ignored here).
 */
import fs from 'node:fs/promises';
import { Writable } from 'node:stream';
import { findTailStart } from './cri-log-tail.js';
import { formatCriRecord, parseCriRecord, type CriRecord, type LogStream } from './cri-record.js';
import { formatRfc3339NanoFixed, nanoClock, nsFromDate, parseRfc3339Nano } from './cri-time.js';
import { sleep } from '../kube/wait.js';

export { parseCriRecord } from './cri-record.js';

/** containerd's default max_container_log_line_size. */
const DEFAULT_MAX_RECORD_BYTES = 16 * 1024;

const NEWLINE = 0x0a;

// ---------------------------------------------------------------------------
// Writing

export interface CriLogWriterOptions {
  /** Longest content of one record; a longer line is cut into `P` records. */
  maxRecordBytes?: number;
  /** Nanoseconds since the epoch (tests pin it). */
  clock?: () => bigint;
}

export interface CriLogSink {
  /** Pipe the container's stdout here. */
  stdout: Writable;
  stderr: Writable;
  /**
   * Writes what is left of an unfinished line as a `P` record, waits for all
   * records to reach the file and closes it. Writes after this are dropped.
   */
  close(): Promise<void>;
}

/** Cuts one stream's output into records: full lines, and `P` pieces of at most `max` bytes. */
class LineSplitter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(
    private readonly stream: LogStream,
    private readonly max: number,
  ) {}

  push(chunk: Buffer, now: bigint, out: Buffer[]): void {
    let from = 0;
    for (;;) {
      const nl = chunk.indexOf(NEWLINE, from);
      if (nl < 0) break;
      this.add(chunk.subarray(from, nl), now, out);
      out.push(formatCriRecord(now, this.stream, false, this.take()));
      from = nl + 1;
    }
    if (from < chunk.length) this.add(chunk.subarray(from), now, out);
  }

  /** The unfinished line, as a `P` record (the stream ended without a newline). */
  flush(now: bigint, out: Buffer[]): void {
    if (this.pendingBytes > 0) out.push(formatCriRecord(now, this.stream, true, this.take()));
  }

  /** Adds to the unfinished line; everything beyond `max` bytes goes out as `P` records right away. */
  private add(piece: Buffer, now: bigint, out: Buffer[]): void {
    let rest = piece;
    while (this.pendingBytes + rest.length > this.max) {
      const room = this.max - this.pendingBytes;
      this.pending.push(rest.subarray(0, room));
      this.pendingBytes += room;
      out.push(formatCriRecord(now, this.stream, true, this.take()));
      rest = rest.subarray(room);
    }
    if (rest.length) {
      // Copy: the caller's buffer may be reused once its write callback ran.
      this.pending.push(Buffer.from(rest));
      this.pendingBytes += rest.length;
    }
  }

  private take(): Buffer {
    const b = this.pending.length === 1 ? (this.pending[0] as Buffer) : Buffer.concat(this.pending, this.pendingBytes);
    this.pending = [];
    this.pendingBytes = 0;
    return b;
  }
}

/**
 * Writes a container's stdout and stderr into one CRI log file, each record
 * stamped with the time its data arrived. stdout and stderr records are
 * appended in arrival order through one queue. Write errors (disk full, the
 * pod directory removed) drop the data: a container never stops because its
 * log cannot be written.
 */
export class CriLogWriter {
  private chain: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly clock: () => bigint;
  private readonly max: number;

  private constructor(
    private readonly handle: fs.FileHandle,
    opts: CriLogWriterOptions,
  ) {
    this.clock = opts.clock ?? nanoClock();
    this.max = Math.max(1, opts.maxRecordBytes ?? DEFAULT_MAX_RECORD_BYTES);
  }

  /** Opens (creates, mode 0600) `file` for appending. */
  static async open(file: string, opts: CriLogWriterOptions = {}): Promise<CriLogSink> {
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(file, 'a', 0o600);
      await handle.chmod(0o600);
    } catch (err) {
      throw new Error(`could not open container log ${file}: ${(err as Error).message}`);
    }
    const writer = new CriLogWriter(handle, opts);
    const splitters = [new LineSplitter('stdout', writer.max), new LineSplitter('stderr', writer.max)] as const;
    const [stdout, stderr] = splitters.map((s) => writer.streamFor(s));
    return { stdout: stdout as Writable, stderr: stderr as Writable, close: () => writer.close(splitters) };
  }

  private streamFor(splitter: LineSplitter): Writable {
    return new Writable({
      write: (chunk: Buffer | string, encoding, done) => {
        if (this.closed) return done();
        const records: Buffer[] = [];
        splitter.push(typeof chunk === 'string' ? Buffer.from(chunk, encoding) : chunk, this.clock(), records);
        // append never rejects (a failed write drops the record, as a full disk would).
        void this.append(records).then(() => done());
      },
      final: (done) => {
        if (this.closed) return done();
        const records: Buffer[] = [];
        splitter.flush(this.clock(), records);
        void this.append(records).then(() => done());
      },
    });
  }

  private append(records: Buffer[]): Promise<void> {
    if (!records.length) return this.chain;
    const data = records.length === 1 ? (records[0] as Buffer) : Buffer.concat(records);
    this.chain = this.chain.then(() =>
      this.handle.write(data).then(
        () => undefined,
        () => undefined,
      ),
    );
    return this.chain;
  }

  private async close(splitters: readonly LineSplitter[]): Promise<void> {
    if (this.closed) return this.chain;
    const records: Buffer[] = [];
    const now = this.clock();
    for (const s of splitters) s.flush(now, records);
    void this.append(records);
    this.closed = true;
    this.chain = this.chain.then(() => this.handle.close().catch(() => undefined));
    return this.chain;
  }
}

// ---------------------------------------------------------------------------
// Reading

/** The options of a pod log request (core/v1 PodLogOptions) that apply to one container's file. */
export interface ContainerLogOptions {
  follow?: boolean;
  /** The last n lines (a line cut into `P` records counts once). */
  tailLines?: number;
  /** Only lines written at or after this time (RFC 3339 or a Date). */
  sinceTime?: string | Date;
  /** Only lines of the last n seconds; with sinceTime too, the later of the two wins (as in the kubelet). */
  sinceSeconds?: number;
  /** Prefix each line with its time, RFC3339Nano with nine digits. */
  timestamps?: boolean;
  /** Stop after this many bytes of output (prefixes included; the last line may be cut). */
  limitBytes?: number;
  /** One stream only (PodLogOptions.stream); tailLines then counts that stream's lines. */
  stream?: 'All' | 'Stdout' | 'Stderr';
}

export interface FollowControl {
  /** Ends the stream (the client went away). */
  signal?: AbortSignal;
  /**
   * Whether the container still runs. When it has stopped, following ends once
   * everything in the file was read: its writer must be closed before this
   * turns false.
   */
  stillRunning?: () => boolean;
  /** How often a followed file is checked for new data. */
  pollMs?: number;
  /** For sinceSeconds. */
  now?: () => Date;
}

const READ_BYTES = 64 * 1024;
/** An unfinished line of one stream is written out once it is this long (the rest follows without a prefix). */
const MAX_JOINED_BYTES = 64 * 1024;
const DEFAULT_POLL_MS = 200;

class StopReading extends Error {}

/** Writes joined lines to `out`, applying since, timestamps and limitBytes. */
class LineEmitter {
  private readonly pending = new Map<LogStream, { time: bigint; parts: Buffer[]; bytes: number }>();
  /** Streams in the middle of a line already partly written out (no prefix before the rest). */
  private readonly midLine = new Set<LogStream>();
  private remaining: number;

  constructor(
    private readonly out: Writable,
    private readonly since: bigint | null,
    private readonly timestamps: boolean,
    limitBytes: number | undefined,
    private readonly signal: AbortSignal | undefined,
  ) {
    this.remaining = limitBytes !== undefined && limitBytes >= 0 ? limitBytes : Number.POSITIVE_INFINITY;
    if (this.remaining === 0) throw new StopReading();
  }

  async record(r: CriRecord): Promise<void> {
    if (this.since !== null && r.time < this.since) return;
    let p = this.pending.get(r.stream);
    if (!p) {
      p = { time: r.time, parts: [], bytes: 0 };
      this.pending.set(r.stream, p);
    }
    // A piece that waits for the rest of its line is copied: the record points into the reader's buffer.
    p.parts.push(r.partial ? Buffer.from(r.content) : r.content);
    p.bytes += r.content.length;
    if (!r.partial) {
      p.parts.push(Buffer.from('\n'));
      this.pending.delete(r.stream);
      await this.write(r.stream, p.time, p.parts);
      this.midLine.delete(r.stream);
    } else if (p.bytes >= MAX_JOINED_BYTES) {
      this.pending.delete(r.stream);
      await this.write(r.stream, p.time, p.parts);
      this.midLine.add(r.stream);
    }
  }

  /** The end: unfinished lines go out as they are, without a newline. */
  async flush(): Promise<void> {
    for (const [stream, p] of [...this.pending]) {
      this.pending.delete(stream);
      await this.write(stream, p.time, p.parts);
      this.midLine.add(stream);
    }
  }

  private async write(stream: LogStream, time: bigint, parts: Buffer[]): Promise<void> {
    if (this.timestamps && !this.midLine.has(stream)) parts.unshift(Buffer.from(`${formatRfc3339NanoFixed(time)} `, 'latin1'));
    let data = Buffer.concat(parts);
    const last = data.length >= this.remaining;
    if (last) data = data.subarray(0, this.remaining);
    this.remaining -= data.length;
    if (data.length) await writeOut(this.out, data, this.signal);
    if (last) throw new StopReading();
  }
}

function outGone(out: Writable): boolean {
  return out.destroyed || out.writableEnded;
}

async function writeOut(out: Writable, data: Buffer, signal: AbortSignal | undefined): Promise<void> {
  if (outGone(out) || signal?.aborted) throw new StopReading();
  if (out.write(data)) return;
  await new Promise<void>((resolve) => {
    const done = () => {
      out.off('drain', done);
      out.off('close', done);
      out.off('error', done);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    out.on('drain', done);
    out.on('close', done);
    out.on('error', done);
    signal?.addEventListener('abort', done);
  });
  if (outGone(out) || signal?.aborted) throw new StopReading();
}

function sinceOf(opts: ContainerLogOptions, now: () => Date): bigint | null {
  let since: bigint | null = null;
  if (opts.sinceSeconds !== undefined) since = nsFromDate(now()) - BigInt(Math.floor(opts.sinceSeconds)) * 1_000_000_000n;
  if (opts.sinceTime !== undefined) {
    const t = opts.sinceTime instanceof Date ? nsFromDate(opts.sinceTime) : parseRfc3339Nano(opts.sinceTime);
    if (t === null) throw new Error(`sinceTime ${JSON.stringify(opts.sinceTime)} is not an RFC 3339 time`);
    if (since === null || t > since) since = t;
  }
  return since;
}

async function openWhenThere(file: string, follow: boolean, ctl: FollowControl): Promise<fs.FileHandle | null> {
  for (;;) {
    try {
      return await fs.open(file, 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`could not open container log ${file}: ${(err as Error).message}`);
    }
    if (!follow || ctl.signal?.aborted) return null;
    const running = ctl.stillRunning ? ctl.stillRunning() : true;
    if (!running) {
      // Created just before the container stopped?
      return fs.open(file, 'r').catch(() => null);
    }
    await sleep(ctl.pollMs ?? DEFAULT_POLL_MS, ctl.signal);
  }
}

/** The file at `file` is no longer the one we hold open (rotated on a restart, or removed). */
async function replaced(file: string, handle: fs.FileHandle): Promise<boolean> {
  const [ours, now] = await Promise.all([handle.stat(), fs.stat(file).catch(() => null)]);
  return !now || now.ino !== ours.ino || now.dev !== ours.dev;
}

/**
 * Streams one container's CRI log file to `out` the way the kubelet answers
 * `GET /containerLogs/...`: stdout and stderr in file order, `P` records
 * joined into their lines. Works on `<container>.log` and on
 * `<container>.previous.log` alike. A missing file gives no output (when
 * following, it is waited for). With `follow`, new records are streamed until
 * the signal aborts, `out` closes, or the container has stopped and the file
 * was read to its end (also when the file was rotated away by a restart).
 * Resolves when done; does not end `out`.
 */
export async function streamContainerLog(file: string, opts: ContainerLogOptions, out: Writable, ctl: FollowControl = {}): Promise<void> {
  const follow = !!opts.follow;
  const since = sinceOf(opts, ctl.now ?? (() => new Date()));
  let emitter: LineEmitter;
  try {
    emitter = new LineEmitter(out, since, !!opts.timestamps, opts.limitBytes, ctl.signal);
  } catch (err) {
    if (err instanceof StopReading) return;
    throw err;
  }
  const handle = await openWhenThere(file, follow, ctl);
  if (!handle) return;
  try {
    const size = (await handle.stat()).size;
    const only: LogStream | undefined = opts.stream === 'Stdout' ? 'stdout' : opts.stream === 'Stderr' ? 'stderr' : undefined;
    const { start, skip } =
      opts.tailLines !== undefined && opts.tailLines >= 0 ? await findTailStart(handle, size, opts.tailLines, only) : { start: 0, skip: new Set<number>() };
    const wanted = (r: CriRecord | null): r is CriRecord => r !== null && (only === undefined || r.stream === only);
    let position = start;
    let rest = Buffer.alloc(0);
    let restAt = start;
    const buf = Buffer.alloc(READ_BYTES);

    /** Reads and emits everything up to the current end; an unfinished last record stays in `rest`. */
    const readToEnd = async (): Promise<void> => {
      for (;;) {
        if (ctl.signal?.aborted || outGone(out)) throw new StopReading();
        const { bytesRead } = await handle.read(buf, 0, buf.length, position);
        if (bytesRead === 0) return;
        position += bytesRead;
        let data = rest.length ? Buffer.concat([rest, buf.subarray(0, bytesRead)]) : buf.subarray(0, bytesRead);
        let dataAt = restAt;
        for (;;) {
          const nl = data.indexOf(NEWLINE);
          if (nl < 0) break;
          const line = data.subarray(0, nl);
          const at = dataAt;
          data = data.subarray(nl + 1);
          dataAt += nl + 1;
          if (skip.has(at)) continue;
          const record = parseCriRecord(line);
          if (wanted(record)) await emitter.record(record);
        }
        rest = Buffer.from(data);
        restAt = dataAt;
      }
    };

    /** The last record had no newline and nothing more will come: take it as it is. */
    const finish = async (): Promise<void> => {
      if (rest.length && !skip.has(restAt)) {
        const record = parseCriRecord(rest);
        if (wanted(record)) await emitter.record(record);
      }
      await emitter.flush();
    };

    try {
      if (!follow) {
        await readToEnd();
        await finish();
        return;
      }
      for (;;) {
        // Checked before reading: whatever a stopped container wrote is in the file by now.
        const running = ctl.stillRunning ? ctl.stillRunning() : true;
        const gone = running ? await replaced(file, handle) : false;
        await readToEnd();
        if (!running || gone) {
          await finish();
          return;
        }
        await sleep(ctl.pollMs ?? DEFAULT_POLL_MS, ctl.signal);
      }
    } catch (err) {
      if (err instanceof StopReading) return;
      throw err;
    }
  } finally {
    await handle.close().catch(() => undefined);
  }
}
