import { spawn, type ChildProcess } from 'node:child_process';
import { constants as fsConstants } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '../../util/atomic-file.js';
import { tail } from '../../util/exec.js';
import { signalGroup } from '../../util/process-group.js';
import { sleep } from '../../kube/wait.js';

/** A long-running lab component: one binary, one pid file, one log file. */
export interface ProcessSpec {
  /** Component name, unique within its cluster: etcd, kube-apiserver, … */
  name: string;
  binary: string;
  args: string[];
  /** Prefix that runs the binary inside a VPC's network namespace (`ip netns exec <ns>`); empty on loopback. */
  prefix: string[];
  pidFile: string;
  logFile: string;
  env?: NodeJS.ProcessEnv;
  /** Variables set on top of `env` (or this process's environment); `--dry-run` shows them. */
  extraEnv?: Record<string, string>;
  cwd?: string;
}

export interface StartedProcess {
  pid: number;
  /** Resolves with the exit status if the process ends while this `ocm-lab` is still watching it. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Stop watching so the CLI can exit while the component keeps running. */
  release(): void;
}

function isNoSuchProcess(err: unknown): boolean {
  return (err as NodeJS.ErrnoException).code === 'ESRCH';
}

export async function readPid(pidFile: string): Promise<number | null> {
  try {
    const text = (await fs.readFile(pidFile, 'utf8')).trim();
    const pid = Number.parseInt(text, 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/**
 * True when `pid` is alive and still runs `binary` — a recycled pid that now
 * belongs to some other program does not count.
 */
export async function isRunning(pid: number, binary: string): Promise<boolean> {
  // A live process reads as an empty cmdline while it is inside execve (`ip netns exec`
  // replacing itself with the component, right after start): look again before judging.
  for (let attempt = 0; attempt < 20; attempt++) {
    try {
      const cmdline = await fs.readFile(`/proc/${pid}/cmdline`, 'utf8');
      const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
      // State field follows the parenthesised command name; Z = zombie (exited, not yet reaped).
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (state === 'Z' || state === 'X') return false;
      if (cmdline === '') {
        await sleep(10);
        continue;
      }
      const argv0 = cmdline.split('\0')[0] ?? '';
      return argv0 === binary || cmdline.split('\0').includes(binary);
    } catch {
      return false;
    }
  }
  return false;
}

export async function processState(spec: Pick<ProcessSpec, 'pidFile' | 'binary'>): Promise<{ pid: number | null; running: boolean }> {
  const pid = await readPid(spec.pidFile);
  if (pid === null) return { pid: null, running: false };
  return { pid, running: await isRunning(pid, spec.binary) };
}

/**
 * Starts a component detached from this CLI (its own process group), with its
 * output appended to its log file and its pid recorded. `ip netns exec` execs
 * the binary in place, so the recorded pid is the component's own.
 */
export async function startProcess(spec: ProcessSpec): Promise<StartedProcess> {
  await fs.mkdir(path.dirname(spec.pidFile), { recursive: true });
  await fs.mkdir(path.dirname(spec.logFile), { recursive: true });
  await fs.access(spec.binary, fsConstants.X_OK);
  const log = await fs.open(spec.logFile, 'a', 0o600);
  await log.write(`\n==== ${new Date().toISOString()} starting ${spec.name}: ${spec.binary} ${spec.args.join(' ')}\n`);
  const [file, ...prefixArgs] = spec.prefix.length ? spec.prefix : [spec.binary];
  const args = spec.prefix.length ? [...prefixArgs, spec.binary, ...spec.args] : spec.args;
  let child: ChildProcess;
  let spawned: Promise<number>;
  let exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  try {
    child = spawn(file as string, args, {
      detached: true,
      stdio: ['ignore', log.fd, log.fd],
      env: { ...(spec.env ?? process.env), ...spec.extraEnv },
      cwd: spec.cwd,
    });
    // Listen before any await: 'spawn' and 'exit' may fire while the log file closes.
    spawned = new Promise<number>((resolve, reject) => {
      child.once('spawn', () => resolve(child.pid as number));
      child.once('error', (err) => reject(new Error(`could not start ${spec.name} (${spec.binary}): ${err.message}`)));
    });
    exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => resolve({ code, signal }));
    });
  } finally {
    await log.close();
  }
  const pid = await spawned;
  await writeFileAtomic(spec.pidFile, `${pid}\n`, 0o644);
  return {
    pid,
    exited,
    release: () => {
      child.removeAllListeners('exit');
      child.unref();
    },
  };
}

/**
 * Stops a component: SIGTERM to its process group, SIGKILL after the grace
 * period. Missing or stale pid files are fine (idempotent).
 */
export async function stopProcess(spec: Pick<ProcessSpec, 'pidFile' | 'binary'>, graceMs = 10_000): Promise<boolean> {
  const pid = await readPid(spec.pidFile);
  let stopped = false;
  if (pid !== null && (await isRunning(pid, spec.binary))) {
    signalProcessAndGroup(pid, 'SIGTERM');
    const deadline = Date.now() + graceMs;
    while (Date.now() < deadline && (await isRunning(pid, spec.binary))) await sleep(100);
    if (await isRunning(pid, spec.binary)) {
      signalProcessAndGroup(pid, 'SIGKILL');
      const killDeadline = Date.now() + 5_000;
      while (Date.now() < killDeadline && (await isRunning(pid, spec.binary))) await sleep(50);
    }
    stopped = true;
  }
  await fs.rm(spec.pidFile, { force: true });
  return stopped;
}

/** Signals the group the process leads (startProcess detaches it); one that leads none, or whose group may not be signalled, gets it alone. */
function signalProcessAndGroup(pid: number, signal: NodeJS.Signals): void {
  if (signalGroup(pid, signal)) return;
  try {
    process.kill(pid, signal);
  } catch (err) {
    if (!isNoSuchProcess(err)) throw err;
  }
}

export async function logTail(logFile: string, lines = 25): Promise<string> {
  try {
    const text = await fs.readFile(logFile, 'utf8');
    return tail(text, lines);
  } catch {
    return '(no log written)';
  }
}
