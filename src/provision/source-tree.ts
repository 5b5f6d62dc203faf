import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DigestMismatchError, InvalidInputError, MissingPrerequisiteError } from '../errors.js';
import { tail } from '../util/exec.js';
import { escapeModulePath } from './gomod/proxy.js';
import type { SourceArchive } from './mirrors.js';

/**
 * Where a source archive's tree is kept once verified and extracted: `<cache>/go-sources/<module>@<version>-<sha256 prefix>/`.
 * The digest is part of the name, so a tree from an archive never stands for the module proxy's zip
 * (`<cache>/go-modules/`, verified by its go.sum hash) nor for another archive of the same version.
 */
export function sourceTreeDir(cache: string, module: string, version: string, sha256: string): string {
  return path.join(cache, 'go-sources', `${escapeModulePath(module)}@${escapeModulePath(version)}-${sha256.slice(0, 16)}`);
}

const exists = (p: string): Promise<boolean> =>
  fs.stat(p).then(
    () => true,
    () => false,
  );

async function sha256File(file: string): Promise<string> {
  const hash = crypto.createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** The module path a go.mod declares. */
function goModModule(goMod: string): string | undefined {
  return /^\s*module\s+"?([^\s"]+)"?/m.exec(goMod)?.[1];
}

/** The directory of an extracted archive that holds go.mod: the top, or its one directory (`git archive --prefix`). */
async function moduleRoot(extracted: string): Promise<string | null> {
  if (await exists(path.join(extracted, 'go.mod'))) return extracted;
  const entries = await fs.readdir(extracted, { withFileTypes: true });
  const only = entries.length === 1 ? entries[0] : undefined;
  if (only?.isDirectory() && (await exists(path.join(extracted, only.name, 'go.mod')))) return path.join(extracted, only.name);
  return null;
}

/**
 * Streams `file` through sha256 into `tar -xz` in `into`: the digest is of exactly the bytes tar read (one read,
 * no window in which the file could change between the check and the extraction). Resolves with the digest and,
 * when tar failed, what it said.
 */
async function hashWhileExtracting(file: string, into: string, signal?: AbortSignal): Promise<{ sha256: string; tarError?: string }> {
  const hash = crypto.createHash('sha256');
  const tar = spawn('tar', ['-xzf', '-', '-C', into, '--no-same-owner'], { stdio: ['pipe', 'ignore', 'pipe'] });
  let stderr = '';
  tar.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  // Never rejects: a tar that cannot start (not installed) is reported like one that failed.
  const exited = new Promise<{ code: number | null; error?: Error }>((resolve) => {
    tar.on('error', (error) => resolve({ code: null, error }));
    tar.on('close', (code) => resolve({ code }));
  });
  const hashing = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      done(null, chunk);
    },
  });
  let piped: unknown;
  await pipeline(createReadStream(file), hashing, tar.stdin, signal ? { signal } : {}).catch((err: unknown) => (piped = err));
  if (signal?.aborted) tar.kill('SIGKILL');
  const { code, error } = await exited;
  signal?.throwIfAborted();
  if (code === 0 && !piped) return { sha256: hash.digest('hex') };
  // tar stopped early (or the pipe broke): the digest of what it read is not the file's.
  const why = error ? `cannot run tar: ${error.message}` : stderr.trim() || String((piped as Error | undefined)?.message ?? `exit status ${code}`);
  return { sha256: await sha256File(file), tarError: tail(why, 5) };
}

/** Extractions of this process under way, by destination: both operators ask for OCM's tree at once. */
const underWay = new Map<string, Promise<string>>();

/**
 * The source tree of `module@version` from a source archive (mirrors.ts SourceArchive): verified against its
 * sha256 while tar extracts it into a scratch directory beside the destination, then renamed into place whole
 * (sourceTreeDir). A tree already there is used as it is, without reading the archive again. Throws
 * DigestMismatchError (exit 7: the file, the expected and the actual digest) when the archive is not the one
 * pinned, InvalidInputError (exit 2) when it holds no go.mod of `module`, MissingPrerequisiteError (exit 3)
 * when it cannot be read or extracted; nothing is left behind then.
 */
export function ensureSourceTree(
  archive: SourceArchive,
  module: string,
  version: string,
  opts: { cacheDir: string; progress?: (line: string) => void; signal?: AbortSignal },
): Promise<string> {
  const dest = sourceTreeDir(opts.cacheDir, module, version, archive.sha256);
  let pending = underWay.get(dest);
  if (!pending) {
    pending = (async () => ((await exists(dest)) ? dest : extract(archive, module, version, dest, opts)))().finally(() => underWay.delete(dest));
    underWay.set(dest, pending);
  }
  return pending;
}

async function extract(
  archive: SourceArchive,
  module: string,
  version: string,
  dest: string,
  opts: { progress?: (line: string) => void; signal?: AbortSignal },
): Promise<string> {
  const named = `${archive.file} (${archive.from})`;
  const st = await fs.stat(archive.file).catch((err: NodeJS.ErrnoException) => err);
  if (st instanceof Error || !st.isFile()) {
    throw new MissingPrerequisiteError(
      `cannot read the source archive of ${module}@${version}: ${named}: ${st instanceof Error ? (st.code ?? st.message) : 'not a file'}`,
      { hint: `name the .tar.gz of ${module} at ${version} that exists, or leave ${archive.from} out to ask the Go module proxy` },
    );
  }
  opts.progress?.(`extracting ${archive.file} (checking its sha256)`);
  await fs.mkdir(path.dirname(dest), { recursive: true });
  const scratch = await fs.mkdtemp(path.join(path.dirname(dest), `.${path.basename(dest)}.extract-`));
  try {
    const { sha256, tarError } = await hashWhileExtracting(archive.file, scratch, opts.signal);
    if (sha256 !== archive.sha256) {
      throw new DigestMismatchError(`source archive ${named} of ${module}@${version}`, archive.sha256, sha256, {
        hint:
          `${archive.file} is not the archive ocm-lab pins for ${module}@${version}; name the right one, ` +
          'or (for a tree of your own) its sha256 under sources: in a mirrors file (docs/provisioning.md, "Mirrors")',
      });
    }
    if (tarError !== undefined) {
      throw new MissingPrerequisiteError(`tar could not extract the source archive ${named}: ${tarError}`, {
        hint: 'check that tar and gzip work on this machine (the archive itself has the pinned sha256)',
      });
    }
    const root = await moduleRoot(scratch);
    const declared = root ? goModModule(await fs.readFile(path.join(root, 'go.mod'), 'utf8')) : undefined;
    if (!root || declared !== module) {
      throw new InvalidInputError(
        `source archive ${named} does not hold ${module}: ` +
          (root ? `its go.mod declares ${declared ?? 'no module'}` : 'no go.mod at its top or under its one directory'),
        { hint: `name a .tar.gz of ${module} at ${version} (e.g. git archive --prefix=<dir>/ of the tag, with vendor/)` },
      );
    }
    await fs.rename(root, dest).catch(async (err: NodeJS.ErrnoException) => {
      // Another run put the same verified tree there first.
      if (!(await exists(dest))) throw err;
    });
    opts.progress?.(`extracted ${module}@${version} from ${archive.file}`);
    return dest;
  } finally {
    await fs.rm(scratch, { recursive: true, force: true });
  }
}

/** What a named source archive would give right now, without extracting it (`ocm-lab versions`). */
export type SourceArchiveState =
  { state: 'extracted'; dir: string } | { state: 'verified' } | { state: 'mismatch'; actual: string } | { state: 'unreadable'; reason: string };

/** The tree is in the cache already, else the file's sha256 against the one it is held to (one read of the file). */
export async function sourceArchiveState(archive: SourceArchive, module: string, version: string, cache: string): Promise<SourceArchiveState> {
  const dir = sourceTreeDir(cache, module, version, archive.sha256);
  if (await exists(dir)) return { state: 'extracted', dir };
  try {
    const actual = await sha256File(archive.file);
    return actual === archive.sha256 ? { state: 'verified' } : { state: 'mismatch', actual };
  } catch (err) {
    return { state: 'unreadable', reason: (err as NodeJS.ErrnoException).code ?? (err as Error).message };
  }
}
