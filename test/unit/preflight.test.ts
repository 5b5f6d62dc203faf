import { describe, expect, it } from 'vitest';
import { MissingPrerequisiteError } from '../../src/errors.js';
import { inotifyCheck, inotifyNeed, raisedLimit, renderPreflight, requirePreflight, warningLine, type InotifyLimitInput } from '../../src/runtime/preflight.js';

const base: InotifyLimitInput = {
  key: 'fs.inotify.max_user_instances',
  limit: 128,
  inUse: 10,
  perCluster: 30,
  newClusters: 2,
  spare: 8,
  recommended: 512,
  what: 'kind node',
};

describe('preflight: one inotify limit', () => {
  it('needs what is held now, each new cluster its share, and the spare', () => {
    expect(inotifyNeed(base)).toBe(10 + 2 * 30 + 8);
    expect(inotifyNeed({ ...base, inUse: null })).toBe(68);
  });

  it('stop below the need, warning between the need and the recommendation, ok above', () => {
    expect(inotifyCheck({ ...base, limit: 77 })).toEqual({
      check: 'fs.inotify.max_user_instances',
      level: 'stop',
      line: "fs.inotify.max_user_instances is 77; the lab's 2 new kind nodes need at least 78 (10 in use, 30 per new cluster × 2, 8 spare)",
      fix: 'sudo sysctl -w fs.inotify.max_user_instances=512',
      sysctl: { key: 'fs.inotify.max_user_instances', value: 512 },
    });
    expect(inotifyCheck({ ...base, limit: 78 }).level).toBe('warning');
    expect(inotifyCheck({ ...base, limit: 511 }).fix).toBe('sudo sysctl -w fs.inotify.max_user_instances=512');
    expect(inotifyCheck({ ...base, limit: 512 }).level).toBe('ok');
    // Without a recommendation (the local runtime) nothing warns.
    expect(inotifyCheck({ ...base, limit: 78, recommended: null }).level).toBe('ok');
  });

  it('raises to the recommendation, or to twice the need past it', () => {
    expect(raisedLimit(100, 512)).toBe(512);
    expect(raisedLimit(300, 512)).toBe(600);
    expect(raisedLimit(300, null)).toBe(600);
    expect(inotifyCheck({ ...base, limit: 128, newClusters: 20 }).fix).toBe(`sudo sysctl -w fs.inotify.max_user_instances=${2 * (10 + 20 * 30 + 8)}`);
  });

  it('an unreadable limit or no new cluster is ok, and says why', () => {
    expect(inotifyCheck({ ...base, limit: null })).toMatchObject({ level: 'ok', line: expect.stringContaining('not read') as string });
    expect(inotifyCheck({ ...base, limit: 1, newClusters: 0 })).toMatchObject({ level: 'ok', line: 'fs.inotify.max_user_instances is 1; no cluster to start' });
  });
});

describe('preflight: what up does with the checks', () => {
  const ok = inotifyCheck({ ...base, limit: 512 });
  const warnInstances = inotifyCheck({ ...base, limit: 200 });
  const warnWatches = inotifyCheck({
    ...base,
    key: 'fs.inotify.max_user_watches',
    limit: 200_000,
    inUse: 1000,
    perCluster: 1024,
    spare: 1024,
    recommended: 524288,
  });

  it('warnings: one line, their settings in one sysctl -w', () => {
    expect(warningLine([ok])).toBeNull();
    const line = warningLine([ok, warnInstances, warnWatches])!;
    expect(line.split('\n')).toHaveLength(1);
    expect(line).toMatch(
      /^warning: fs\.inotify\.max_user_instances is 200: enough for this lab \(78 needed\), below the 512 kind advises for more clusters or pods; /,
    );
    expect(line.endsWith(': sudo sysctl -w fs.inotify.max_user_instances=512 fs.inotify.max_user_watches=524288')).toBe(true);
    expect(requirePreflight([ok, warnInstances], 'the lab')).toBe(warningLine([warnInstances]));
  });

  it('stops: exit 3 naming each, every fix in the hint (one sysctl line each), warnings or not', () => {
    const memory = { check: 'memory', level: 'stop' as const, line: '1.0 GiB of memory is available', fix: 'free memory' };
    let err: unknown;
    try {
      requirePreflight([warnWatches, inotifyCheck({ ...base, limit: 20 }), memory], "the lab's kind clusters");
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(MissingPrerequisiteError);
    const e = err as MissingPrerequisiteError;
    expect(e.exitCode).toBe(3);
    expect(e.message).toBe(
      "this machine cannot run the lab's kind clusters: fs.inotify.max_user_instances is 20; the lab's 2 new kind nodes need at least 78 " +
        '(10 in use, 30 per new cluster × 2, 8 spare); 1.0 GiB of memory is available',
    );
    expect(e.hint?.split('\n')).toEqual([
      'sudo sysctl -w fs.inotify.max_user_instances=512',
      'free memory',
      '(to keep sysctl settings across reboots, put them in /etc/sysctl.d/99-ocm-lab.conf)',
    ]);
  });

  it('--dry-run: a line per check with its verdict, and the remedy of a warning or a stop', () => {
    expect(renderPreflight([ok, warnInstances]).split('\n')).toEqual([
      'Preflight (what up checks before it creates anything; stop = exit 3):',
      `  ok       ${ok.line}`,
      `  warning  ${warnInstances.line}: sudo sysctl -w fs.inotify.max_user_instances=512`,
    ]);
    expect(renderPreflight([])).toBe('Preflight: nothing to check on this runtime');
  });
});
