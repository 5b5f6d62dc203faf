import { existsSync, readdirSync, statSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';

/**
 * OCI runtime bundles (runtime-spec 1.0.2, as runc 1.1 reads them): one per
 * container run, `<bundle>/config.json` plus an empty `<bundle>/rootfs`. The
 * root file system is that empty directory, read-only; everything a process
 * sees comes from mounts: the host's /usr, /lib, /lib64, /bin, /sbin and /etc
 * read-only, the image's files, the pod's volumes, fresh /proc, /dev, /sys
 * and /tmp. No image layers, no copy: a bundle is a few kilobytes.
 */

/** The part of the OCI runtime spec we write. */
export interface OciConfig {
  ociVersion: string;
  process: {
    terminal: boolean;
    user: { uid: number; gid: number; additionalGids?: number[] };
    args: string[];
    env: string[];
    cwd: string;
    capabilities: { bounding: string[]; effective: string[]; permitted: string[] };
    noNewPrivileges: boolean;
  };
  root: { path: string; readonly: boolean };
  hostname: string;
  mounts: OciMount[];
  linux: {
    namespaces: { type: string; path?: string }[];
    cgroupsPath: string;
    maskedPaths: string[];
    readonlyPaths: string[];
  };
}

export interface OciMount {
  destination: string;
  type: string;
  source: string;
  options: string[];
}

/** A host path bind-mounted into the container. */
interface BindMount {
  source: string;
  destination: string;
  readOnly: boolean;
}

/**
 * containerd's default capability set for Kubernetes containers. Never
 * CAP_SYS_RESOURCE: it is not in every host's bounding set, and runc fails
 * with "unable to apply caps" when asked for a capability it cannot have.
 */
const DEFAULT_CAPABILITIES = [
  'CAP_CHOWN',
  'CAP_DAC_OVERRIDE',
  'CAP_FSETID',
  'CAP_FOWNER',
  'CAP_MKNOD',
  'CAP_NET_RAW',
  'CAP_SETGID',
  'CAP_SETUID',
  'CAP_SETFCAP',
  'CAP_SETPCAP',
  'CAP_NET_BIND_SERVICE',
  'CAP_SYS_CHROOT',
  'CAP_KILL',
  'CAP_AUDIT_WRITE',
];
const NEVER_CAPABILITIES = new Set(['CAP_SYS_RESOURCE']);

/** Host directories every container sees read-only (programs and libraries for exec, probes and shells). */
export const SHARED_HOST_DIRS = ['/usr', '/lib', '/lib64', '/bin', '/sbin', '/etc'];

const MASKED_PATHS = [
  '/proc/acpi',
  '/proc/asound',
  '/proc/kcore',
  '/proc/keys',
  '/proc/latency_stats',
  '/proc/timer_list',
  '/proc/timer_stats',
  '/proc/sched_debug',
  '/proc/scsi',
  '/sys/firmware',
  // The host's /etc is shared: its secrets are not.
  '/etc/shadow',
  '/etc/gshadow',
  '/etc/ssh',
  '/etc/ssl/private',
];
const READONLY_PATHS = ['/proc/bus', '/proc/fs', '/proc/irq', '/proc/sys', '/proc/sysrq-trigger'];

export interface BundleInput {
  hostname: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  user: { uid: number; gid: number; additionalGids?: number[] };
  /** Capability names with or without the CAP_ prefix, as a securityContext gives them. */
  capabilities?: { add?: string[]; drop?: string[] };
  noNewPrivileges?: boolean;
  /** Host directories shared read-only (default SHARED_HOST_DIRS; the caller drops those the host lacks). */
  hostDirs?: string[];
  /**
   * What the host has (real file system in the nodelet, a fake in tests): a
   * mount point inside a shared host directory that the host lacks (a volume
   * at /etc/hub) cannot be created in the read-only bind, so that directory
   * is then built from its entries instead. Absent: directories are bound whole.
   */
  hostView?: HostView;
  /** The pod's /etc/hosts and /etc/hostname (host files), mounted over the host's /etc. */
  etcFiles: { hosts: string; hostname: string };
  /** The image's files (read-only). */
  imageFiles: { source: string; destination: string }[];
  /** The container's volumeMounts, resolved to host paths. */
  volumes: BindMount[];
  /** The network namespace to join (a pod's, or the node's for hostNetwork); absent: the caller's. */
  netnsPath?: string;
  cgroupsPath: string;
}

function capName(c: string): string {
  const up = c.toUpperCase();
  return up.startsWith('CAP_') ? up : `CAP_${up}`;
}

/** The capability set after a securityContext's add/drop (`ALL` drops everything not added). */
export function capabilitySet(caps: BundleInput['capabilities']): string[] {
  const drop = (caps?.drop ?? []).map(capName);
  const base = drop.includes('CAP_ALL') ? [] : DEFAULT_CAPABILITIES.filter((c) => !drop.includes(c));
  const add = (caps?.add ?? []).map(capName).filter((c) => c !== 'CAP_ALL');
  return [...new Set([...base, ...add])].filter((c) => !NEVER_CAPABILITIES.has(c));
}

/** Read-only questions about the host's file system. */
export interface HostView {
  /** True when the path exists (symlinks followed). */
  exists(p: string): boolean;
  isDir(p: string): boolean;
  list(dir: string): string[];
}

export function realHostView(): HostView {
  return {
    exists: (p) => existsSync(p),
    isDir: (p) => {
      try {
        return statSync(p).isDirectory();
      } catch {
        return false;
      }
    },
    list: (dir) => {
      try {
        return readdirSync(dir).sort();
      } catch {
        return [];
      }
    },
  };
}

function hostBind(p: string): OciMount {
  // Host programs keep their suid bits and devices as on the host: plain rbind, read-only.
  return { destination: p, type: 'bind', source: p, options: ['rbind', 'ro'] };
}

function isUnder(p: string, dir: string): boolean {
  return p === dir || p.startsWith(`${dir}/`);
}

/**
 * The mounts that show the host directory `dir` read-only. Bound whole,
 * unless a mount point the container needs inside it (`wanted`) does not
 * exist on the host: then `dir` is a tmpfs (made read-only after all mounts)
 * with each host entry bound in it, recursing into the entries on the way to
 * the missing mount point; runc creates that mount point in the tmpfs.
 */
export function sharedDirMounts(dir: string, wanted: readonly string[], view: HostView | undefined): { mounts: OciMount[]; readonlyPaths: string[] } {
  const inside = wanted.filter((w) => w !== dir && isUnder(w, dir));
  if (!view || inside.every((w) => view.exists(w))) return { mounts: [hostBind(dir)], readonlyPaths: [] };
  const mounts: OciMount[] = [{ destination: dir, type: 'tmpfs', source: 'tmpfs', options: ['nosuid', 'nodev', 'mode=755'] }];
  const readonlyPaths = [dir];
  for (const name of view.list(dir)) {
    const p = `${dir}/${name}`;
    if (!view.exists(p)) continue; // a dangling symlink cannot be bound
    const below = inside.filter((w) => isUnder(w, p));
    if (below.includes(p)) continue; // a mount of its own replaces it
    if (below.length && view.isDir(p)) {
      const sub = sharedDirMounts(p, below, view);
      mounts.push(...sub.mounts);
      readonlyPaths.push(...sub.readonlyPaths);
    } else mounts.push(hostBind(p));
  }
  return { mounts, readonlyPaths };
}

function bind(source: string, destination: string, readOnly: boolean): OciMount {
  return { destination, type: 'bind', source, options: ['rbind', readOnly ? 'ro' : 'rw', 'nosuid', 'nodev'] };
}

/** The OCI config of one container: pure, so tests can read what a pod spec becomes. */
export function ociConfig(input: BundleInput): OciConfig {
  const caps = capabilitySet(input.capabilities);
  const hostDirs = input.hostDirs ?? SHARED_HOST_DIRS;
  const wanted = ['/etc/hosts', '/etc/hostname', ...input.imageFiles.map((f) => f.destination), ...input.volumes.map((v) => v.destination)];
  const shared = hostDirs.map((d) => sharedDirMounts(d, wanted, input.hostView));
  const mounts: OciMount[] = [
    { destination: '/proc', type: 'proc', source: 'proc', options: ['nosuid', 'noexec', 'nodev'] },
    { destination: '/dev', type: 'tmpfs', source: 'tmpfs', options: ['nosuid', 'strictatime', 'mode=755', 'size=65536k'] },
    { destination: '/dev/pts', type: 'devpts', source: 'devpts', options: ['nosuid', 'noexec', 'newinstance', 'ptmxmode=0666', 'mode=0620', 'gid=5'] },
    { destination: '/dev/shm', type: 'tmpfs', source: 'shm', options: ['nosuid', 'noexec', 'nodev', 'mode=1777', 'size=65536k'] },
    { destination: '/dev/mqueue', type: 'mqueue', source: 'mqueue', options: ['nosuid', 'noexec', 'nodev'] },
    { destination: '/sys', type: 'sysfs', source: 'sysfs', options: ['nosuid', 'noexec', 'nodev', 'ro'] },
    { destination: '/sys/fs/cgroup', type: 'cgroup', source: 'cgroup', options: ['nosuid', 'noexec', 'nodev', 'relatime', 'ro'] },
    ...shared.flatMap((s) => s.mounts),
    bind(input.etcFiles.hosts, '/etc/hosts', true),
    bind(input.etcFiles.hostname, '/etc/hostname', true),
    // Upstream Go binaries write self-signed serving certificates and other scratch files here.
    { destination: '/tmp', type: 'tmpfs', source: 'tmpfs', options: ['nosuid', 'nodev', 'mode=1777'] },
    ...input.imageFiles.map((f) => bind(f.source, f.destination, true)),
    ...[...input.volumes].sort((a, b) => depth(a.destination) - depth(b.destination)).map((v) => bind(v.source, v.destination, v.readOnly)),
  ];
  const namespaces: { type: string; path?: string }[] = [{ type: 'pid' }, { type: 'ipc' }, { type: 'uts' }, { type: 'mount' }];
  if (input.netnsPath) namespaces.push({ type: 'network', path: input.netnsPath });
  return {
    ociVersion: '1.0.2',
    process: {
      terminal: false,
      user: { uid: input.user.uid, gid: input.user.gid, ...(input.user.additionalGids?.length ? { additionalGids: input.user.additionalGids } : {}) },
      args: input.args,
      env: Object.entries(input.env).map(([k, v]) => `${k}=${v}`),
      cwd: input.cwd,
      capabilities: { bounding: caps, effective: caps, permitted: caps },
      noNewPrivileges: input.noNewPrivileges ?? false,
    },
    root: { path: 'rootfs', readonly: true },
    hostname: input.hostname,
    mounts,
    linux: {
      namespaces,
      cgroupsPath: input.cgroupsPath,
      maskedPaths: MASKED_PATHS,
      readonlyPaths: [...READONLY_PATHS, ...shared.flatMap((s) => s.readonlyPaths)],
    },
  };
}

function depth(p: string): number {
  return p.split('/').filter(Boolean).length;
}

/**
 * Writes `<bundle>/config.json` and an empty `<bundle>/rootfs` (the mount
 * points runc creates in it stay there for the next run; nothing else does).
 * The working directory is created in the rootfs unless a mount provides it.
 */
export async function writeBundle(bundle: string, config: OciConfig): Promise<void> {
  const rootfs = path.join(bundle, 'rootfs');
  await fs.mkdir(rootfs, { recursive: true, mode: 0o755 });
  const cwd = path.posix.normalize(config.process.cwd);
  const provided = config.mounts.some((m) => cwd === m.destination || cwd.startsWith(`${m.destination}/`));
  if (!provided && cwd !== '/') await fs.mkdir(path.join(rootfs, cwd), { recursive: true, mode: 0o755 });
  await fs.writeFile(path.join(bundle, 'config.json'), `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
}

/** `spec.hostAliases` entries: extra /etc/hosts lines. */
export interface HostAlias {
  ip: string;
  hostnames?: string[];
}

/** The pod's /etc/hosts (with its hostAliases) and /etc/hostname, as the kubelet writes them. */
export async function writePodEtcFiles(
  dir: string,
  hostname: string,
  podIP: string | undefined,
  aliases: readonly HostAlias[] = [],
): Promise<{ hosts: string; hostname: string }> {
  await fs.mkdir(dir, { recursive: true, mode: 0o755 });
  const hosts = path.join(dir, 'hosts');
  const host = path.join(dir, 'hostname');
  const lines = ['# Kubernetes-managed hosts file (ocm-lab nodelet).', '127.0.0.1\tlocalhost', '::1\tlocalhost ip6-localhost ip6-loopback'];
  if (podIP) lines.push(`${podIP}\t${hostname}`);
  const extra = aliases.filter((a) => a.ip && a.hostnames?.length);
  if (extra.length) lines.push('', '# Entries added by HostAliases.', ...extra.map((a) => `${a.ip}\t${(a.hostnames ?? []).join('\t')}`));
  await fs.writeFile(hosts, `${lines.join('\n')}\n`, { mode: 0o644 });
  await fs.writeFile(host, `${hostname}\n`, { mode: 0o644 });
  return { hosts, hostname: host };
}
