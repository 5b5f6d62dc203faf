import { execa } from 'execa';
import fs from 'node:fs/promises';
import path from 'node:path';

/** A path inside an image as tar members spell it: no leading `/` or `./`. */
export function memberPath(pathInImage: string): string {
  return path.posix.normalize(pathInImage.replace(/^\/+/, '')).replace(/^(\.\/)+/, '');
}

/**
 * What one layer says about `file` (a member path), from the layer's member list:
 * `present` (it holds the file; `member` is its name as listed), `deleted` (a whiteout
 * `.wh.<name>` for it or an ancestor, or an opaque `.wh..wh..opq` in an ancestor
 * directory: lower layers do not count), or `absent` (look in the layer below).
 */
export function lookUp(members: readonly string[], file: string): { state: 'present'; member: string } | { state: 'deleted' | 'absent' } {
  const names = new Map(members.map((m) => [m.replace(/^(\.\/)+/, '').replace(/\/+$/, ''), m]));
  const member = names.get(file);
  if (member !== undefined) return { state: 'present', member };
  const parts = file.split('/');
  for (let i = 0; i < parts.length; i++) {
    const dir = parts.slice(0, i).join('/');
    const prefix = dir ? `${dir}/` : '';
    if (names.has(`${prefix}.wh.${parts[i]}`)) return { state: 'deleted' };
    if (i > 0 && names.has(`${prefix}.wh..wh..opq`)) return { state: 'deleted' };
  }
  return { state: 'absent' };
}

async function tar(args: string[], what: string): Promise<string> {
  const r = await execa('tar', args, { reject: false, all: true, maxBuffer: 64 << 20 });
  if (r.exitCode !== 0)
    throw new Error(
      `tar ${args.join(' ')} (${what}) failed: ${String(r.all ?? r.shortMessage)
        .trim()
        .split('\n')
        .slice(-5)
        .join('; ')}`,
    );
  return String(r.stdout ?? '');
}

/** Member names of a layer (gzip or plain tar: tar tells them apart itself). */
export async function listLayer(blob: string): Promise<string[]> {
  return (await tar(['-tf', blob], 'listing a layer')).split('\n').filter(Boolean);
}

/** Extracts one member of a layer into `dir`; returns the extracted file, which must be a regular file. */
export async function extractMember(blob: string, member: string, dir: string): Promise<string> {
  await fs.mkdir(dir, { recursive: true });
  await tar(['-xf', blob, '-C', dir, '--no-same-owner', member], `extracting ${member}`);
  const file = path.join(dir, member);
  const stat = await fs.lstat(file);
  if (!stat.isFile()) throw new Error(`${member} in the image is not a regular file (a link or directory); it cannot be taken out on its own`);
  return file;
}
