import crypto from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { addonImplementation, type LabConfig } from '../config/types.js';
import { OCM_IMAGE_USER, OCM_LAB_IMAGE, OCM_UPSTREAM_IMAGES, ocmImage, UPSTREAM_ADDON_IMAGES } from './catalogue.js';
import { ensureBinaries } from '../provision/index.js';
import type { Mirrors } from '../provision/mirrors.js';
import { pinnedReference, pullPinned, type PinnedImage } from './pinned-pull.js';
import { docker } from './docker.js';
import { baseImageKey, ensureBaseImage } from './base-image.js';
import { buildImage, ensureImage, imageKey, imageTarFile, LABEL_IMAGE_KEY, localImageKey, type BuiltImage } from './docker-build.js';
import { imageCacheDir, resolveImageOptions, type ImageBuildOptions, type ResolvedImageOptions } from './options.js';
import { productionModules, type ProductionModule } from './production-modules.js';

/**
 * The images the lab runs on its kind nodes: ours (`ocm-lab:<version>`), OCM's five
 * upstream images at the lab's OCM version and, for addons the lab runs from
 * upstream's build, upstream's addon images; all built here FROM the lab's
 * Debian base (where images come from, per runtime: src/images/catalogue.ts): OCM's and the addons' from the provisioned
 * binaries, ours with the repository's Dockerfile over this package's dist/ and
 * production node_modules, on a base that holds this machine's node.
 */

/** OCM's images as the lab builds them: the table every runtime shares (src/images/catalogue.ts). */
export const OCM_IMAGES = OCM_UPSTREAM_IMAGES.map((u) => ({ name: u.image, binary: u.binary, pathInImage: u.pathInImage }));

/** `ocm-lab/node-base:<node version>`: the lab's base with this machine's node at /usr/local/bin/node. */
export function nodeBaseImage(nodeVersion: string = process.version): string {
  return `ocm-lab/node-base:${nodeVersion}`;
}

/** What labImages and ensureLabImages read of a lab's configuration. */
export type LabImagesConfig = Pick<LabConfig, 'ocmVersion'> & Partial<Pick<LabConfig, 'addons' | 'addonImplementations'>>;

/** Upstream's addon images the lab runs: those of the addons it runs from upstream's build (none for a lab of ours). */
export function upstreamAddonImages(config: LabImagesConfig): (typeof UPSTREAM_ADDON_IMAGES)[number][] {
  return UPSTREAM_ADDON_IMAGES.filter((i) => (config.addons ?? []).includes(i.addon) && addonImplementation(config, i.addon) === 'upstream');
}

/** Every image the lab's nodes run, as pod specs name them: ocm-lab:<version> first, then OCM's, then upstream's addons'. */
export function labImages(config: LabImagesConfig): string[] {
  return [OCM_LAB_IMAGE, ...OCM_IMAGES.map((i) => ocmImage(i.name, config.ocmVersion)), ...upstreamAddonImages(config).map((i) => i.ref)];
}

/**
 * The official Node.js image ocm-lab:<version> is built FROM on the official path (the Dockerfile's default base too):
 * the LTS line's Debian bookworm slim image, pinned by its multi-platform index's digest (docs/notes.md#the-official-paths-docker-hub-pins).
 */
export const OFFICIAL_NODE_BASE: PinnedImage = {
  name: 'node:24-bookworm-slim',
  digest: 'sha256:6f7b03f7c2c8e2e784dcf9295400527b9b1270fd37b7e9a7285cf83b6951452d',
};

/** What ocm-lab:<version> is built FROM: the lab's Debian base with this machine's node (built here), or OFFICIAL_NODE_BASE (pulled by digest). */
type OwnImageBase = { kind: 'built' } | { kind: 'official'; mirrors: Mirrors };

export interface LabImageOptions extends ImageBuildOptions {
  /** The package root whose dist/, package.json and node_modules go into ocm-lab:<version> (default: this package). */
  packageRoot?: string;
  /** The node binary put in the node base (default: the one running now; the base is Debian bookworm, so its glibc fits a bookworm-built node). */
  nodeBinary?: string;
  /** Default: built. */
  ownBase?: OwnImageBase;
}

/**
 * Makes each of labImages(config) present in the Docker engine: there already
 * with the key of its inputs, loaded from the image cache, or built. Returns the
 * references, in labImages' order.
 */
export async function ensureLabImages(config: LabImagesConfig, options: LabImageOptions = {}): Promise<string[]> {
  await ensureLabImagesDetail(config, options);
  return labImages(config);
}

/** ensureLabImages, saying for each image whether it was present, loaded from the cache or built. */
export async function ensureLabImagesDetail(config: LabImagesConfig, options: LabImageOptions = {}): Promise<BuiltImage[]> {
  const opts = resolveImageOptions(options);
  const packageRoot = options.packageRoot ?? defaultPackageRoot();
  const nodeBinary = await fs.realpath(options.nodeBinary ?? process.execPath);
  return [
    await ensureOcmLabImage(opts, packageRoot, await ownImageBase(opts, options.ownBase ?? { kind: 'built' }, nodeBinary)),
    ...(await ensureOcmImages(config.ocmVersion, opts)),
    ...(await ensureUpstreamAddonImages(upstreamAddonImages(config), opts)),
  ];
}

/**
 * Our image alone (`ocm-lab:<version>`): kind's official path copies OCM's and the addons' images from their registries
 * instead of building them, and `up --runtime existing --image-registry` pushes it.
 */
export async function ensureOwnImage(options: LabImageOptions = {}): Promise<BuiltImage> {
  const opts = resolveImageOptions(options);
  const base = options.ownBase ?? { kind: 'built' };
  const nodeBinary = base.kind === 'built' ? await fs.realpath(options.nodeBinary ?? process.execPath) : '';
  return ensureOcmLabImage(opts, options.packageRoot ?? defaultPackageRoot(), await ownImageBase(opts, base, nodeBinary));
}

function defaultPackageRoot(): string {
  // dist/images/lab-images.js → the package root
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
}

/** The base image every lab image is built FROM (helper A's debootstrap'd Debian). One place to switch it. */
async function labBaseImage(opts: ResolvedImageOptions): Promise<string> {
  return (await ensureBaseImage({ cacheDir: opts.cache, onProgress: opts.progress, signal: opts.signal, debianMirror: opts.debianMirror })).ref;
}

/**
 * ensureImage for an image built FROM another one: when it has to be built,
 * the parent is made present first, outside ensureImage's cache lock (the
 * parent takes the same lock). A present image or a cached tarball needs no parent.
 */
async function ensureImageFrom(
  ref: string,
  key: string,
  parent: () => Promise<string>,
  build: (parentRef: string) => Promise<void>,
  opts: ResolvedImageOptions,
): Promise<BuiltImage> {
  const present = (await localImageKey(ref)) === key;
  const cached = present || (await fs.stat(imageTarFile(opts.cache, ref, key)).catch(() => null)) !== null;
  if (cached) {
    const needsParent = new Error('parent needed');
    try {
      return await ensureImage(ref, key, () => Promise.reject(needsParent), opts);
    } catch (err) {
      if (err !== needsParent) throw err; // else the tarball did not hold the image: build it as below
    }
  }
  const parentRef = await parent();
  return ensureImage(ref, key, () => build(parentRef), opts);
}

/** A cheap identity of a file for cache keys: content changes always change size or mtime in practice. */
async function fileStamp(file: string): Promise<{ file: string; size: number; mtimeMs: number }> {
  const st = await fs.stat(file);
  return { file: path.basename(file), size: st.size, mtimeMs: Math.trunc(st.mtimeMs) };
}

async function ensureOcmImages(ocmVersion: string, opts: ResolvedImageOptions): Promise<BuiltImage[]> {
  const binaries = await ensureBinaries(
    OCM_IMAGES.map((i) => i.binary),
    { cacheDir: opts.cache, binDir: opts.binDir, ocmVersion, signal: opts.signal, onProgress: opts.progress },
  );
  const built: BuiltImage[] = [];
  for (const image of OCM_IMAGES) {
    const ref = ocmImage(image.name, ocmVersion);
    const binary = binaries[image.binary];
    const key = imageKey({ ref, base: baseImageKey(), binary: await fileStamp(binary), path: image.pathInImage, user: String(OCM_IMAGE_USER.uid) });
    built.push(
      await ensureImageFrom(
        ref,
        key,
        () => labBaseImage(opts),
        async (base) => {
          const name = path.posix.basename(image.pathInImage);
          const dockerfile = [`FROM ${base}`, `COPY ${name} ${image.pathInImage}`, `USER ${OCM_IMAGE_USER.uid}`, `LABEL ${LABEL_IMAGE_KEY}=${key}`, ''].join(
            '\n',
          );
          await buildImage(ref, dockerfile, { [name]: { from: binary, mode: 0o755 } }, opts);
        },
        opts,
      ),
    );
  }
  return built;
}

/**
 * Upstream's addon images as their Dockerfiles lay them out (src/images/catalogue.ts): each
 * binary at its path in `/`, the image's user; built FROM the lab's base in
 * place of upstream's alpine or ubi-minimal, which cannot be pulled here.
 */
async function ensureUpstreamAddonImages(images: (typeof UPSTREAM_ADDON_IMAGES)[number][], opts: ResolvedImageOptions): Promise<BuiltImage[]> {
  if (!images.length) return [];
  const binaries = await ensureBinaries(
    images.flatMap((i) => i.files.map((f) => f.binary)),
    { cacheDir: opts.cache, binDir: opts.binDir, signal: opts.signal, onProgress: opts.progress },
  );
  const built: BuiltImage[] = [];
  for (const image of images) {
    const user = `${image.user.uid}:${image.user.gid}`;
    const files = await Promise.all(image.files.map(async (f) => ({ ...f, stamp: await fileStamp(binaries[f.binary]) })));
    const key = imageKey({ ref: image.ref, base: baseImageKey(), files: files.map((f) => ({ binary: f.stamp, path: f.pathInImage })), user });
    built.push(
      await ensureImageFrom(
        image.ref,
        key,
        () => labBaseImage(opts),
        async (base) => {
          const copies = files.map((f) => `COPY ${f.binary} ${f.pathInImage}`);
          const dockerfile = [`FROM ${base}`, ...copies, `USER ${user}`, `LABEL ${LABEL_IMAGE_KEY}=${key}`, ''].join('\n');
          await buildImage(image.ref, dockerfile, Object.fromEntries(files.map((f) => [f.binary, { from: binaries[f.binary], mode: 0o755 }])), opts);
        },
        opts,
      ),
    );
  }
  return built;
}

async function nodeBaseKey(nodeBinary: string): Promise<string> {
  return imageKey({ ref: nodeBaseImage(), base: baseImageKey(), node: await fileStamp(nodeBinary), version: process.version });
}

async function ensureNodeBase(opts: ResolvedImageOptions, nodeBinary: string): Promise<{ ref: string; key: string }> {
  const ref = nodeBaseImage();
  const key = await nodeBaseKey(nodeBinary);
  await ensureImageFrom(
    ref,
    key,
    () => labBaseImage(opts),
    async (base) => {
      const dockerfile = [`FROM ${base}`, 'COPY node /usr/local/bin/node', `LABEL ${LABEL_IMAGE_KEY}=${key}`, ''].join('\n');
      await buildImage(ref, dockerfile, { node: { from: nodeBinary, mode: 0o755 } }, opts);
    },
    opts,
  );
  return { ref, key };
}

/** Files of `dir`, recursively, relative and sorted (symlinks as links). */
async function walk(dir: string, rel = ''): Promise<string[]> {
  const out: string[] = [];
  const entries = await fs.readdir(path.join(dir, rel), { withFileTypes: true });
  for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const p = path.posix.join(rel, e.name);
    if (e.isDirectory()) out.push(...(await walk(dir, p)));
    else out.push(p);
  }
  return out;
}

async function hashFile(hash: crypto.Hash, file: string): Promise<void> {
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
}

/**
 * What ocm-lab:<version> is made of, hashed: dist/ (every file's path and content),
 * manifests/, package.json, the Dockerfile and the name and version of every
 * production module (a checkout and an npm-installed package alike: npm packs no lockfile).
 */
export async function ocmLabContentHash(packageRoot: string, modules?: ProductionModule[]): Promise<string> {
  const hash = crypto.createHash('sha256');
  for (const dir of ['dist', 'manifests']) {
    for (const rel of await walk(path.join(packageRoot, dir))) {
      hash.update(`${dir}/${rel}\0`);
      await hashFile(hash, path.join(packageRoot, dir, rel));
    }
  }
  for (const file of ['package.json', 'Dockerfile']) {
    hash.update(`${file}\0`);
    await hashFile(hash, path.join(packageRoot, file));
  }
  for (const m of modules ?? (await productionModules(packageRoot))) hash.update(`node_modules/${m.name}@${m.version}\0`);
  return hash.digest('hex').slice(0, 16);
}

/** The image ocm-lab:<version> is built FROM: its reference, the key it adds to ocm-lab:<version>'s, and how to make it present. */
interface NodeBase {
  ref: string;
  key: string;
  ensure: () => Promise<string>;
}

async function ownImageBase(opts: ResolvedImageOptions, base: OwnImageBase, nodeBinary: string): Promise<NodeBase> {
  if (base.kind === 'official') {
    const ref = pinnedReference(OFFICIAL_NODE_BASE, base.mirrors);
    return { ref, key: ref, ensure: () => pullPinned(OFFICIAL_NODE_BASE, base.mirrors, opts.progress, opts.signal) };
  }
  return { ref: nodeBaseImage(), key: await nodeBaseKey(nodeBinary), ensure: async () => (await ensureNodeBase(opts, nodeBinary)).ref };
}

async function ensureOcmLabImage(opts: ResolvedImageOptions, packageRoot: string, nodeBase: NodeBase): Promise<BuiltImage> {
  for (const needed of ['dist/cli/main.js', 'package.json', 'Dockerfile']) {
    if (!(await fs.stat(path.join(packageRoot, needed)).catch(() => null))) {
      throw new Error(`building ${OCM_LAB_IMAGE}: ${path.join(packageRoot, needed)} is missing (run \`npm ci && npm run build\` in ${packageRoot})`);
    }
  }
  const modules = await productionModules(packageRoot).catch((err: Error) => {
    throw new Error(`building ${OCM_LAB_IMAGE}: ${err.message}`);
  });
  const key = imageKey({ ref: OCM_LAB_IMAGE, nodeBase: nodeBase.key, content: await ocmLabContentHash(packageRoot, modules) });
  return ensureImageFrom(
    OCM_LAB_IMAGE,
    key,
    nodeBase.ensure,
    async () => {
      await fs.mkdir(imageCacheDir(opts.cache, 'build'), { recursive: true });
      const ctx = await fs.mkdtemp(path.join(imageCacheDir(opts.cache, 'build'), 'ocm-lab-ctx-'));
      try {
        opts.progress(`${OCM_LAB_IMAGE}: preparing the build context (dist/, production node_modules)`);
        for (const f of ['package.json', 'Dockerfile']) await fs.copyFile(path.join(packageRoot, f), path.join(ctx, f));
        for (const d of ['dist', 'manifests']) await fs.cp(path.join(packageRoot, d), path.join(ctx, d), { recursive: true, verbatimSymlinks: true });
        await fs.mkdir(path.join(ctx, 'node_modules'));
        for (const m of modules) await fs.cp(m.dir, path.join(ctx, 'node_modules', m.name), { recursive: true, verbatimSymlinks: true });
        opts.progress(`docker build -t ${OCM_LAB_IMAGE} (FROM ${nodeBase.ref})`);
        await docker(['build', '-q', '-t', OCM_LAB_IMAGE, '--build-arg', `BASE_IMAGE=${nodeBase.ref}`, '--label', `${LABEL_IMAGE_KEY}=${key}`, ctx], {
          signal: opts.signal,
        });
      } finally {
        await fs.rm(ctx, { recursive: true, force: true });
      }
    },
    opts,
  );
}
