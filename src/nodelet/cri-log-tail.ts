import type fs from 'node:fs/promises';
import { parseCriRecord, type LogStream } from './cri-record.js';

const BLOCK_BYTES = 64 * 1024;
const NEWLINE = 0x0a;

/** The records of a file from the last to the first, each with the offset it starts at. */
async function* recordsBackward(handle: fs.FileHandle, size: number): AsyncGenerator<{ at: number; line: Buffer }> {
  let pos = size;
  // The start of a record that began in an earlier block: bytes [pos, pos + carry.length).
  let carry = Buffer.alloc(0);
  while (pos > 0) {
    const len = Math.min(BLOCK_BYTES, pos);
    pos -= len;
    const block = Buffer.alloc(len);
    await handle.read(block, 0, len, pos);
    const data = carry.length ? Buffer.concat([block, carry]) : block;
    let end = data.length;
    while (end > 0) {
      const nl = data.lastIndexOf(NEWLINE, end - 1);
      if (nl < 0) break;
      if (end > nl + 1) yield { at: pos + nl + 1, line: data.subarray(nl + 1, end) };
      end = nl;
    }
    carry = Buffer.from(data.subarray(0, end));
  }
  if (carry.length) yield { at: 0, line: carry };
}

/**
 * Where reading has to start to get the last `lines` lines of a CRI log, a
 * line being all the records of one stream up to and including its `F`
 * record (or up to the end of the file). Records of other lines that lie
 * between that start and the end (another stream's older line, interleaved)
 * are returned in `skip`, by offset. With `only`, the other stream's records
 * do not count (the reader drops them).
 */
export async function findTailStart(handle: fs.FileHandle, size: number, lines: number, only?: LogStream): Promise<{ start: number; skip: Set<number> }> {
  const skip = new Set<number>();
  if (lines <= 0) return { start: size, skip };
  const seen = new Set<LogStream>();
  /** Streams whose line is counted but whose first record is not found yet: the earliest record so far. */
  const open = new Map<LogStream, number>();
  let counted = 0;
  let start = size;
  for await (const { at, line } of recordsBackward(handle, size)) {
    const r = parseCriRecord(line);
    if (!r || (only !== undefined && r.stream !== only)) continue;
    // Read backwards, an F record ends a line; so does the last P record of a stream (its unfinished last line).
    const endsLine = !r.partial || !seen.has(r.stream);
    seen.add(r.stream);
    if (endsLine) {
      const earliest = open.get(r.stream);
      if (earliest !== undefined) {
        start = Math.min(start, earliest);
        open.delete(r.stream);
      }
      if (counted < lines) {
        counted++;
        open.set(r.stream, at);
      } else {
        skip.add(at);
      }
    } else if (open.has(r.stream)) {
      open.set(r.stream, at);
    } else {
      skip.add(at);
    }
    if (counted >= lines && open.size === 0) break;
  }
  for (const earliest of open.values()) start = Math.min(start, earliest);
  return { start, skip };
}
