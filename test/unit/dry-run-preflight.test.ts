import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { planLab } from '../../src/cli/dry-run/lab-plan.js';
import { defaultLabConfig } from '../../src/config/index.js';
import type { HostFacts } from '../../src/host/facts.js';
import type { PreflightCheck } from '../../src/runtime/preflight.js';

/** A Linux machine with a cgroup v2 engine and stock inotify limits (128 instances, 8192 watches). */
const LINUX: HostFacts = {
  platform: { os: 'linux', arch: 'amd64' },
  root: true,
  inotify: { maxUserWatches: 8192, maxUserInstances: 128 },
  memAvailableBytes: 16 * 1024 ** 3,
  hostCgroupVersion: '2',
  engine: { available: true, cgroupVersion: '2', architecture: 'amd64', osType: 'linux' },
};

const verdicts = (checks: PreflightCheck[] | undefined) => (checks ?? []).map((c) => `${c.check}: ${c.level}`);

describe('up --dry-run: the preflight verdicts (text and -o json)', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-dry-run-preflight-'));
  });
  afterEach(() => {
    vi.unstubAllEnvs();
  });
  afterAll(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  function env(platform?: string): void {
    vi.stubEnv('OCM_LAB_HOME', path.join(dir, 'labs'));
    vi.stubEnv('OCM_LAB_HOST_PLATFORM', platform ?? '');
    vi.stubEnv('OCM_LAB_ARTIFACTS', '');
    vi.stubEnv('OCM_LAB_NO_DOWNLOAD', '');
  }

  it('OCM_LAB_HOST_PLATFORM=darwin/arm64 --runtime local: stop, naming what is missing and what to do', async () => {
    env('darwin/arm64');
    const mac: HostFacts = { ...LINUX, platform: { os: 'darwin', arch: 'arm64' }, hostCgroupVersion: null, engine: null };
    const { dryRun, text } = await planLab('local', defaultLabConfig(), { action: 'up', host: mac });
    const json = JSON.parse(JSON.stringify(dryRun)) as typeof dryRun;
    expect(json.preflight).toEqual([
      {
        check: 'platform',
        level: 'stop',
        line: 'the local runtime runs control planes as Linux processes in network namespaces; this is darwin/arm64',
        fix: 'use --runtime kind with Docker Desktop',
      },
    ]);
    expect(text).toContain('Preflight (what up checks before it creates anything; stop = exit 3):\n  stop     the local runtime runs control planes');
  });

  it('OCM_LAB_HOST_PLATFORM=windows/amd64 --runtime local: stop, pointing at kind or WSL2', async () => {
    env('windows/amd64');
    const win: HostFacts = { ...LINUX, platform: { os: 'windows', arch: 'amd64' }, hostCgroupVersion: null, engine: null };
    const { dryRun } = await planLab('local', defaultLabConfig(), { action: 'up', host: win });
    expect(dryRun.preflight?.[0]).toMatchObject({
      level: 'stop',
      fix: 'use --runtime kind with Docker Desktop, or run ocm-lab inside a WSL2 Linux distribution',
    });
  });

  it("kind on Docker Desktop (darwin/arm64, cgroup v2): every check ok, the VM's limits not ours to read", async () => {
    env('darwin/arm64');
    const mac: HostFacts = {
      ...LINUX,
      platform: { os: 'darwin', arch: 'arm64' },
      root: false,
      hostCgroupVersion: null,
      engine: { ...LINUX.engine!, architecture: 'arm64' },
    };
    const { dryRun } = await planLab('kind', defaultLabConfig(), { action: 'up', host: mac });
    expect(verdicts(dryRun.preflight)).toEqual(['engine: ok', 'node image: ok', 'inotify and memory: ok']);
  });

  it('kind on Linux with stock limits: the stop names the limit, the need and the sysctl line; the text shows each verdict', async () => {
    env();
    const inotifyInUse = { uid: 0, instances: 20, watches: 900, processes: [] };
    const { dryRun, text } = await planLab('kind', defaultLabConfig(), { action: 'up', host: LINUX, facts: { inotifyInUse } });
    expect(verdicts(dryRun.preflight)).toEqual([
      'engine: ok',
      'node image: ok',
      'fs.inotify.max_user_instances: stop',
      'fs.inotify.max_user_watches: warning',
      'memory: ok',
    ]);
    const stop = dryRun.preflight!.find((c) => c.level === 'stop')!;
    expect(stop.line).toMatch(
      /^fs\.inotify\.max_user_instances is 128; the lab's 3 new kind nodes need at least 196 \(20 in use, 56 per new cluster × 3, 8 spare\)$/,
    );
    expect(stop.fix).toBe('sudo sysctl -w fs.inotify.max_user_instances=512');
    expect(dryRun.preflight!.find((c) => c.check === 'fs.inotify.max_user_watches')!.line).toMatch(/\(4996 needed\)/);
    expect(text).toMatch(/\n {2}stop {5}fs\.inotify\.max_user_instances is 128; .*: sudo sysctl -w fs\.inotify\.max_user_instances=512\n/);
    expect(text).toMatch(
      /\n {2}warning {2}fs\.inotify\.max_user_watches is 8192: enough for this lab .*: sudo sysctl -w fs\.inotify\.max_user_watches=524288\n/,
    );
  });

  it('down --dry-run has no preflight', async () => {
    env();
    const { dryRun } = await planLab('local', defaultLabConfig(), { action: 'down' });
    expect(dryRun.preflight).toBeUndefined();
  });
});
