import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  architectureOf,
  cgroupVersionOf,
  engineSharesHostKernel,
  inotifyWatchesOf,
  parseDockerInfo,
  tallyInotify,
  type HostFacts,
  type ProcessFds,
} from '../../src/host/facts.js';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));
const READER = 'host/facts.ts';

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map(async (e) => (e.isDirectory() ? sourceFiles(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [])),
  );
  return nested.flat();
}

/**
 * What only the host-facts reader may read (kind's Provider.Info(): facts read once by one function).
 * A node's own scripts may test /sys/fs/cgroup (kind/images/node-files.ts runs in the node, not here),
 * so the cgroup pattern is a Node.js fs call on it.
 */
const FACT_READS: { fact: string; pattern: RegExp }[] = [
  { fact: 'inotify limits', pattern: /\/proc\/sys\/fs\/inotify/ },
  { fact: '/proc/meminfo', pattern: /\/proc\/meminfo/ },
  { fact: 'MemAvailable', pattern: /MemAvailable:/ },
  { fact: "the host's cgroup version", pattern: /fs\.\w+\(\s*['"`]\/sys\/fs\/cgroup/ },
  { fact: "the engine's facts (docker info)", pattern: /CgroupVersion|\{\{\.Architecture\}\}|\{\{\.OSType\}\}/ },
];

describe('host facts: one reader', () => {
  it(`only src/${READER} reads inotify limits, MemAvailable, the cgroup version and docker info`, async () => {
    const files = await sourceFiles(SRC);
    const texts = await Promise.all(files.map(async (f) => ({ file: path.relative(SRC, f), text: await fs.readFile(f, 'utf8') })));
    for (const { fact, pattern } of FACT_READS) {
      const readers = texts.filter((t) => pattern.test(t.text)).map((t) => t.file);
      expect(readers, `${fact} is read outside src/${READER}`).toEqual([READER]);
    }
  });
});

describe('host facts: the engine', () => {
  it('reads CgroupVersion, Architecture and OSType from docker info, in Go spelling', () => {
    const info = JSON.stringify({ ServerVersion: '20.10.24', CgroupVersion: '1', Architecture: 'x86_64', OSType: 'linux', ServerErrors: null });
    expect(parseDockerInfo(info)).toEqual({ available: true, cgroupVersion: '1', architecture: 'amd64', osType: 'linux' });
    expect(parseDockerInfo(JSON.stringify({ ServerVersion: '27.0.1', CgroupVersion: '2', Architecture: 'aarch64', OSType: 'linux' })).architecture).toBe(
      'arm64',
    );
  });

  it('treats absent fields as unknown, and an engine that does not answer as unavailable', () => {
    expect(parseDockerInfo(JSON.stringify({ ServerVersion: '1.13.1' }))).toEqual({ available: true, cgroupVersion: null, architecture: null, osType: null });
    const down = parseDockerInfo(JSON.stringify({ ServerErrors: ['Cannot connect to the Docker daemon at unix:///var/run/docker.sock'] }));
    expect(down.available).toBe(false);
    expect(down.reason).toContain('Cannot connect to the Docker daemon');
    expect(parseDockerInfo('not json').available).toBe(false);
  });

  it("takes the cgroup version and architecture from the engine when it answers, else the host's", () => {
    const host: HostFacts = {
      platform: { os: 'linux', arch: 'amd64' },
      root: false,
      inotify: { maxUserWatches: null, maxUserInstances: null },
      memAvailableBytes: null,
      hostCgroupVersion: '1',
      engine: null,
    };
    expect(cgroupVersionOf(host)).toEqual({ value: '1', from: 'host' });
    expect(architectureOf(host)).toEqual({ value: 'amd64', from: 'host' });
    const desktop: HostFacts = { ...host, platform: { os: 'darwin', arch: 'arm64' }, hostCgroupVersion: null };
    const withEngine = { ...desktop, engine: { available: true, cgroupVersion: '2' as const, architecture: 'arm64', osType: 'linux' } };
    expect(cgroupVersionOf(withEngine)).toEqual({ value: '2', from: 'engine' });
    expect(architectureOf(withEngine)).toEqual({ value: 'arm64', from: 'engine' });
    const silent = { ...desktop, engine: { available: false, cgroupVersion: null, architecture: null, osType: null } };
    expect(cgroupVersionOf(silent)).toEqual({ value: null, from: 'host' });
  });
});

describe('host facts: inotify use, from /proc/<pid>/fd and fdinfo', () => {
  const fdinfo = (watches: number) =>
    [
      'pos:\t0',
      'flags:\t02004000',
      'mnt_id:\t15',
      'ino:\t1057',
      ...Array.from({ length: watches }, (_, i) => `inotify wd:${i + 1} ino:${i + 100} sdev:800001 mask:fc6 ignored_mask:0`),
    ].join('\n');

  it('counts one watch per `inotify wd:` line of an instance', () => {
    expect(inotifyWatchesOf(fdinfo(0))).toBe(0);
    expect(inotifyWatchesOf(fdinfo(3))).toBe(3);
  });

  it("counts the instances and watches of one user's processes only, most instances first", () => {
    const processes: ProcessFds[] = [
      {
        pid: 10,
        uid: 0,
        name: 'systemd',
        fds: [
          { link: 'anon_inode:inotify', fdinfo: fdinfo(40) },
          { link: '/dev/null', fdinfo: null },
        ],
      },
      {
        pid: 20,
        uid: 0,
        name: 'kubelet',
        fds: [
          { link: 'anon_inode:inotify', fdinfo: fdinfo(200) },
          { link: 'anon_inode:inotify', fdinfo: fdinfo(5) },
          { link: 'socket:[123]', fdinfo: null },
        ],
      },
      { pid: 30, uid: 1000, name: 'code', fds: [{ link: 'anon_inode:inotify', fdinfo: fdinfo(9000) }] },
      { pid: 40, uid: 0, name: 'etcd', fds: [{ link: 'anon_inode:[eventpoll]', fdinfo: null }] },
      // fdinfo gone between the readlink and the read (the process ended): the instance counts, its watches cannot.
      { pid: 50, uid: 0, name: 'short', fds: [{ link: 'anon_inode:inotify', fdinfo: null }] },
    ];
    expect(tallyInotify(processes, 0)).toEqual({
      uid: 0,
      instances: 4,
      watches: 245,
      processes: [
        { pid: 20, name: 'kubelet', instances: 2, watches: 205 },
        { pid: 10, name: 'systemd', instances: 1, watches: 40 },
        { pid: 50, name: 'short', instances: 1, watches: 0 },
      ],
    });
    expect(tallyInotify(processes, 1000)).toMatchObject({ instances: 1, watches: 9000 });
    expect(tallyInotify([], 0)).toEqual({ uid: 0, instances: 0, watches: 0, processes: [] });
  });

  it("the engine's kernel, to tell a VM or a remote engine from one on this kernel", () => {
    const info = { ServerVersion: '27.0.1', CgroupVersion: '2', Architecture: 'x86_64', OSType: 'linux' };
    expect(parseDockerInfo(JSON.stringify({ ...info, KernelVersion: '6.10.14-linuxkit' })).kernel).toBe('6.10.14-linuxkit');
    const linux: HostFacts = {
      platform: { os: 'linux', arch: 'amd64' },
      root: false,
      inotify: { maxUserWatches: 8192, maxUserInstances: 128 },
      memAvailableBytes: null,
      hostCgroupVersion: '2',
      engine: { available: true, cgroupVersion: '2', architecture: 'amd64', osType: 'linux', kernel: '6.1.0-26-amd64' },
      kernel: '6.1.0-26-amd64',
    };
    expect(engineSharesHostKernel(linux)).toBe(true);
    expect(engineSharesHostKernel({ ...linux, engine: { ...linux.engine!, kernel: '6.10.14-linuxkit' } })).toBe(false);
    // An engine that does not say, or none asked: this machine's.
    expect(engineSharesHostKernel({ ...linux, engine: { ...linux.engine!, kernel: undefined } })).toBe(true);
    expect(engineSharesHostKernel({ ...linux, engine: null })).toBe(true);
    expect(engineSharesHostKernel({ ...linux, platform: { os: 'darwin', arch: 'arm64' } })).toBe(false);
  });

  it('a rootless engine says so in SecurityOptions', () => {
    const info = { ServerVersion: '27.0.1', CgroupVersion: '2', Architecture: 'x86_64', OSType: 'linux' };
    expect(parseDockerInfo(JSON.stringify({ ...info, SecurityOptions: ['name=seccomp,profile=builtin', 'name=rootless', 'name=cgroupns'] })).rootless).toBe(
      true,
    );
    expect(parseDockerInfo(JSON.stringify({ ...info, SecurityOptions: ['name=seccomp,profile=builtin'] })).rootless).toBeUndefined();
  });
});
