import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';

/** This machine's Go module cache (`go env GOMODCACHE`'s default), where `go mod download` left real module zips. */
export const GOMODCACHE = process.env.GOMODCACHE || path.join(os.homedir(), 'go', 'pkg', 'mod');

/** The real zip and .ziphash `go mod download` stored for a module version, or null when this machine has none. */
export function cachedModuleZip(module: string, version: string): { zip: Buffer; ziphash: string } | null {
  const base = path.join(GOMODCACHE, 'cache', 'download', module, '@v', version);
  try {
    return { zip: fs.readFileSync(`${base}.zip`), ziphash: fs.readFileSync(`${base}.ziphash`, 'utf8').trim() };
  } catch {
    return null;
  }
}

/** A zip of stored (uncompressed) entries, written by hand: the reader must handle method 0 as well as deflate. */
export function storedZip(files: { name: string; data: Buffer }[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const { name, data } of files) {
    const nameBytes = Buffer.from(name, 'utf8');
    const crc = zlib.crc32(data) >>> 0;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, data);
    centrals.push(central, nameBytes);
    offset += 30 + nameBytes.length + data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(files.length, 8);
  end.writeUInt16LE(files.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** A module proxy on 127.0.0.1 serving `files` by URL path (404 otherwise); `requests` lists the paths asked for. */
export async function startModuleProxy(files: Map<string, Buffer>): Promise<{ base: string; requests: string[]; close: () => Promise<void> }> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(req.url ?? '');
    const body = files.get(req.url ?? '');
    res.writeHead(body ? 200 : 404, { 'content-type': body ? 'application/zip' : 'text/plain' });
    res.end(body ?? 'not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
