import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { MissingPrerequisiteError } from '../errors.js';
import { withCacheLock } from '../provision/lock.js';
import { onPath } from '../provision/resolve.js';
import { run } from '../util/exec.js';
import { imageCacheDir, type ResolvedImageOptions } from './options.js';

/** A Debian root filesystem made by debootstrap: the suite, the variant and the packages added to it. */
export interface RootfsSpec {
  /** Names the cached tarball: `<cache>/kind/rootfs/<name>-<key>.tar`. */
  name: string;
  suite: string;
  variant: 'minbase';
  packages: readonly string[];
}

/** The base of our images (kube-proxy's, ocm-lab:<version>, OCM's): minbase plus what kube-proxy execs. */
export const BASE_ROOTFS: RootfsSpec = {
  name: 'base',
  suite: 'bookworm',
  variant: 'minbase',
  packages: ['ca-certificates', 'conntrack', 'iproute2', 'iptables', 'procps'],
};

/** The kind node: systemd as init, containerd and runc, and what kind's base image installs for kubelet and kubeadm. */
export const NODE_ROOTFS: RootfsSpec = {
  name: 'kind-node',
  suite: 'bookworm',
  variant: 'minbase',
  packages: [
    'bash',
    'ca-certificates',
    'conntrack',
    'containerd',
    'containernetworking-plugins',
    'dbus',
    'e2fsprogs',
    'ethtool',
    'iproute2',
    'iptables',
    'jq',
    'kmod',
    'libseccomp2',
    'mount',
    'nftables',
    'pigz',
    'procps',
    'runc',
    'socat',
    'systemd',
    'systemd-sysv',
    'util-linux',
  ],
};

/** Identifies the content: suite, variant and the sorted package list (the mirror does not change what is installed). */
export function rootfsKey(spec: RootfsSpec): string {
  const packages = [...new Set(spec.packages)].sort();
  const text = JSON.stringify({ suite: spec.suite, variant: spec.variant, packages });
  return crypto.createHash('sha256').update(text).digest('hex').slice(0, 16);
}

export function rootfsTarFile(cache: string, spec: RootfsSpec): string {
  return path.join(imageCacheDir(cache, 'rootfs'), `${spec.name}-${rootfsKey(spec)}.tar`);
}

export function debootstrapArgs(spec: RootfsSpec, target: string, mirror: string): string[] {
  const packages = [...new Set(spec.packages)].sort();
  return [`--variant=${spec.variant}`, `--include=${packages.join(',')}`, spec.suite, target, mirror];
}

/**
 * Unmounts whatever is mounted under `dir` (debootstrap mounts proc and sys in the target; a killed
 * run leaves them), deepest first, so removing the tree never reaches the host's.
 */
async function unmountUnder(dir: string): Promise<void> {
  const mounts = await fs.readFile('/proc/self/mounts', 'utf8').catch(() => '');
  const prefix = path.resolve(dir) + '/';
  const points = mounts
    .split('\n')
    .map((line) => (line.split(' ')[1] ?? '').replace(/\\040/g, ' '))
    .filter((p) => p.startsWith(prefix))
    .sort((a, b) => b.length - a.length);
  for (const point of points) await run('umount', ['-l', point], { allowFailure: true });
}

async function exists(file: string): Promise<boolean> {
  return fs.stat(file).then(
    () => true,
    () => false,
  );
}

/**
 * The rootfs as a tarball in the cache, made once with debootstrap (needs root
 * and the Debian mirror; about a minute or three). The tree is removed after it
 * is packed, and apt's downloaded packages and lists are left out.
 */
export async function ensureRootfsTar(spec: RootfsSpec, opts: ResolvedImageOptions): Promise<string> {
  const tar = rootfsTarFile(opts.cache, spec);
  if (await exists(tar)) return tar;
  // Not started, execa reports no exit status: said here, or the error would read "failed (exit status -1)".
  if (!(await onPath('debootstrap')))
    throw new MissingPrerequisiteError(`debootstrap is not on PATH: the ${spec.name} image's Debian ${spec.suite} root filesystem is made with it`, {
      hint: 'install it as root (apt-get install debootstrap, or OCM_LAB_DOCKER=1 scripts/bootstrap.sh), or put it on PATH',
    });
  const dir = imageCacheDir(opts.cache, 'rootfs');
  return withCacheLock(
    dir,
    async () => {
      if (await exists(tar)) return tar;
      const target = path.join(dir, `.${spec.name}-${rootfsKey(spec)}.tree`);
      const partial = `${tar}.partial`;
      try {
        await unmountUnder(target);
        await fs.rm(target, { recursive: true, force: true });
        const started = Date.now();
        opts.progress(`debootstrap ${spec.suite} (${spec.variant}, ${spec.packages.length} packages)`);
        const r = await run('debootstrap', debootstrapArgs(spec, target, opts.debianMirror), { allowFailure: true, cancelSignal: opts.signal });
        if (r.exitCode !== 0) {
          const log = await fs.readFile(path.join(target, 'debootstrap', 'debootstrap.log'), 'utf8').catch(() => '');
          const printed = `${r.stdout}\n${r.stderr}\n${log}`.trim().split('\n').slice(-20).join('\n');
          throw new MissingPrerequisiteError(
            `debootstrap ${debootstrapArgs(spec, target, opts.debianMirror).join(' ')} failed (exit status ${r.exitCode}):\n${printed}`,
            {
              hint: 'debootstrap needs root, the debootstrap package and the Debian mirror (set $OCM_LAB_DEBIAN_MIRROR to use another)',
            },
          );
        }
        for (const sub of ['var/cache/apt/archives', 'var/lib/apt/lists']) {
          for (const entry of await fs.readdir(path.join(target, sub)).catch(() => [] as string[])) {
            if (entry.endsWith('.deb') || (sub.endsWith('lists') && entry !== 'lock' && entry !== 'partial'))
              await fs.rm(path.join(target, sub, entry), { force: true });
          }
        }
        opts.progress(`debootstrap done in ${Math.round((Date.now() - started) / 1000)} s; packing ${path.basename(tar)}`);
        await run('tar', ['--numeric-owner', '--xattrs', '-C', target, '-cf', partial, '.'], { cancelSignal: opts.signal });
        await fs.rename(partial, tar);
        return tar;
      } finally {
        await fs.rm(partial, { force: true });
        await unmountUnder(target);
        await fs.rm(target, { recursive: true, force: true });
      }
    },
    { onWait: () => opts.progress('waiting for another ocm-lab building the same rootfs'), signal: opts.signal },
  );
}
