import { describe, expect, it } from 'vitest';
import {
  ensureHostFits,
  INOTIFY_INSTANCES_PER_CLUSTER,
  localPlatformCheck,
  localPreflight,
  MEMORY_PER_CLUSTER_BYTES,
  planHostFit,
  RAISED_INOTIFY_INSTANCES,
  type LocalHostFacts,
} from '../../src/runtime/local/host-fit.js';
import { MissingPrerequisiteError } from '../../src/errors.js';
import { requirePreflight } from '../../src/runtime/preflight.js';

const roomy: LocalHostFacts = { root: true, maxUserInstances: 128, inotifyInstancesInUse: 10, maxUserWatches: 192_536, memAvailableBytes: 22 * 1024 ** 3 };

describe('local runtime: does the machine fit the lab', () => {
  it('the default lab on a fresh Debian machine (128 inotify instances) changes nothing', () => {
    expect(planHostFit(roomy, 3)).toEqual({ raise: [], problems: [] });
  });

  it('20 clusters: as root, max_user_instances is raised, to at least 512', () => {
    const plan = planHostFit(roomy, 20);
    expect(plan.problems).toEqual([]);
    expect(plan.raise).toEqual([
      {
        key: 'fs.inotify.max_user_instances',
        file: '/proc/sys/fs/inotify/max_user_instances',
        from: 128,
        to: Math.max(RAISED_INOTIFY_INSTANCES, 2 * (10 + 20 * INOTIFY_INSTANCES_PER_CLUSTER + 32)),
      },
    ]);
  });

  it('not root: the same is a problem naming the sysctl and the command, exit 3, nothing written', async () => {
    const facts = { ...roomy, root: false };
    const plan = planHostFit(facts, 20);
    expect(plan.raise).toEqual([]);
    expect(plan.problems[0]!.problem).toMatch(/fs\.inotify\.max_user_instances is 128; with 20 more clusters it should be at least \d+/);
    expect(plan.problems[0]!.fix).toMatch(/^sudo sysctl -w fs\.inotify\.max_user_instances=\d+$/);
    const err = await ensureHostFits(21, 20, () => undefined, facts).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MissingPrerequisiteError);
    expect((err as MissingPrerequisiteError).exitCode).toBe(3);
  });

  it('too little memory for the new clusters is refused, naming the figures; running clusters need none', () => {
    const facts = { ...roomy, memAvailableBytes: 3 * MEMORY_PER_CLUSTER_BYTES };
    expect(planHostFit(facts, 4).problems.map((p) => p.problem)).toEqual([
      expect.stringMatching(/3\.0 GiB of memory is available; 4 new clusters need about 4\.0 GiB/),
    ]);
    expect(planHostFit(facts, 3).problems).toEqual([]);
  });

  it('no new cluster: nothing is read or checked', async () => {
    expect(
      await ensureHostFits(
        3,
        0,
        () => {
          throw new Error('no progress expected');
        },
        { ...roomy, memAvailableBytes: 0, root: false, maxUserInstances: 1 },
      ),
    ).toEqual([]);
  });
});

describe('local runtime: platforms it cannot run on, and its preflight as up --dry-run shows it', () => {
  it('macOS and Windows stop (exit 3) naming what is missing and what to do; Linux passes', () => {
    expect(localPlatformCheck({ platform: { os: 'linux', arch: 'arm64' } })).toEqual({ check: 'platform', level: 'ok', line: 'linux/arm64' });
    const mac = localPlatformCheck({ platform: { os: 'darwin', arch: 'arm64' } });
    expect(mac).toMatchObject({ level: 'stop', line: expect.stringContaining('Linux processes in network namespaces; this is darwin/arm64') as string });
    expect(mac.fix).toBe('use --runtime kind with Docker Desktop');
    expect(localPlatformCheck({ platform: { os: 'windows', arch: 'amd64' } }).fix).toContain('WSL2');
    let err: unknown;
    try {
      requirePreflight([mac], "the local runtime's clusters");
    } catch (e) {
      err = e;
    }
    expect((err as MissingPrerequisiteError).exitCode).toBe(3);
    expect((err as MissingPrerequisiteError).hint).toBe('use --runtime kind with Docker Desktop');
  });

  it('the checks: a limit up raises as root is ok and says so; without root it stops with the sysctl line; on macOS only the platform', () => {
    const linux = { platform: { os: 'linux', arch: 'amd64' } };
    const levels = (checks: { check: string; level: string }[]) => checks.map((c) => `${c.check} ${c.level}`);
    expect(levels(localPreflight(linux, roomy, 3))).toEqual(['platform ok', 'fs.inotify.max_user_instances ok', 'fs.inotify.max_user_watches ok', 'memory ok']);
    expect(localPreflight(linux, roomy, 3)[1]!.line).toBe(
      `fs.inotify.max_user_instances is 128; the lab needs ${10 + 3 * INOTIFY_INSTANCES_PER_CLUSTER + 32} (10 in use, ${INOTIFY_INSTANCES_PER_CLUSTER} per new cluster × 3, 32 spare)`,
    );
    expect(localPreflight(linux, roomy, 20)[1]!.line).toMatch(/^fs\.inotify\.max_user_instances is 128; the lab needs \d+: up raises it to \d+ \(as root\)$/);
    const notRoot = localPreflight(linux, { ...roomy, root: false }, 20)[1]!;
    expect(notRoot).toMatchObject({ level: 'stop', fix: expect.stringMatching(/^sudo sysctl -w fs\.inotify\.max_user_instances=\d+$/) as string });
    expect(notRoot.line).toMatch(/it should be at least 362 \(10 in use, 16 per new cluster × 20, 32 spare\) — /);
    expect(levels(localPreflight({ platform: { os: 'darwin', arch: 'arm64' } }, roomy, 3))).toEqual(['platform stop']);
  });
});
