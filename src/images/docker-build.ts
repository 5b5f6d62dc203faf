import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { withCacheLock } from '../provision/lock.js';
import { docker, dockerInspect } from './docker.js';
import { imageCacheDir, type ResolvedImageOptions } from './options.js';

/** Every image we build carries the key of its inputs, so a present image with another key is rebuilt. */
export const LABEL_IMAGE_KEY = 'dev.ocm-lab.image-key';

/** sha256 (hex, 16 chars) of any JSON-able description of an image's inputs. */
export function imageKey(inputs: unknown): string {
  return crypto.createHash('sha256').update(JSON.stringify(inputs)).digest('hex').slice(0, 16);
}

/** `<cache>/kind/images/<ref with / and : as ->-<key>.tar` */
export function imageTarFile(cache: string, ref: string, key: string): string {
  return path.join(imageCacheDir(cache, 'images'), `${ref.replace(/[/:@]/g, '-')}-${key}.tar`);
}

/** The key label of a local image, or null when there is no such image. */
export async function localImageKey(ref: string): Promise<string | null> {
  const [image] = await dockerInspect<{ Config?: { Labels?: Record<string, string> | null } }>('image', [ref]);
  if (!image) return null;
  return image.Config?.Labels?.[LABEL_IMAGE_KEY] ?? '';
}

export interface BuiltImage {
  ref: string;
  key: string;
  /** How it got into the engine this time. */
  source: 'present' | 'loaded' | 'built';
  /** The cached `docker save` tarball. */
  tar: string;
}

/**
 * The image `ref` with inputs `key` in the engine: already there (one inspect),
 * else `docker load`ed from the cached tarball, else made by `build` and saved
 * to the cache for the next time. `needTar`: the caller reads the tarball
 * (to import it elsewhere), so a present image without one is saved.
 */
export async function ensureImage(
  ref: string,
  key: string,
  build: () => Promise<void>,
  opts: ResolvedImageOptions,
  { needTar = false }: { needTar?: boolean } = {},
): Promise<BuiltImage> {
  const tar = imageTarFile(opts.cache, ref, key);
  const tarPresent = async () => !needTar || Boolean(await fs.stat(tar).catch(() => null));
  if ((await localImageKey(ref)) === key && (await tarPresent())) return { ref, key, source: 'present', tar };
  // One lock per image: building the node image ensures the component images (and those the base) inside its own lock.
  const lockDir = path.join(imageCacheDir(opts.cache, 'images'), '.locks', ref.replace(/[/:@]/g, '-'));
  return withCacheLock(
    lockDir,
    async () => {
      if ((await localImageKey(ref)) === key) {
        if (!(await tarPresent())) await saveImage(ref, tar, opts);
        return { ref, key, source: 'present', tar };
      }
      if (await fs.stat(tar).catch(() => null)) {
        opts.progress(`docker load ${path.basename(tar)}`);
        await docker(['load', '-q', '-i', tar], { signal: opts.signal });
        if ((await localImageKey(ref)) === key) return { ref, key, source: 'loaded', tar };
        opts.progress(`${path.basename(tar)} did not hold ${ref} with key ${key}; rebuilding`);
      }
      const previous = await localImageId(ref);
      await build();
      const got = await localImageKey(ref);
      if (got !== key) throw new Error(`internal: building ${ref} left an image with key ${got ?? '(none)'}, wanted ${key}`);
      await saveImage(ref, tar, opts);
      await pruneStale(ref, previous, tar);
      return { ref, key, source: 'built', tar };
    },
    { onWait: () => opts.progress(`waiting for another ocm-lab building ${ref}`), signal: opts.signal },
  );
}

async function localImageId(ref: string): Promise<string | null> {
  const [image] = await dockerInspect<{ Id?: string }>('image', [ref]);
  return image?.Id ?? null;
}

/**
 * After a rebuild: the tarballs of the image's older keys, and the image the
 * tag named before (unless a container still uses it: then rmi refuses).
 */
async function pruneStale(ref: string, previousId: string | null, keep: string): Promise<void> {
  const dir = path.dirname(keep);
  const prefix = path.basename(imageTarFile('/', ref, 'KEY')).replace(/KEY\.tar$/, '');
  for (const entry of await fs.readdir(dir).catch(() => [] as string[])) {
    if (entry !== path.basename(keep) && entry.startsWith(prefix) && /^[0-9a-f]{16}\.tar$/.test(entry.slice(prefix.length))) {
      await fs.rm(path.join(dir, entry), { force: true });
    }
  }
  if (previousId && previousId !== (await localImageId(ref))) await docker(['rmi', previousId], { allowFailure: true });
}

async function saveImage(ref: string, tar: string, opts: ResolvedImageOptions): Promise<void> {
  opts.progress(`docker save ${ref}`);
  await fs.mkdir(path.dirname(tar), { recursive: true });
  const partial = `${tar}.partial`;
  try {
    await docker(['save', '-o', partial, ref], { signal: opts.signal });
    await fs.rename(partial, tar);
  } finally {
    await fs.rm(partial, { force: true });
  }
}

/** A file of a build context: text or a file to copy, with its mode. */
export type ContextFile = { content: string | Buffer; mode?: number } | { from: string; mode?: number };

/**
 * `docker build` of a generated Dockerfile over a generated context (a temp dir,
 * removed after). Files carry their modes in the context because COPY --chmod
 * needs BuildKit, which not every engine has.
 */
export async function buildImage(ref: string, dockerfile: string, files: Record<string, ContextFile>, opts: ResolvedImageOptions): Promise<void> {
  await fs.mkdir(imageCacheDir(opts.cache, 'build'), { recursive: true });
  const dir = await fs.mkdtemp(path.join(imageCacheDir(opts.cache, 'build'), 'ctx-'));
  try {
    for (const [rel, file] of Object.entries(files)) {
      const target = path.join(dir, rel);
      await fs.mkdir(path.dirname(target), { recursive: true });
      if ('from' in file) await fs.copyFile(file.from, target);
      else await fs.writeFile(target, file.content);
      await fs.chmod(target, file.mode ?? 0o644);
    }
    await fs.writeFile(path.join(dir, 'Dockerfile'), dockerfile);
    opts.progress(`docker build -t ${ref}`);
    await docker(['build', '-q', '-t', ref, dir], { signal: opts.signal });
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/** `docker import` of a rootfs tarball with Dockerfile-style changes (import refuses STOPSIGNAL: use buildImage for that). */
export async function importRootfs(tar: string, ref: string, changes: string[], opts: ResolvedImageOptions): Promise<void> {
  opts.progress(`docker import ${path.basename(tar)} ${ref}`);
  await docker(['import', ...changes.flatMap((c) => ['--change', c]), tar, ref], { signal: opts.signal });
}

/** Name for a throw-away build container (`ocm-lab-build-…`, so leftovers can be found by name). */
export function buildContainerName(purpose: string): string {
  return `ocm-lab-build-${purpose}-${crypto.randomBytes(3).toString('hex')}`;
}

/** Removes a container and its anonymous volumes, whatever its state. */
export async function removeContainer(name: string): Promise<void> {
  await docker(['rm', '-f', '-v', name], { allowFailure: true });
}

export async function removeImage(ref: string): Promise<void> {
  await docker(['rmi', ref], { allowFailure: true });
}
