/**
 * One record of the CRI container log format (see cri-log.ts).
 */
import { formatRfc3339Nano, parseRfc3339Nano } from './cri-time.js';

export type LogStream = 'stdout' | 'stderr';

export interface CriRecord {
  /** Nanoseconds since the epoch. */
  time: bigint;
  stream: LogStream;
  /** True for `P`: the line goes on in the next record of this stream. */
  partial: boolean;
  content: Buffer;
}

const SPACE = 0x20;

/** One record without its newline; null when it is not in the CRI format. */
export function parseCriRecord(line: Buffer): CriRecord | null {
  const a = line.indexOf(SPACE);
  if (a < 0) return null;
  const time = parseRfc3339Nano(line.toString('latin1', 0, a));
  if (time === null) return null;
  const b = line.indexOf(SPACE, a + 1);
  if (b < 0) return null;
  const stream = line.toString('latin1', a + 1, b);
  if (stream !== 'stdout' && stream !== 'stderr') return null;
  let c = line.indexOf(SPACE, b + 1);
  // "<time> <stream> F" with nothing after it: an empty line written by a runtime that drops the last space.
  if (c < 0) c = line.length;
  const tag = line.toString('latin1', b + 1, c).split(':')[0];
  if (tag !== 'P' && tag !== 'F') return null;
  return { time, stream, partial: tag === 'P', content: line.subarray(Math.min(c + 1, line.length)) };
}

export function formatCriRecord(time: bigint, stream: LogStream, partial: boolean, content: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${formatRfc3339Nano(time)} ${stream} ${partial ? 'P' : 'F'} `, 'latin1'), content, Buffer.from('\n')]);
}
