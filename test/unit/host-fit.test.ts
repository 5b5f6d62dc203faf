import { describe, expect, it } from 'vitest';
import {
  ensureHostFits,
  INOTIFY_INSTANCES_PER_CLUSTER,
  MEMORY_PER_CLUSTER_BYTES,
  planHostFit,
  RAISED_INOTIFY_INSTANCES,
  type LocalHostFacts,
} from '../../src/runtime/local/host-fit.js';
import { MissingPrerequisiteError } from '../../src/errors.js';

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
