import zlib from 'node:zlib';

/** A zip file that cannot be read: truncated, corrupted, or using a feature module zips never use. */
export class ZipFormatError extends Error {}

/** One file of a zip as its central directory describes it. */
export interface ZipEntry {
  name: string;
  /** 0 stored, 8 deflated: the only two the Go module proxy writes. */
  method: number;
  crc32: number;
  compressedSize: number;
  size: number;
  localHeaderOffset: number;
}

const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
const CENTRAL_DIRECTORY_HEADER = 0x02014b50;
const LOCAL_FILE_HEADER = 0x04034b50;
const END_RECORD_SIZE = 22;
/** Bit 0 of the general purpose flags: the entry is encrypted. */
const ENCRYPTED = 0x1;

function endRecordOffset(zip: Buffer): number {
  // The end record is the last thing in the file, followed only by a comment of at most 64 KiB.
  const lowest = Math.max(0, zip.length - END_RECORD_SIZE - 0xffff);
  for (let at = zip.length - END_RECORD_SIZE; at >= lowest; at--) {
    if (zip.readUInt32LE(at) === END_OF_CENTRAL_DIRECTORY && at + END_RECORD_SIZE + zip.readUInt16LE(at + 20) === zip.length) return at;
  }
  throw new ZipFormatError('no end of central directory record (truncated, or not a zip file)');
}

/** Every entry of the zip, in central directory order. */
export function zipEntries(zip: Buffer): ZipEntry[] {
  if (zip.length < END_RECORD_SIZE) throw new ZipFormatError(`${zip.length} bytes are too short for a zip file`);
  const end = endRecordOffset(zip);
  const count = zip.readUInt16LE(end + 10);
  const directorySize = zip.readUInt32LE(end + 12);
  let at = zip.readUInt32LE(end + 16);
  if (count === 0xffff || directorySize === 0xffffffff || at === 0xffffffff) throw new ZipFormatError('zip64 archives are not supported');
  if (at + directorySize > end) throw new ZipFormatError('the central directory lies outside the file');
  const entries: ZipEntry[] = [];
  for (let i = 0; i < count; i++) {
    if (at + 46 > end || zip.readUInt32LE(at) !== CENTRAL_DIRECTORY_HEADER) throw new ZipFormatError(`central directory entry ${i} is damaged`);
    const nameLength = zip.readUInt16LE(at + 28);
    const next = at + 46 + nameLength + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
    if (next > end) throw new ZipFormatError(`central directory entry ${i} runs past the directory`);
    const entry: ZipEntry = {
      name: zip.toString('utf8', at + 46, at + 46 + nameLength),
      method: zip.readUInt16LE(at + 10),
      crc32: zip.readUInt32LE(at + 16),
      compressedSize: zip.readUInt32LE(at + 20),
      size: zip.readUInt32LE(at + 24),
      localHeaderOffset: zip.readUInt32LE(at + 42),
    };
    if (zip.readUInt16LE(at + 8) & ENCRYPTED) throw new ZipFormatError(`${entry.name}: encrypted entries are not supported`);
    entries.push(entry);
    at = next;
  }
  return entries;
}

/** The uncompressed bytes of one entry, checked against its size and CRC-32. */
export function zipEntryData(zip: Buffer, entry: ZipEntry): Buffer {
  const header = entry.localHeaderOffset;
  if (header + 30 > zip.length || zip.readUInt32LE(header) !== LOCAL_FILE_HEADER) throw new ZipFormatError(`${entry.name}: local header is damaged`);
  const start = header + 30 + zip.readUInt16LE(header + 26) + zip.readUInt16LE(header + 28);
  if (start + entry.compressedSize > zip.length) throw new ZipFormatError(`${entry.name}: data runs past the end of the file`);
  const raw = zip.subarray(start, start + entry.compressedSize);
  let data: Buffer;
  if (entry.method === 0) data = raw;
  else if (entry.method === 8) {
    try {
      // maxOutputLength bounds what a lying size field can make us allocate.
      data = zlib.inflateRawSync(raw, { maxOutputLength: Math.max(entry.size, 1) });
    } catch (err) {
      throw new ZipFormatError(`${entry.name}: cannot inflate: ${(err as Error).message}`);
    }
  } else throw new ZipFormatError(`${entry.name}: compression method ${entry.method} is not supported (only stored and deflated)`);
  if (data.length !== entry.size) throw new ZipFormatError(`${entry.name}: ${data.length} bytes where the directory says ${entry.size}`);
  if (zlib.crc32(data) >>> 0 !== entry.crc32) throw new ZipFormatError(`${entry.name}: CRC-32 does not match`);
  return data;
}
