import fs from 'node:fs/promises';
import path from 'node:path';
import { downloadModule } from '../../../provision/gobuild.js';
import { ensureBinaries, type BinaryName } from '../../../provision/index.js';
import { DEFAULT_KUBERNETES_RELEASE, type KubernetesRelease } from '../../../provision/versions.js';
import { run } from '../../../util/exec.js';
import { BASE_IMAGE, baseImageKey, ensureBaseImage } from '../../../images/base-image.js';
import { buildImage, ensureImage, imageKey, LABEL_IMAGE_KEY, type BuiltImage, type ContextFile } from '../../../images/docker-build.js';
import { imageCacheDir, resolveImageOptions, type ImageBuildOptions, type ResolvedImageOptions } from '../../../images/options.js';

/** One image kubeadm runs, made of one binary of ours at the path the upstream image has it. */
export interface ComponentImageSpec {
  /** Exactly the name `kubeadm config images list` prints. */
  ref: string;
  /** What the binary is: one of our provisioned binaries, or upstream's pause.c compiled here. */
  binary: BinaryName | 'pause';
  /** Path of the binary in the image. */
  dest: string;
  /** scratch for static binaries; BASE_IMAGE when the program execs tools (kube-proxy: iptables, conntrack). */
  from: 'scratch' | 'base';
  entrypoint?: string[];
  user?: string;
}

const REGISTRY = 'registry.k8s.io';

/** The images kubeadm of `release` uses (`kubeadm config images list --kubernetes-version <version>`). */
export function componentImageSpecs(release: KubernetesRelease = DEFAULT_KUBERNETES_RELEASE): ComponentImageSpec[] {
  const k8s = (
    name: 'kube-apiserver' | 'kube-controller-manager' | 'kube-scheduler' | 'kube-proxy',
    from: 'scratch' | 'base' = 'scratch',
  ): ComponentImageSpec => ({
    ref: `${REGISTRY}/${name}:${release.kubernetes}`,
    binary: name,
    dest: `/usr/local/bin/${name}`,
    from,
  });
  return [
    k8s('kube-apiserver'),
    k8s('kube-controller-manager'),
    k8s('kube-scheduler'),
    k8s('kube-proxy', 'base'),
    // kubeadm's etcd tag is the etcd version plus an image revision.
    { ref: `${REGISTRY}/etcd:${release.etcd.replace(/^v/, '')}-0`, binary: 'etcd', dest: '/usr/local/bin/etcd', from: 'scratch' },
    { ref: `${REGISTRY}/coredns/coredns:${release.coredns}`, binary: 'coredns', dest: '/coredns', from: 'scratch', entrypoint: ['/coredns'] },
    { ref: pauseImage(release), binary: 'pause', dest: '/pause', from: 'scratch', entrypoint: ['/pause'], user: '65535:65535' },
  ];
}

/** The sandbox image containerd runs every pod's network namespace with. */
export function pauseImage(release: KubernetesRelease = DEFAULT_KUBERNETES_RELEASE): string {
  return `${REGISTRY}/pause:${release.pause}`;
}

/**
 * kube-proxy runs the iptables of its image against the node's tables, so it
 * must use the backend (legacy or nft) the node's kubelet and entrypoint chose:
 * the one that already holds rules. Installed under every iptables name in
 * /usr/local/sbin (first in PATH; /usr/sbin's names are alternatives symlinks).
 */
export const XTABLES_AUTO = `#!/bin/sh
# Runs iptables with the backend that holds the node's rules (nft unless legacy has more).
set -eu
mode_file=/run/ocm-lab-xtables-mode
if [ -r "$mode_file" ]; then
  mode=$(cat "$mode_file")
else
  count() { (xtables-$1-multi iptables-save; xtables-$1-multi ip6tables-save) 2>/dev/null | grep -c -e '^-' -e '^:KUBE-' || true; }
  if [ "$(count legacy)" -gt "$(count nft)" ]; then mode=legacy; else mode=nft; fi
  echo "$mode" > "$mode_file" 2>/dev/null || true
fi
exec "/usr/sbin/xtables-$mode-multi" "\${0##*/}" "$@"
`;

const XTABLES_NAMES = ['iptables', 'iptables-save', 'iptables-restore', 'ip6tables', 'ip6tables-save', 'ip6tables-restore'];

/** The Dockerfile of a component image; its key label is the last line, so the text fixes the key. */
export function componentDockerfile(spec: ComponentImageSpec, key: string): string {
  const lines = [`FROM ${spec.from === 'base' ? BASE_IMAGE : 'scratch'}`];
  if (spec.from === 'scratch') lines.push('ENV PATH=/usr/local/bin:/usr/bin:/bin');
  const dir = path.posix.dirname(spec.dest);
  lines.push(`COPY bin ${dir === '/' ? '/' : `${dir}/`}`);
  if (spec.binary === 'kube-proxy') lines.push('COPY xtables /usr/local/sbin/');
  if (spec.user) lines.push(`USER ${spec.user}`);
  if (spec.entrypoint) lines.push(`ENTRYPOINT ${JSON.stringify(spec.entrypoint)}`);
  lines.push(`LABEL ${LABEL_IMAGE_KEY}=${key}`);
  return `${lines.join('\n')}\n`;
}

/** Key of a component image: what it is, where it comes from, the base's key and the binary's pinned version. */
export function componentImageKey(spec: ComponentImageSpec, release: KubernetesRelease = DEFAULT_KUBERNETES_RELEASE): string {
  return imageKey({
    spec,
    dockerfile: componentDockerfile(spec, ''),
    base: spec.from === 'base' ? baseImageKey() : null,
    xtables: spec.binary === 'kube-proxy' ? XTABLES_AUTO : null,
    versions: release,
  });
}

/** `gcc -static` of upstream's build/pause/linux/pause.c, read from the k8s.io/kubernetes module in the Go module cache. */
async function buildPause(opts: ResolvedImageOptions): Promise<string> {
  const { pause, kubernetes } = opts.release;
  const out = path.join(imageCacheDir(opts.cache, 'build'), `pause-${pause}`);
  if (await fs.stat(out).catch(() => null)) return out;
  const { dir } = await downloadModule('k8s.io/kubernetes', kubernetes, { signal: opts.signal });
  const source = path.join(dir, 'build', 'pause', 'linux', 'pause.c');
  await fs.mkdir(path.dirname(out), { recursive: true });
  opts.progress(`gcc -static ${source}`);
  const partial = `${out}.partial`;
  await run('gcc', ['-Os', '-Wall', '-Werror', '-static', `-DVERSION=v${pause}`, '-o', partial, source], { cancelSignal: opts.signal });
  await run('strip', [partial]);
  await fs.rename(partial, out);
  return out;
}

async function binaryOf(spec: ComponentImageSpec, opts: ResolvedImageOptions): Promise<string> {
  if (spec.binary === 'pause') return buildPause(opts);
  const name = spec.binary;
  return (
    await ensureBinaries([name], {
      cacheDir: opts.cache,
      binDir: opts.binDir,
      signal: opts.signal,
      onProgress: opts.progress,
      kubernetesVersion: opts.release.kubernetes,
    })
  )[name];
}

/** One component image in the engine (present, loaded from the cache, or built FROM scratch / BASE_IMAGE). */
export async function ensureComponentImage(spec: ComponentImageSpec, options: ImageBuildOptions | ResolvedImageOptions = {}): Promise<BuiltImage> {
  const opts = 'cache' in options ? options : resolveImageOptions(options);
  const key = componentImageKey(spec, opts.release);
  return ensureImage(
    spec.ref,
    key,
    async () => {
      if (spec.from === 'base')
        await ensureBaseImage({ cacheDir: opts.cache, onProgress: opts.progress, signal: opts.signal, debianMirror: opts.debianMirror });
      const files: Record<string, ContextFile> = { [`bin/${path.posix.basename(spec.dest)}`]: { from: await binaryOf(spec, opts), mode: 0o755 } };
      if (spec.binary === 'kube-proxy') for (const n of XTABLES_NAMES) files[`xtables/${n}`] = { content: XTABLES_AUTO, mode: 0o755 };
      await buildImage(spec.ref, componentDockerfile(spec, key), files, opts);
    },
    opts,
    { needTar: true },
  );
}

/** Every image kubeadm needs, in kubeadm's order. */
export async function ensureComponentImages(options: ImageBuildOptions | ResolvedImageOptions = {}): Promise<BuiltImage[]> {
  const opts = 'cache' in options ? options : resolveImageOptions(options);
  const built: BuiltImage[] = [];
  for (const spec of componentImageSpecs(opts.release)) built.push(await ensureComponentImage(spec, opts));
  return built;
}
