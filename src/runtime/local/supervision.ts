import fs from 'node:fs/promises';
import path from 'node:path';
import lockfile from 'proper-lockfile';
import { writeFileAtomic } from '../../util/atomic-file.js';
import { CLI_MAIN } from '../../paths.js';
import { readPid, startProcess, stopProcess, type ProcessSpec } from './process.js';

/**
 * What the lab's supervisor (`ocm-lab internal supervise`, one per lab) watches and records: the
 * components `up` started, in start order, and per component how often the supervisor restarted it.
 */
export interface SupervisedComponent {
  cluster: string;
  spec: Omit<ProcessSpec, 'env'>;
}

export interface RestartRecord {
  count: number;
  /** ISO time of the last restart. */
  last: string | null;
  /** Why the component was restarted last (how it ended, as far as the supervisor could tell). */
  reason: string | null;
}

export function supervisorFiles(labDirectory: string): { pidFile: string; logFile: string; manifest: string } {
  return {
    pidFile: path.join(labDirectory, 'run', 'supervisor.pid'),
    logFile: path.join(labDirectory, 'logs', 'supervisor.log'),
    manifest: path.join(labDirectory, 'run', 'supervised.json'),
  };
}

/** How `up` starts the lab's supervisor (also shown by `up --dry-run`). */
export function supervisorSpec(labDirectory: string): ProcessSpec {
  return {
    name: 'supervisor',
    binary: process.execPath,
    args: [CLI_MAIN, 'internal', 'supervise', '--lab-dir', labDirectory],
    prefix: [],
    ...supervisorFiles(labDirectory),
  };
}

export async function writeSupervised(labDirectory: string, components: readonly SupervisedComponent[]): Promise<void> {
  const plain = components.map(({ cluster, spec }) => ({ cluster, spec: { ...spec, env: undefined } }));
  await writeFileAtomic(supervisorFiles(labDirectory).manifest, `${JSON.stringify(plain, null, 2)}\n`, 0o600);
}

/** The components to watch, or null when the lab has none recorded (or its directory is gone). */
export async function readSupervised(labDirectory: string): Promise<SupervisedComponent[] | null> {
  try {
    return JSON.parse(await fs.readFile(supervisorFiles(labDirectory).manifest, 'utf8')) as SupervisedComponent[];
  } catch {
    return null;
  }
}

function restartsFile(pidFile: string): string {
  return pidFile.replace(/\.pid$/, '.restarts.json');
}

export async function readRestarts(pidFile: string): Promise<RestartRecord> {
  try {
    return JSON.parse(await fs.readFile(restartsFile(pidFile), 'utf8')) as RestartRecord;
  } catch {
    return { count: 0, last: null, reason: null };
  }
}

export async function writeRestarts(pidFile: string, record: RestartRecord): Promise<void> {
  await writeFileAtomic(restartsFile(pidFile), `${JSON.stringify(record)}\n`, 0o644);
}

/** Whether `up` or `down` holds the lab's lock (src/runtime/lab-lock.ts): the supervisor leaves the lab to them meanwhile. */
export async function labLockHeld(labDirectory: string): Promise<boolean> {
  return lockfile.check(labDirectory, { lockfilePath: path.join(labDirectory, '.lock'), stale: 30_000 }).catch(() => false);
}

/** The lab's supervisor: its pid when one runs (every `node` runs process.execPath, so its command line must name this lab). */
export async function supervisorState(labDirectory: string): Promise<{ pid: number | null; running: boolean }> {
  const pid = await readPid(supervisorFiles(labDirectory).pidFile);
  if (pid === null) return { pid, running: false };
  const cmdline = await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
  const args = cmdline.split('\0');
  return { pid, running: args.includes('supervise') && args.includes(labDirectory) };
}

/** Stops the lab's supervisor, never the components it watches (they run in process groups of their own). */
export async function stopSupervisor(labDirectory: string): Promise<boolean> {
  const state = await supervisorState(labDirectory);
  if (!state.running) {
    await fs.rm(supervisorFiles(labDirectory).pidFile, { force: true });
    return false;
  }
  return stopProcess({ pidFile: supervisorFiles(labDirectory).pidFile, binary: process.execPath }, 5_000);
}

/**
 * (Re)starts the lab's supervisor for the components `up` just made sure of: a running one is
 * replaced (it may be an older ocm-lab's), and the new one adopts the running components by their
 * pid files and command lines without restarting them.
 */
export async function startSupervisor(labDirectory: string, components: readonly SupervisedComponent[]): Promise<number> {
  await writeSupervised(labDirectory, components);
  await stopSupervisor(labDirectory);
  const proc = await startProcess(supervisorSpec(labDirectory));
  proc.release();
  return proc.pid;
}
