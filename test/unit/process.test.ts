import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isRunning, processState, readPid, startProcess, stopProcess } from '../../src/runtime/local/process.js';

/** Whatever a test started is killed even when the test failed half-way. */
async function killLeftover(dir: string): Promise<void> {
  const files = await fs.readdir(dir, { recursive: true }).catch(() => [] as string[]);
  for (const f of files.filter((x) => String(x).endsWith('.pid'))) {
    const pid = await readPid(path.join(dir, String(f)));
    if (pid !== null && (await isRunning(pid, process.execPath))) process.kill(-pid, 'SIGKILL');
  }
}

describe('supervised processes', () => {
  it('starts a detached process with pid and log files, and stops it (idempotently)', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-proc-'));
    const spec = {
      name: 'sleeper',
      binary: process.execPath,
      args: ['-e', 'console.log("hello from sleeper"); process.on("SIGTERM", () => { console.log("bye"); process.exit(0); }); setInterval(() => {}, 1000);'],
      prefix: [],
      pidFile: path.join(dir, 'run', 'sleeper.pid'),
      logFile: path.join(dir, 'logs', 'sleeper.log'),
    };
    try {
      const started = await startProcess(spec);
      started.release();
      expect(await readPid(spec.pidFile)).toBe(started.pid);
      expect(await isRunning(started.pid, process.execPath)).toBe(true);
      // a pid that runs a different program does not count as ours
      expect(await isRunning(started.pid, '/bin/definitely-not-this')).toBe(false);
      expect(await stopProcess(spec)).toBe(true);
      expect(await isRunning(started.pid, process.execPath)).toBe(false);
      expect((await processState(spec)).running).toBe(false);
      await expect(fs.access(spec.pidFile)).rejects.toThrow();
      expect(await stopProcess(spec)).toBe(false);
      const log = await fs.readFile(spec.logFile, 'utf8');
      expect(log).toContain('hello from sleeper');
      expect(log).toContain('bye');
    } finally {
      await killLeftover(dir);
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('reports the exit status of a process that dies while watched', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-proc-'));
    try {
      const started = await startProcess({
        name: 'crasher',
        binary: process.execPath,
        args: ['-e', 'process.exit(7)'],
        prefix: [],
        pidFile: path.join(dir, 'crasher.pid'),
        logFile: path.join(dir, 'crasher.log'),
      });
      expect(await started.exited).toEqual({ code: 7, signal: null });
    } finally {
      await killLeftover(dir);
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('escalates to SIGKILL when a process ignores SIGTERM', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-proc-'));
    const spec = {
      name: 'stubborn',
      binary: process.execPath,
      args: ['-e', 'process.on("SIGTERM", () => {}); setInterval(() => {}, 1000);'],
      prefix: [],
      pidFile: path.join(dir, 'stubborn.pid'),
      logFile: path.join(dir, 'stubborn.log'),
    };
    try {
      const started = await startProcess(spec);
      started.release();
      await new Promise((r) => setTimeout(r, 300));
      expect(await stopProcess(spec, 500)).toBe(true);
      expect(await isRunning(started.pid, process.execPath)).toBe(false);
    } finally {
      await killLeftover(dir);
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
