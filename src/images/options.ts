import path from 'node:path';
import { cacheDir as defaultCacheDir } from '../paths.js';
import { requireKubernetesRelease, type KubernetesRelease } from '../provision/versions.js';

/** What every image builder takes. */
export interface ImageBuildOptions {
  /** Default: cacheDir() ($OCM_LAB_CACHE_DIR or $XDG_CACHE_HOME/ocm-lab); images live under `<cache>/kind/`. */
  cacheDir?: string;
  /** Take binaries from this directory first (as `setup --bin-dir`). */
  binDir?: string;
  /** Debian mirror for debootstrap (default $OCM_LAB_DEBIAN_MIRROR or http://deb.debian.org/debian). */
  debianMirror?: string;
  onProgress?: (line: string) => void;
  signal?: AbortSignal;
  /** The Kubernetes version of the node image and the images it preloads (default: the lab default). */
  kubernetesVersion?: string;
}

export interface ResolvedImageOptions {
  cache: string;
  binDir: string | undefined;
  debianMirror: string;
  progress: (line: string) => void;
  signal: AbortSignal | undefined;
  release: KubernetesRelease;
}

export function resolveImageOptions(opts: ImageBuildOptions = {}): ResolvedImageOptions {
  return {
    cache: opts.cacheDir ?? defaultCacheDir(),
    binDir: opts.binDir,
    debianMirror: opts.debianMirror ?? (process.env.OCM_LAB_DEBIAN_MIRROR || 'http://deb.debian.org/debian'),
    progress: opts.onProgress ?? (() => undefined),
    signal: opts.signal,
    release: requireKubernetesRelease(opts.kubernetesVersion),
  };
}

/** `<cache>/kind/<sub>` */
export function imageCacheDir(cache: string, sub: 'rootfs' | 'images' | 'build'): string {
  return path.join(cache, 'kind', sub);
}
