import crypto from 'node:crypto';

/**
 * The `h1:` hash go.sum records for a module (golang.org/x/mod/sumdb/dirhash, Hash1): the base64 sha256 of
 * one line per file, `<sha256 hex of its bytes>  <its name>\n`, the files sorted by name as bytes.
 */
export function hash1(files: { name: string; data: Buffer }[]): string {
  const sorted = files.map((f) => ({ ...f, key: Buffer.from(f.name, 'utf8') })).sort((a, b) => Buffer.compare(a.key, b.key));
  const summary = crypto.createHash('sha256');
  for (const file of sorted) {
    if (file.name.includes('\n')) throw new Error(`dirhash: file name with a newline: ${JSON.stringify(file.name)}`);
    summary.update(`${crypto.createHash('sha256').update(file.data).digest('hex')}  ${file.name}\n`);
  }
  return `h1:${summary.digest('base64')}`;
}
