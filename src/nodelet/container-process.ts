import { spawn } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import fs from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '../util/atomic-file.js';

/** Environment variables that mark a process as a nodelet container (to find leftovers safely). */
export const POD_UID_ENV = 'OCM_LAB_POD_UID';
export const CONTAINER_NAME_ENV = 'OCM_LAB_CONTAINER_NAME';

export function logFile(podDir: string, container: string): string {
  return path.join(podDir, `${container}.log`);
}

export function previousLogFile(podDir: string, container: string): string {
  return path.join(podDir, `${container}.previous.log`);
}

function pidFile(podDir: string, container: string): string {
  return path.join(podDir, `${container}.pid`);
}

export interface ContainerExit {
  /** As the kubelet reports it: the exit status, or 128 + signal number. */
  exitCode: number;
  signal?: number;
  finishedAt: Date;
}

export interface ContainerProcessSpec {
  podDir: string;
  podUid: string;
  container: string;
  /** The program (node) and its arguments (the CLI script, then the container's CLI arguments). */
  file: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
}

/**
 * One run of a container: a child of the nodelet in the nodelet's process
 * group (so `down`, which signals that group, reaches it too), output
 * appended to `<podDir>/<container>.log`, pid recorded next to it.
 */
export class ContainerProcess {
  private constructor(
    readonly pid: number,
    readonly startedAt: Date,
    readonly exited: Promise<ContainerExit>,
    private readonly pidPath: string,
  ) {}

  static async start(spec: ContainerProcessSpec): Promise<ContainerProcess> {
    const log = logFile(spec.podDir, spec.container);
    // The previous run's output stays readable with `ocm-lab logs --previous`.
    const size = await fs.stat(log).then((s) => s.size, () => 0);
    if (size > 0) await fs.rename(log, previousLogFile(spec.podDir, spec.container));
    const handle = await fs.open(log, 'a', 0o600);
    const env = { ...spec.env, [POD_UID_ENV]: spec.podUid, [CONTAINER_NAME_ENV]: spec.container };
    let exited: Promise<ContainerExit>;
    let spawned: Promise<number>;
    try {
      const child = spawn(spec.file, spec.args, { cwd: spec.cwd, env, stdio: ['ignore', handle.fd, handle.fd] });
      // Listen before any await: 'spawn' and 'exit' may fire while the log file closes.
      exited = new Promise<ContainerExit>((resolve) => {
        child.once('exit', (code, signal) => {
          const signum = signal ? (osConstants.signals[signal] ?? 0) : undefined;
          resolve({ exitCode: code ?? 128 + (signum ?? 0), ...(signum !== undefined ? { signal: signum } : {}), finishedAt: new Date() });
        });
      });
      spawned = new Promise<number>((resolve, reject) => {
        child.once('spawn', () => resolve(child.pid as number));
        child.once('error', (err) => reject(new Error(`could not start ${spec.file}: ${err.message}`)));
      });
    } finally {
      await handle.close();
    }
    const pid = await spawned;
    const pidPath = pidFile(spec.podDir, spec.container);
    await writeFileAtomic(pidPath, `${pid}\n`, 0o600);
    void exited.then(() => fs.rm(pidPath, { force: true }));
    return new ContainerProcess(pid, new Date(), exited, pidPath);
  }

  signal(sig: NodeJS.Signals): void {
    try {
      process.kill(this.pid, sig);
    } catch {
      // already gone
    }
  }

  /** SIGTERM, then SIGKILL once the grace period is over; resolves when the process has exited. */
  async terminate(graceMs: number): Promise<ContainerExit> {
    this.signal('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const killed = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        this.signal('SIGKILL');
        resolve();
      }, Math.max(graceMs, 0));
    });
    const exit = await Promise.race([this.exited, killed.then(() => this.exited)]);
    clearTimeout(timer);
    return exit;
  }
}

async function environOf(pid: number): Promise<Record<string, string> | null> {
  try {
    const raw = await fs.readFile(`/proc/${pid}/environ`, 'utf8');
    return Object.fromEntries(
      raw
        .split('\0')
        .filter(Boolean)
        .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
    );
  } catch {
    return null;
  }
}

/**
 * Kills container processes that a previous nodelet left running (it was
 * killed before it could stop them). A pid counts only if the process still
 * carries the pod's uid and container name in its environment.
 */
export async function killLeftovers(podDir: string, podUid: string): Promise<number[]> {
  const killed: number[] = [];
  const entries = await fs.readdir(podDir).catch(() => [] as string[]);
  for (const f of entries.filter((e) => e.endsWith('.pid'))) {
    const file = path.join(podDir, f);
    const pid = Number.parseInt((await fs.readFile(file, 'utf8').catch(() => '')).trim(), 10);
    if (Number.isInteger(pid) && pid > 0) {
      const env = await environOf(pid);
      if (env && env[POD_UID_ENV] === podUid && `${env[CONTAINER_NAME_ENV] ?? ''}.pid` === f) {
        try {
          process.kill(pid, 'SIGKILL');
          killed.push(pid);
        } catch {
          // gone meanwhile
        }
      }
    }
    await fs.rm(file, { force: true });
  }
  return killed;
}
