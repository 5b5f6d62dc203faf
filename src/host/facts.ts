import fs from 'node:fs/promises';
import os from 'node:os';
import { hostPlatform, goArch, type HostPlatform } from '../provision/platform.js';
import { run } from '../util/exec.js';
import { detectEngine, engineEndpointEnv, type EngineName } from './engine.js';

/**
 * The one reader of what this machine and its container engine are (kind's `Provider.Info()`): every
 * runtime takes its verdicts, preflight checks and plans from these facts, and no other module reads
 * /proc/sys/fs/inotify, /proc/meminfo, /sys/fs/cgroup or `docker info` for them
 * (test/unit/host-facts.test.ts checks that).
 */

/** What the engine says of itself (`docker info`, `podman info`); a field it does not report is null (unknown). */
export interface EngineFacts {
  available: boolean;
  /** Which engine answered (src/host/engine.ts); absent where the facts were not read from one (tests' facts: Docker). */
  name?: EngineName;
  /** Its version: Docker's server, Podman's own. */
  version?: string;
  /** Podman's `host.networkBackend` (netavark, cni): only netavark isolates one network from another. */
  networkBackend?: string;
  /** Why it does not count as answering. */
  reason?: string;
  /** `CgroupVersion`: the cgroups the engine's containers run under (on Docker Desktop, its VM's). */
  cgroupVersion: '1' | '2' | null;
  /** `Architecture` in Go's spelling (amd64, arm64). */
  architecture: string | null;
  /** `OSType`: the OS of the engine's containers (linux, windows). */
  osType: string | null;
  /** Set when `SecurityOptions` says `name=rootless`: the containers' processes run as the user, not as root. */
  rootless?: true;
  /** `KernelVersion`: the kernel the containers run on (another than this machine's: a VM, or a remote engine). */
  kernel?: string;
}

export interface HostFacts {
  /** This machine's os/arch (or $OCM_LAB_HOST_PLATFORM's). */
  platform: HostPlatform;
  root: boolean;
  /** fs.inotify.max_user_watches and max_user_instances; null where unreadable (not Linux). */
  inotify: { maxUserWatches: number | null; maxUserInstances: number | null };
  /** MemAvailable of /proc/meminfo (else what the OS calls free); null when neither says. */
  memAvailableBytes: number | null;
  /** The host's own cgroup version (the unified hierarchy: /sys/fs/cgroup/cgroup.controllers); null off Linux. */
  hostCgroupVersion: '1' | '2' | null;
  /** The engine's facts; null when they were not asked for. */
  engine: EngineFacts | null;
  /** This machine's kernel release (`uname -r`), to tell whether the engine's containers share it. */
  kernel?: string;
  /**
   * Whether /lib/modules exists here (Linux): kind bind-mounts it into every node; Docker makes a missing source, Podman
   * refuses the container. Absent where it was not read.
   */
  libModules?: boolean;
}

/**
 * Whether this machine's limits (inotify, memory) are the ones the engine's containers run under: no when the engine
 * says it runs another kernel (Docker Desktop's VM, a Podman machine, a remote DOCKER_HOST) or this is not Linux.
 */
export function engineSharesHostKernel(facts: HostFacts): boolean {
  if (facts.platform.os !== 'linux') return false;
  const engineKernel = facts.engine?.available ? facts.engine.kernel : undefined;
  return !engineKernel || !facts.kernel || engineKernel === facts.kernel;
}

/** A fact and where it was read: the engine's when it answered and said, else the host's. */
export interface Sourced<T> {
  value: T;
  from: 'engine' | 'host';
}

/** The cgroup version containers run under: the engine's (`docker info`) when it answers and says, else the host's. */
export function cgroupVersionOf(facts: HostFacts): Sourced<'1' | '2' | null> {
  if (facts.engine?.available && facts.engine.cgroupVersion) return { value: facts.engine.cgroupVersion, from: 'engine' };
  return { value: facts.hostCgroupVersion, from: 'host' };
}

/** The architecture nodes run on: the engine's when it answers and says, else this machine's. */
export function architectureOf(facts: HostFacts): Sourced<string> {
  if (facts.engine?.available && facts.engine.architecture) return { value: facts.engine.architecture, from: 'engine' };
  return { value: facts.platform.arch, from: 'host' };
}

/** `MemAvailable:   24134956 kB` → bytes; null when /proc/meminfo has no such line. */
export function parseMemAvailable(meminfo: string): number | null {
  const m = /^MemAvailable:\s+(\d+)\s*kB/m.exec(meminfo);
  return m ? Number(m[1]) * 1024 : null;
}

function parseCount(text: string | null): number | null {
  if (text === null) return null;
  const n = Number(text.trim());
  return text.trim() !== '' && Number.isFinite(n) ? n : null;
}

/** `docker info --format '{{json .}}'` → the engine's facts; fields it does not carry are unknown. */
export function parseDockerInfo(json: string): EngineFacts {
  let info: Record<string, unknown>;
  try {
    info = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return { available: false, reason: "'docker info' printed no JSON", cgroupVersion: null, architecture: null, osType: null };
  }
  const text = (key: string) => (typeof info[key] === 'string' && info[key] !== '' ? (info[key] as string) : null);
  const errors = Array.isArray(info.ServerErrors) ? (info.ServerErrors as unknown[]).map(String) : [];
  const cgroup = text('CgroupVersion');
  const architecture = text('Architecture');
  const facts: EngineFacts = {
    available: errors.length === 0 && text('ServerVersion') !== null,
    cgroupVersion: cgroup === '1' || cgroup === '2' ? cgroup : null,
    architecture: architecture ? goArch(architecture) : null,
    osType: text('OSType'),
  };
  const kernel = text('KernelVersion');
  if (kernel) facts.kernel = kernel;
  if (Array.isArray(info.SecurityOptions) && (info.SecurityOptions as unknown[]).some((o) => String(o).split(',').includes('name=rootless')))
    facts.rootless = true;
  if (!facts.available) facts.reason = `no Docker engine answers 'docker info'${errors.length ? `: ${errors.join('; ')}` : ''}`;
  return facts;
}

/**
 * `podman info --format json` → the engine's facts: `host.cgroupVersion` is `v1`/`v2`, `host.arch` Go's spelling,
 * `host.security.rootless` a boolean, `host.networkBackend` netavark or cni (podman 4.3.1: docs/notes.md, kind).
 */
export function parsePodmanInfo(json: string): EngineFacts {
  let info: { host?: Record<string, unknown>; version?: Record<string, unknown> } | null;
  try {
    info = JSON.parse(json) as typeof info;
  } catch {
    info = null;
  }
  const host = info && typeof info.host === 'object' && info.host ? info.host : null;
  if (!host) return { available: false, reason: "'podman info' printed no host facts", cgroupVersion: null, architecture: null, osType: null };
  const text = (o: Record<string, unknown> | undefined, key: string) => (o && typeof o[key] === 'string' && o[key] !== '' ? (o[key] as string) : null);
  const cgroup = text(host, 'cgroupVersion');
  const architecture = text(host, 'arch');
  const facts: EngineFacts = {
    available: true,
    cgroupVersion: cgroup === 'v1' ? '1' : cgroup === 'v2' ? '2' : null,
    architecture: architecture ? goArch(architecture) : null,
    osType: text(host, 'os'),
  };
  const kernel = text(host, 'kernel');
  if (kernel) facts.kernel = kernel;
  const security = host.security as Record<string, unknown> | undefined;
  if (security?.rootless === true) facts.rootless = true;
  const backend = text(host, 'networkBackend');
  if (backend) facts.networkBackend = backend;
  const version = text(info?.version, 'Version');
  if (version) facts.version = version;
  return facts;
}

async function readPodmanFacts(version: string): Promise<EngineFacts> {
  const r = await run('podman', ['info', '--format', 'json'], { allowFailure: true, timeout: 15_000, env: engineEndpointEnv() }).catch((err: unknown) => ({
    stdout: '',
    stderr: (err as Error).message,
    exitCode: -1,
  }));
  const parsed = r.exitCode === 0 ? parsePodmanInfo(r.stdout) : null;
  if (parsed?.available) return { version, ...parsed, name: 'podman' };
  const printed = (r.stderr || r.stdout).trim().split('\n').slice(-3).join(' ');
  return {
    available: false,
    name: 'podman',
    reason: `podman answers 'podman version' but not 'podman info'${printed ? `: ${printed}` : ''}`,
    cgroupVersion: null,
    architecture: null,
    osType: null,
  };
}

/** The facts of the engine src/host/engine.ts finds ($OCM_LAB_ENGINE; auto: Docker when it answers, else Podman). */
async function readEngineFacts(): Promise<EngineFacts> {
  const detection = await detectEngine();
  if (!detection.found) return { available: false, reason: detection.reason, cgroupVersion: null, architecture: null, osType: null };
  if (detection.found.name === 'podman') return readPodmanFacts(detection.found.version);
  const docker = await readDockerFacts();
  return docker.available ? { ...docker, name: 'docker', version: detection.found.version } : docker;
}

async function readDockerFacts(): Promise<EngineFacts> {
  const r = await run('docker', ['info', '--format', '{{json .}}'], { allowFailure: true, timeout: 15_000, env: engineEndpointEnv() }).catch(
    (err: unknown) => ({
      stdout: '',
      stderr: (err as Error).message,
      exitCode: -1,
    }),
  );
  const parsed = parseDockerInfo(r.stdout.trim() || 'null');
  if (parsed.available || r.exitCode === 0) return parsed;
  const printed = (r.stderr || r.stdout).trim().split('\n').slice(-3).join(' ');
  return { ...parsed, reason: parsed.reason?.includes(': ') ? parsed.reason : `no Docker engine answers 'docker info'${printed ? `: ${printed}` : ''}` };
}

/** One process's inotify descriptors as /proc shows them: the target of each fd link, and its fdinfo text. */
export interface ProcessFds {
  pid: number;
  uid: number;
  /** `comm` of the process (kubelet, containerd, kube-apiserver …). */
  name: string;
  fds: { link: string; fdinfo: string | null }[];
}

/** inotify instances and watches held by one user's processes, and by which. */
export interface InotifyUse {
  uid: number;
  /** Instances held (each `anon_inode:inotify` descriptor): what fs.inotify.max_user_instances limits. */
  instances: number;
  /** Watches of those instances (`inotify wd:` lines of their fdinfo): what fs.inotify.max_user_watches limits. */
  watches: number;
  /** Processes holding at least one instance, most instances first. */
  processes: { pid: number; name: string; instances: number; watches: number }[];
}

/** Watches of one inotify instance: its fdinfo has one `inotify wd:<n> …` line per watch. */
export function inotifyWatchesOf(fdinfo: string): number {
  return fdinfo.split('\n').filter((line) => line.startsWith('inotify wd:')).length;
}

/** The inotify instances and watches of `uid`'s processes (the limits are per user). Pure: tests give the processes. */
export function tallyInotify(processes: readonly ProcessFds[], uid: number): InotifyUse {
  const held = processes
    .filter((p) => p.uid === uid)
    .map((p) => {
      const inotify = p.fds.filter((fd) => fd.link === 'anon_inode:inotify');
      return { pid: p.pid, name: p.name, instances: inotify.length, watches: inotify.reduce((n, fd) => n + inotifyWatchesOf(fd.fdinfo ?? ''), 0) };
    })
    .filter((p) => p.instances > 0)
    .sort((a, b) => b.instances - a.instances || a.pid - b.pid);
  return {
    uid,
    instances: held.reduce((n, p) => n + p.instances, 0),
    watches: held.reduce((n, p) => n + p.watches, 0),
    processes: held,
  };
}

/**
 * The inotify instances and watches `uid`'s processes hold now, from /proc (Linux; null elsewhere). Descriptors of
 * processes this user may not read (another user's, without root) are not counted.
 */
export async function readInotifyUse(uid: number): Promise<InotifyUse | null> {
  if (process.platform !== 'linux') return null;
  const processes: ProcessFds[] = [];
  for (const entry of await fs.readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(entry)) continue;
    const status = await fs.readFile(`/proc/${entry}/status`, 'utf8').catch(() => '');
    const owner = Number(/^Uid:\s+(\d+)/m.exec(status)?.[1] ?? -1);
    if (owner !== uid) continue;
    const fds: ProcessFds['fds'] = [];
    for (const fd of await fs.readdir(`/proc/${entry}/fd`).catch(() => [] as string[])) {
      const link = await fs.readlink(`/proc/${entry}/fd/${fd}`).catch(() => '');
      if (link === 'anon_inode:inotify') fds.push({ link, fdinfo: await fs.readFile(`/proc/${entry}/fdinfo/${fd}`, 'utf8').catch(() => null) });
    }
    processes.push({ pid: Number(entry), uid: owner, name: /^Name:\s+(.*)$/m.exec(status)?.[1] ?? '', fds });
  }
  return tallyInotify(processes, uid);
}

/**
 * Reads the facts once. `engine: true` also asks the engine (`docker info` or `podman info`, about a tenth of a
 * second); without it `engine` is null and the cgroup version and architecture are the host's.
 */
export async function readHostFacts(opts: { engine?: boolean } = {}): Promise<HostFacts> {
  const read = (file: string) => fs.readFile(file, 'utf8').catch(() => null);
  const platform = hostPlatform();
  const [watches, instances, meminfo, unified, libModules, engine] = await Promise.all([
    read('/proc/sys/fs/inotify/max_user_watches'),
    read('/proc/sys/fs/inotify/max_user_instances'),
    read('/proc/meminfo'),
    fs.access('/sys/fs/cgroup/cgroup.controllers').then(
      () => true,
      () => false,
    ),
    fs.access('/lib/modules').then(
      () => true,
      () => false,
    ),
    opts.engine ? readEngineFacts() : Promise.resolve(null),
  ]);
  return {
    platform,
    root: process.getuid?.() === 0,
    inotify: { maxUserWatches: parseCount(watches), maxUserInstances: parseCount(instances) },
    memAvailableBytes: meminfo !== null ? parseMemAvailable(meminfo) : os.freemem(),
    hostCgroupVersion: process.platform === 'linux' ? (unified ? '2' : '1') : null,
    engine,
    kernel: os.release(),
    ...(process.platform === 'linux' ? { libModules } : {}),
  };
}
