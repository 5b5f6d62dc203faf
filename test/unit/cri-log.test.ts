import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { beforeEach, describe, expect, it } from 'vitest';
import { CriLogWriter, parseCriRecord, streamContainerLog, type ContainerLogOptions, type FollowControl } from '../../src/nodelet/cri-log.js';
import { formatRfc3339Nano, formatRfc3339NanoFixed, parseRfc3339Nano } from '../../src/nodelet/cri-time.js';
import { useTempDir } from '../support/temp-dir.js';

const tmp = useTempDir('cri-log-', { each: true });
let file: string;
beforeEach(async () => {
  file = path.join(tmp.path, 'main.log');
});

/** A clock that starts at 2026-01-02T03:04:05.000000001Z and moves one second per call. */
function steppingClock(): () => bigint {
  let t = parseRfc3339Nano('2026-01-02T03:04:05.000000001Z') as bigint;
  return () => {
    const now = t;
    t += 1_000_000_000n;
    return now;
  };
}

/** Pipes a readable into a writable; resolves when the writable has finished. */
function once(from: NodeJS.ReadableStream, to: Writable): Promise<void> {
  return new Promise((resolve) => {
    to.once('finish', () => resolve());
    from.pipe(to);
  });
}

function write(w: Writable, data: string): Promise<void> {
  return new Promise((resolve, reject) => w.write(data, (err) => (err ? reject(err) : resolve())));
}

async function read(opts: ContainerLogOptions, ctl: FollowControl = {}, f = file): Promise<string> {
  const chunks: Buffer[] = [];
  const out = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk);
      done();
    },
  });
  await streamContainerLog(f, opts, out, ctl);
  return Buffer.concat(chunks).toString('utf8');
}

async function fileLines(): Promise<string[]> {
  return (await fs.readFile(file, 'utf8')).split('\n').slice(0, -1);
}

describe('CRI log timestamps', () => {
  it('formats like Go RFC3339Nano (trimmed) and RFC3339NanoFixed, parses any offset', () => {
    const t = parseRfc3339Nano('2016-10-06T00:17:09.669794202Z') as bigint;
    expect(formatRfc3339Nano(t)).toBe('2016-10-06T00:17:09.669794202Z');
    expect(formatRfc3339Nano(parseRfc3339Nano('2016-10-06T00:17:09.5Z') as bigint)).toBe('2016-10-06T00:17:09.5Z');
    expect(formatRfc3339Nano(parseRfc3339Nano('2016-10-06T00:17:09Z') as bigint)).toBe('2016-10-06T00:17:09Z');
    expect(formatRfc3339NanoFixed(parseRfc3339Nano('2016-10-06T00:17:09.5Z') as bigint)).toBe('2016-10-06T00:17:09.500000000Z');
    expect(parseRfc3339Nano('2016-10-06T02:17:09.1+02:00')).toBe(parseRfc3339Nano('2016-10-06T00:17:09.100Z'));
    expect(parseRfc3339Nano('yesterday')).toBeNull();
  });
});

describe('CriLogWriter', () => {
  it('writes one record per line, P for pieces of long lines and for output left without a newline, file mode 0600', async () => {
    const sink = await CriLogWriter.open(file, { clock: steppingClock(), maxRecordBytes: 8 });
    await write(sink.stdout, 'hello\nwor');
    await write(sink.stderr, 'oops\n');
    await write(sink.stdout, 'ld\n0123456789abcdefXY\n\n');
    await write(sink.stdout, 'no newline');
    await sink.close();
    expect(await fileLines()).toEqual([
      '2026-01-02T03:04:05.000000001Z stdout F hello',
      '2026-01-02T03:04:06.000000001Z stderr F oops',
      '2026-01-02T03:04:07.000000001Z stdout F world',
      '2026-01-02T03:04:07.000000001Z stdout P 01234567',
      '2026-01-02T03:04:07.000000001Z stdout P 89abcdef',
      '2026-01-02T03:04:07.000000001Z stdout F XY',
      '2026-01-02T03:04:07.000000001Z stdout F ',
      '2026-01-02T03:04:08.000000001Z stdout P no newli',
      '2026-01-02T03:04:09.000000001Z stdout P ne',
    ]);
    expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
  });

  it('a line of exactly the maximum is one F record; the stream ending flushes its unfinished line', async () => {
    const sink = await CriLogWriter.open(file, { clock: steppingClock(), maxRecordBytes: 4 });
    await write(sink.stdout, 'abcd\nxy');
    await new Promise<void>((resolve) => sink.stdout.end(resolve));
    await sink.close();
    expect((await fileLines()).map((l) => l.slice(31))).toEqual(['stdout F abcd', 'stdout P xy']);
  });

  it('never throws once closed, and keeps other streams working when piped', async () => {
    const sink = await CriLogWriter.open(file, { clock: steppingClock() });
    const source = new PassThrough();
    source.pipe(sink.stdout);
    source.write('before\n');
    await new Promise((r) => setTimeout(r, 20));
    await sink.close();
    source.write('after close\n');
    source.end('bye');
    await write(sink.stderr, 'late\n');
    await sink.close();
    await new Promise((r) => setTimeout(r, 20));
    expect((await fileLines()).map((l) => l.slice(31))).toEqual(['stdout F before']);
  });

  it('keeps memory bounded: a 1 MiB line without newline goes out as it arrives', async () => {
    const sink = await CriLogWriter.open(file, { clock: steppingClock() });
    const big = 'x'.repeat(1024 * 1024);
    await write(sink.stdout, big);
    // All but the last 16 KiB (the default maximum record) is in the file already.
    expect((await fs.stat(file)).size).toBeGreaterThanOrEqual(1024 * 1024 - 16 * 1024);
    await write(sink.stdout, '\n');
    await sink.close();
    const lines = await fileLines();
    expect(lines.length).toBe(64);
    expect(lines.slice(0, 63).every((l) => l.includes(' stdout P '))).toBe(true);
    expect(lines[63]).toMatch(/ stdout F x{16384}$/);
    const text = await read({});
    expect(text.length).toBe(big.length + 1);
    expect(text === `${big}\n`).toBe(true);
  });

  it("takes a real process's stdout and stderr through pipes", async () => {
    const sink = await CriLogWriter.open(file);
    const child = spawn(
      process.execPath,
      ['-e', 'process.stdout.write("out 1\\n"); setTimeout(() => { process.stderr.write("err 1\\n"); process.stdout.write("no newline at exit"); }, 30)'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const piped = Promise.all([once(child.stdout, sink.stdout), once(child.stderr, sink.stderr)]);
    await piped;
    await sink.close();
    expect(await read({})).toBe('out 1\nerr 1\nno newline at exit');
    const records = (await fileLines()).map((l) => parseCriRecord(Buffer.from(l)));
    expect(records.map((r) => `${r?.stream} ${r?.partial ? 'P' : 'F'}`)).toEqual(['stdout F', 'stderr F', 'stdout P']);
    expect(records.every((r, i) => i === 0 || (r?.time as bigint) >= (records[i - 1]?.time as bigint))).toBe(true);
  });

  it('reports a log file it cannot create', async () => {
    await expect(CriLogWriter.open(path.join(tmp.path, 'missing', 'x.log'))).rejects.toThrow(/could not open container log .*missing\/x\.log: ENOENT/);
  });
});

describe('streamContainerLog', () => {
  async function sample(): Promise<void> {
    const sink = await CriLogWriter.open(file, { clock: steppingClock(), maxRecordBytes: 4 });
    await write(sink.stdout, 'one\n'); // 05
    await write(sink.stdout, 'two-long'); // 06: P "two-", "long" pending
    await write(sink.stderr, 'err\n'); // 07: between the pieces of stdout's line
    await write(sink.stdout, '-line\nthree\n'); // 08: P "long", P "-lin", F "e", P "thre", F "e"
    await write(sink.stdout, 'four'); // 09: "four" fits one record: pending
    await sink.close(); // 10: P "four"
  }

  it('joins P records into their lines, stdout and stderr in file order', async () => {
    await sample();
    expect(await read({})).toBe('one\nerr\ntwo-long-line\nthree\nfour');
  });

  it('tailLines counts whole lines, skipping older lines interleaved with them', async () => {
    await sample();
    expect(await read({ tailLines: 1 })).toBe('four');
    expect(await read({ tailLines: 2 })).toBe('three\nfour');
    expect(await read({ tailLines: 3 })).toBe('two-long-line\nthree\nfour');
    expect(await read({ tailLines: 4 })).toBe('err\ntwo-long-line\nthree\nfour');
    expect(await read({ tailLines: 100 })).toBe('one\nerr\ntwo-long-line\nthree\nfour');
    expect(await read({ tailLines: 0 })).toBe('');
  });

  it('stream selects stdout or stderr; tailLines then counts that stream only', async () => {
    await sample();
    expect(await read({ stream: 'Stderr' })).toBe('err\n');
    expect(await read({ stream: 'Stdout', tailLines: 4 })).toBe('one\ntwo-long-line\nthree\nfour');
    expect(await read({ stream: 'All', tailLines: 4 })).toBe('err\ntwo-long-line\nthree\nfour');
  });

  it('timestamps prefix each line with the time of its first record, nine digits', async () => {
    await sample();
    expect(await read({ timestamps: true, tailLines: 3 })).toBe(
      '2026-01-02T03:04:06.000000001Z two-long-line\n2026-01-02T03:04:08.000000001Z three\n2026-01-02T03:04:10.000000001Z four',
    );
  });

  it('sinceTime and sinceSeconds drop older records; the later of both wins', async () => {
    await sample();
    expect(await read({ sinceTime: '2026-01-02T03:04:08Z' })).toBe('long-line\nthree\nfour');
    expect(await read({ sinceTime: new Date('2026-01-02T03:04:07.000000001Z') })).toBe('err\nlong-line\nthree\nfour');
    const now = () => new Date('2026-01-02T03:04:10Z');
    expect(await read({ sinceSeconds: 2 }, { now })).toBe('long-line\nthree\nfour');
    expect(await read({ sinceSeconds: 1 }, { now })).toBe('four');
    expect(await read({ sinceSeconds: 2, sinceTime: '2026-01-02T03:04:09Z' }, { now })).toBe('four');
    expect(await read({ sinceSeconds: 100, sinceTime: '2026-01-02T03:04:09Z' }, { now })).toBe('four');
    await expect(read({ sinceTime: 'soon' })).rejects.toThrow(/sinceTime "soon" is not an RFC 3339 time/);
  });

  it('limitBytes stops after that many bytes, prefixes included', async () => {
    await sample();
    expect(await read({ limitBytes: 6 })).toBe('one\ner');
    expect(await read({ limitBytes: 4 })).toBe('one\n');
    expect(await read({ limitBytes: 35, timestamps: true })).toBe('2026-01-02T03:04:05.000000001Z one\n');
  });

  it('tailLines reads from the end of a large file', async () => {
    const sink = await CriLogWriter.open(file, { clock: steppingClock() });
    for (let i = 0; i < 20; i++) await write(sink.stdout, Array.from({ length: 1000 }, (_, j) => `line ${i * 1000 + j}\n`).join(''));
    await sink.close();
    expect((await fs.stat(file)).size).toBeGreaterThan(4 * 64 * 1024);
    expect(await read({ tailLines: 3 })).toBe('line 19997\nline 19998\nline 19999\n');
    expect((await read({ tailLines: 15000 })).split('\n')[0]).toBe('line 5000');
  });

  it('a missing file gives no output; a .previous.log reads the same way', async () => {
    expect(await read({})).toBe('');
    expect(await read({ follow: true }, { stillRunning: () => false })).toBe('');
    await sample();
    const previous = path.join(tmp.path, 'main.previous.log');
    await fs.rename(file, previous);
    expect(await read({ tailLines: 1 }, {}, previous)).toBe('four');
  });

  it('skips lines that are not CRI records', async () => {
    await fs.writeFile(file, 'garbage\n2026-01-02T03:04:05Z stdout F ok\n2026-01-02T03:04:05Z stdin F no\n2026-01-02T03:04:05Z stdout F\n');
    expect(await read({})).toBe('ok\n\n');
    expect(parseCriRecord(Buffer.from('2026-01-02T03:04:05Z stdout F:x y z'))).toMatchObject({ stream: 'stdout', partial: false, content: Buffer.from('y z') });
  });

  it('follow streams appended lines and ends once the container stopped and all was read', async () => {
    let running = true;
    const sink = await CriLogWriter.open(file, { clock: steppingClock() });
    await write(sink.stdout, 'first\n');
    const seen: string[] = [];
    const out = new Writable({
      write(chunk: Buffer, _enc, done) {
        seen.push(chunk.toString());
        done();
      },
    });
    const following = streamContainerLog(file, { follow: true, tailLines: 1 }, out, { stillRunning: () => running, pollMs: 10 });
    await until(() => seen.join('') === 'first\n');
    await write(sink.stdout, 'second\npart');
    await until(() => seen.join('') === 'first\nsecond\n');
    await write(sink.stderr, 'third\n');
    await sink.close();
    running = false;
    await following;
    expect(seen.join('')).toBe('first\nsecond\nthird\npart');
  });

  it('follow waits for a file that does not exist yet, and ends on abort', async () => {
    const seen: string[] = [];
    const out = new Writable({
      write(chunk: Buffer, _enc, done) {
        seen.push(chunk.toString());
        done();
      },
    });
    const abort = new AbortController();
    const following = streamContainerLog(file, { follow: true, timestamps: true }, out, { signal: abort.signal, pollMs: 10 });
    await new Promise((r) => setTimeout(r, 50));
    const sink = await CriLogWriter.open(file, { clock: steppingClock() });
    await write(sink.stdout, 'hi\n');
    await until(() => seen.length > 0);
    abort.abort();
    await following;
    await sink.close();
    expect(seen.join('')).toBe('2026-01-02T03:04:05.000000001Z hi\n');
  });

  it('follow ends when the file is rotated away by a restart, after reading it to the end', async () => {
    const sink = await CriLogWriter.open(file, { clock: steppingClock() });
    await write(sink.stdout, 'run 1\n');
    const out = new PassThrough();
    let text = '';
    out.on('data', (d: Buffer) => (text += d.toString()));
    const following = streamContainerLog(file, { follow: true }, out, { stillRunning: () => true, pollMs: 10 });
    await until(() => text === 'run 1\n');
    await write(sink.stdout, 'last words\n');
    await sink.close();
    await fs.rename(file, path.join(tmp.path, 'main.previous.log'));
    const next = await CriLogWriter.open(file, { clock: steppingClock() });
    await write(next.stdout, 'run 2\n');
    await following;
    await next.close();
    expect(text).toBe('run 1\nlast words\n');
  });

  it('follow with limitBytes ends once the limit is reached', async () => {
    const sink = await CriLogWriter.open(file, { clock: steppingClock() });
    await write(sink.stdout, 'abc\n');
    const following = read({ follow: true, limitBytes: 6 }, { stillRunning: () => true, pollMs: 10 });
    await new Promise((r) => setTimeout(r, 30));
    await write(sink.stdout, 'defgh\n');
    expect(await following).toBe('abc\nde');
    await sink.close();
  });

  it('follow stops when the client goes away, even while out is full', async () => {
    const sink = await CriLogWriter.open(file, { clock: steppingClock() });
    await write(sink.stdout, `${'y'.repeat(100_000)}\n`.repeat(20));
    const out = new Writable({ highWaterMark: 1024, write: () => undefined }); // never drains
    const abort = new AbortController();
    const following = streamContainerLog(file, { follow: true }, out, { signal: abort.signal, pollMs: 10 });
    await new Promise((r) => setTimeout(r, 50));
    out.destroy();
    await following;
    await sink.close();
  });
});

async function until(check: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}
