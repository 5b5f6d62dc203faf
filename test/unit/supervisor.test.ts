import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { decide, NEW_WATCH, superviseLab } from '../../src/runtime/local/supervisor.js';
import { readRestarts, writeSupervised, supervisorFiles } from '../../src/runtime/local/supervision.js';
import { readPid, startProcess, stopProcess, type ProcessSpec } from '../../src/runtime/local/process.js';
import { DEFAULT_BACKOFF } from '../../src/nodelet/backoff.js';

describe('supervisor: when a dead component is started again', () => {
  const dead = { running: false, startedAt: null };
  const t0 = 1_000_000_000;

  it('restarts a first death at once, then backs off 10 s, 20 s, … up to 5 min while it keeps dying', () => {
    let watch = decide(NEW_WATCH, { running: true, startedAt: t0 }, t0).watch;
    let now = t0;
    const delays: number[] = [];
    for (let i = 0; i < 8; i++) {
      now += 5_000; // ran 5 s, then died
      const died = decide(watch, dead, now);
      expect(died.decision.kind).toBe('died');
      const delayMs = (died.decision as { delayMs: number }).delayMs;
      delays.push(delayMs);
      if (delayMs > 0) {
        expect(decide(died.watch, dead, now + delayMs - 1).decision.kind).toBe('waiting');
        now += delayMs;
      }
      const restart = decide(died.watch, dead, now);
      expect(restart.decision.kind).toBe('restart');
      watch = decide(restart.watch, { running: true, startedAt: now }, now).watch;
    }
    expect(delays).toEqual([0, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000]);
  });

  it('forgives the past after 10 min of running, and counts a component never seen running as a first death', () => {
    let watch = { crashes: 5, startedAt: t0, restartAt: null };
    const died = decide(watch, dead, t0 + DEFAULT_BACKOFF.resetAfterMs);
    expect(died.decision).toEqual({ kind: 'died', ranMs: DEFAULT_BACKOFF.resetAfterMs, delayMs: 0 });
    watch = { crashes: 7, startedAt: t0, restartAt: null };
    expect((decide(watch, dead, t0 + DEFAULT_BACKOFF.resetAfterMs - 1).decision as { delayMs: number }).delayMs).toBe(DEFAULT_BACKOFF.maxMs);
    expect(decide(NEW_WATCH, dead, t0).decision).toEqual({ kind: 'died', ranMs: null, delayMs: 0 });
  });
});

describe('supervisor loop on real processes', () => {
  let dir = '';
  afterEach(async () => {
    if (!dir) return;
    await stopProcess({ pidFile: path.join(dir, 'run', 'sleeper.pid'), binary: '/bin/sleep' });
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('adopts a running component, restarts it when killed (reason in its log, restart counted) and leaves it running when it ends', async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-supervisor-'));
    const spec: ProcessSpec = {
      name: 'sleeper',
      binary: '/bin/sleep',
      args: ['600'],
      prefix: [],
      pidFile: path.join(dir, 'run', 'sleeper.pid'),
      logFile: path.join(dir, 'logs', 'sleeper.log'),
    };
    const first = await startProcess(spec);
    first.release();
    await writeSupervised(dir, [{ cluster: 'c1', spec }]);
    const lines: string[] = [];
    const loop = superviseLab(dir, { intervalMs: 20, log: (l) => lines.push(l) });
    const waitFor = async <T>(what: string, f: () => Promise<T | undefined>): Promise<T> => {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const v = await f();
        if (v !== undefined) return v;
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; supervisor said:\n${lines.join('\n')}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    await new Promise((r) => setTimeout(r, 200));
    expect(await readPid(spec.pidFile), 'adopted, not restarted').toBe(first.pid);
    process.kill(first.pid, 'SIGKILL');
    const second = await waitFor('a new pid', async () => {
      const pid = await readPid(spec.pidFile);
      return pid !== null && pid !== first.pid ? pid : undefined;
    });
    expect((await readRestarts(spec.pidFile)).count).toBe(1);
    expect(await fs.readFile(spec.logFile, 'utf8')).toMatch(new RegExp(`supervisor: sleeper \\(pid ${first.pid}\\) is gone .* restarting now`));
    // Its own child: this time the supervisor knows how it ended, and a quick second death waits out the back-off.
    process.kill(second, 'SIGKILL');
    await waitFor('the back-off', async () => (lines.some((l) => /was killed by SIGKILL after running .*; restarting in 10\.0 s/.test(l)) ? true : undefined));
    await fs.rm(supervisorFiles(dir).manifest);
    await loop;
    expect(lines.at(-1)).toMatch(/exiting/);
  }, 20_000);
});

describe('status shows the supervisor and the restarts it made', () => {
  it('renders restarts per component and a supervisor that does not run', async () => {
    const { renderStatus } = await import('../../src/cli/commands/lab-commands.js');
    const text = renderStatus({
      lab: 'l',
      runtime: 'local',
      exists: true,
      kubeconfig: null,
      clusters: [
        {
          name: 'cluster1',
          vpc: 'vpc-2',
          hub: false,
          apiServer: 'https://10.0.0.1:6443',
          ready: true,
          components: [
            { name: 'etcd', running: true, detail: 'pid 1', restarts: { count: 2, last: '2026-11-26T12:00:00.000Z' } },
            { name: 'nodelet', running: true, detail: 'pid 2', restarts: { count: 0, last: null } },
          ],
        },
      ],
      supervisor: { running: false, pid: 7 },
      vpcs: [],
      isolation: { enforced: false, reason: 'test' },
      capabilities: [],
    });
    expect(text).toContain('up (2 restarts, last 2026-11-26T12:00:00.000Z)');
    expect(text).toMatch(/NODELET[\s\S]*\bup\b/);
    expect(text).toContain("supervisor: NOT running — dead components stay dead until 'ocm-lab up'");
  });
});
