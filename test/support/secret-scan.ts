import fs from 'node:fs/promises';
import path from 'node:path';

/** Every regular file under `dir` (symlinks not followed). */
export async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string) => {
    for (const e of await fs.readdir(d, { withFileTypes: true }).catch(() => [])) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.isFile()) out.push(p);
    }
  };
  await walk(dir);
  return out;
}

const JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/**
 * The parts of a credential that must never be printed, as strings to look for: a JWT's signature
 * (the part that makes it usable), each line of a PEM private key's body, a kubeconfig's token and
 * client key, any other secret value without spaces. Certificates are public and yield nothing.
 */
export function secretNeedles(credential: string): string[] {
  const text = credential.trim();
  if (JWT.test(text)) return [text.split('.')[2]!];
  if (text.includes('PRIVATE KEY-----')) {
    return text
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l.length >= 40 && !l.startsWith('-----'));
  }
  if (text.includes('BEGIN CERTIFICATE')) return [];
  if (/^users:/m.test(text)) {
    const tokens = [...text.matchAll(/^\s*token:\s*(\S+)/gm)].flatMap((m) => secretNeedles(m[1]!));
    const keys = [...text.matchAll(/^\s*client-key-data:\s*(\S+)/gm)].flatMap((m) => [
      m[1]!.slice(0, 64),
      ...secretNeedles(Buffer.from(m[1]!, 'base64').toString('utf8')),
    ]);
    return [...tokens, ...keys];
  }
  // Random secrets, not names: a DNS-style name (a namespace in a token Secret) is not one.
  return text.length >= 16 && !/\s/.test(text) && !/^[a-z0-9.-]+$/.test(text) ? [text] : [];
}

/** Files among `files` that hold any needle, with the first needle found (shortened, so the report leaks nothing). */
export async function filesHolding(files: string[], needles: string[]): Promise<{ file: string; needle: string }[]> {
  const found: { file: string; needle: string }[] = [];
  for (const file of files) {
    const text = await fs.readFile(file, 'utf8').catch(() => '');
    const hit = needles.find((n) => text.includes(n));
    if (hit) found.push({ file, needle: `${hit.slice(0, 6)}…(${hit.length} chars)` });
  }
  return found;
}

/** True for a file that holds a credential: a private key, or a kubeconfig with a token or client key. */
export async function isCredentialFile(file: string): Promise<boolean> {
  const text = await fs.readFile(file, 'utf8').catch(() => '');
  return text.includes('PRIVATE KEY-----') || (/^users:/m.test(text) && /^\s*(token|client-key-data):/m.test(text));
}
