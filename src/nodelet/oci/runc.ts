import { execFile, spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import { constants as osConstants } from 'node:os';
import { existsSync, mkdirSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { ContainerStartError } from '../errors.js';
import { closeShimOutput, liveShimPid, makeShimOutput, readShimExit, readShimOutput, reopenShimOutput, startShim, type ShimOutputFds } from './shim.js';
import { sleep } from '../../kube/wait.js';
import { signalGroup } from '../../util/process-group.js';

/** Where a container's stdout and stderr go (a CRI log writer, or a plain file). */
export interface LogSink {
  stdout: Writable;
  stderr: Writable;
  /** Called once both streams have ended (the container exited). */
  close?(): Promise<void>;
}

/** The runc binary and its state directory (`--root`): one per nodelet, so leftovers can be found and removed. */
export interface Runc {
  binary: string;
  root: string;
}

/** runc state in `root`; the binary from PATH, else Debian's /usr/sbin/runc (sbin is not on every user's PATH). */
export function runcAt(root: string, binary?: string): Runc {
  if (binary) return { binary, root };
  const dirs = [...(process.env.PATH ?? '').split(':').filter(Boolean), '/usr/local/sbin', '/usr/sbin', '/sbin'];
  const found = dirs.map((d) => path.join(d, 'runc')).find((f) => existsSync(f));
  return { binary: found ?? 'runc', root };
}

export interface ContainerExit {
  /** As the kubelet reports it: the exit status, or 128 + signal number. */
  exitCode: number;
  /** Set when the exit status says the process ended by a signal (128 + n). */
  signal?: number;
  finishedAt: Date;
}

/** Runs `runc --root <root> <args…>`; rejects with what runc printed. */
function runcCommand(runc: Runc, args: string[], timeoutMs = 15_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(runc.binary, ['--root', runc.root, ...args], { timeout: timeoutMs, maxBuffer: 8 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${runc.binary} ${args.join(' ')} failed: ${(stderr || err.message).trim()}`));
      else resolve(stdout);
    });
  });
}

function exitOf(code: number | null, signal: NodeJS.Signals | null, finishedAt = new Date()): ContainerExit {
  const exitCode = code ?? 128 + (signal ? (osConstants.signals[signal] ?? 0) : 0);
  // runc exits 128+n when the container's init died of signal n.
  const signum = exitCode > 128 && exitCode <= 128 + 64 ? exitCode - 128 : undefined;
  return { exitCode, ...(signum !== undefined ? { signal: signum } : {}), finishedAt };
}

async function lastLogLines(file: string): Promise<string> {
  const text = await fs.readFile(file, 'utf8').catch(() => '');
  const lines = text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => {
      const m = /msg="((?:[^"\\]|\\.)*)"/.exec(l);
      return m ? (m[1] as string).replace(/\\"/g, '"') : l;
    });
  return lines.slice(-3).join('; ');
}

export interface RuncStartSpec {
  runc: Runc;
  /** Container id: unique on the machine (the cgroup and state are named after it). */
  id: string;
  bundle: string;
  sink: LogSink;
  /** How long runc may take to create the container. */
  timeoutMs?: number;
}

/**
 * One run of a container: `runc run` in the foreground under its shim
 * (./shim.ts), which outlives the nodelet, so a restarted nodelet adopts the
 * container (`adopt`) instead of starting it again. The container's stdout and
 * stderr are the shim's FIFOs (terminal=false hands runc's own stdio to the
 * container), read into the log sink; runc's own messages go to
 * `<bundle>/runc.log`.
 */
export class RuncContainer {
  private constructor(
    readonly runc: Runc,
    readonly id: string,
    /** The container's init process, as the host sees it. */
    readonly pid: number,
    readonly startedAt: Date,
    readonly exited: Promise<ContainerExit>,
  ) {}

  static async start(spec: RuncStartSpec): Promise<RuncContainer> {
    const pidFile = path.join(spec.bundle, 'init.pid');
    const logFile = path.join(spec.bundle, 'runc.log');
    await fs.rm(pidFile, { force: true });
    await fs.rm(logFile, { force: true });
    await fs.rm(startedAtFile(spec.bundle), { force: true });
    await fs.mkdir(spec.runc.root, { recursive: true, mode: 0o700 });
    const output = await makeShimOutput(spec.bundle);
    const shim = startShim(spec.bundle, [
      spec.runc.binary,
      ...['--root', spec.runc.root, '--log', logFile, '--log-format', 'text', 'run', '--bundle', spec.bundle, '--pid-file', pidFile, spec.id],
    ]);
    // Listen before any await: 'exit' may come quickly.
    let early: 'exited' | Error | undefined;
    shim.once('exit', () => (early ??= 'exited'));
    shim.once('error', (err) => (early ??= err));
    const deadline = Date.now() + (spec.timeoutMs ?? 30_000);
    for (;;) {
      const text = await fs.readFile(pidFile, 'utf8').catch(() => '');
      const pid = Number.parseInt(text.trim(), 10);
      if (Number.isInteger(pid) && pid > 0) {
        const startedAt = new Date();
        await recordStartedAt(spec.bundle, startedAt);
        return new RuncContainer(spec.runc, spec.id, pid, startedAt, followShim(spec.runc, spec.id, spec.bundle, output, spec.sink));
      }
      if (early instanceof Error) {
        await closeShimOutput(output);
        throw new ContainerStartError('RunContainerError', `could not run /bin/sh (the container's shim): ${early.message}`);
      }
      if (early) {
        await closeShimOutput(output);
        const status = await readShimExit(spec.bundle);
        await spec.sink.close?.().catch(() => undefined);
        const why =
          (await lastLogLines(logFile)) ||
          (status
            ? `runc exited with ${status.exitCode} before the container started`
            : 'the shim exited before runc started (could it make the FIFOs in the bundle?)');
        throw new ContainerStartError('RunContainerError', `runc run ${spec.id}: ${why}`);
      }
      if (Date.now() > deadline) {
        await runcCommand(spec.runc, ['delete', '--force', spec.id]).catch(() => undefined);
        if (shim.pid) signalGroup(shim.pid, 'SIGKILL');
        await closeShimOutput(output);
        throw new ContainerStartError('RunContainerError', `runc run ${spec.id}: the container was not created within ${spec.timeoutMs ?? 30_000} ms`);
      }
      await sleep(10);
    }
  }

  /**
   * Takes over a container an earlier nodelet started: running, in `bundle`,
   * with its shim alive. Its output goes on into `sink` from where the pipe
   * holds it. Undefined when there is nothing to adopt.
   */
  static async adopt(runc: Runc, id: string, bundle: string, sink: LogSink): Promise<RuncContainer | undefined> {
    const state = await containerState(runc, id);
    if (state?.status !== 'running' || path.resolve(state.bundle) !== path.resolve(bundle)) return undefined;
    const output = await reopenShimOutput(bundle);
    if (!output) return undefined;
    const startedAt = (await recordedStartedAt(bundle)) ?? new Date(state.created);
    return new RuncContainer(runc, id, state.pid, startedAt, followShim(runc, id, bundle, output, sink));
  }

  /** Sends a signal to the container's init process (`runc kill`); a container already gone is fine. */
  async signal(sig: NodeJS.Signals): Promise<void> {
    await runcCommand(this.runc, ['kill', this.id, sig.replace(/^SIG/, '')]).catch(() => undefined);
  }

  /** SIGTERM, then SIGKILL once the grace period is over; resolves when the container has exited. */
  async terminate(graceMs: number): Promise<ContainerExit> {
    let timer: NodeJS.Timeout | undefined;
    const killed = new Promise<void>((resolve) => {
      timer = setTimeout(
        () => {
          void this.signal('SIGKILL').then(resolve);
        },
        Math.max(graceMs, 0),
      );
    });
    await this.signal('SIGTERM');
    const exit = await Promise.race([this.exited, killed.then(() => this.exited)]);
    clearTimeout(timer);
    return exit;
  }

  exec(argv: string[], opts: ExecOptions = {}): ExecProcess {
    return runcExec(this.runc, this.id, argv, opts);
  }
}

/**
 * The start time the pod's status shows, kept in the bundle so a nodelet that
 * adopts the container reports the same `startedAt` (runc's `created` is a
 * moment earlier and may fall in the second before).
 */
const startedAtFile = (bundle: string) => path.join(bundle, 'started-at');

async function recordStartedAt(bundle: string, at: Date): Promise<void> {
  await fs.writeFile(startedAtFile(bundle), `${at.toISOString()}\n`);
}

async function recordedStartedAt(bundle: string): Promise<Date | undefined> {
  const text = await fs.readFile(startedAtFile(bundle), 'utf8').catch(() => '');
  const at = new Date(text.trim());
  return text && !Number.isNaN(at.getTime()) ? at : undefined;
}

/**
 * Reads the shim's FIFOs into `sink`. End-of-file on both means every writer
 * is gone: the shim, which writes the exit status before it exits, and the
 * container. Should the shim have been killed, runc's state says when the
 * container stopped (its status is then unknown: 255).
 */
function followShim(runc: Runc, id: string, bundle: string, fds: ShimOutputFds, sink: LogSink): Promise<ContainerExit> {
  const output = readShimOutput(fds);
  const one = (from: Readable, to: Writable) =>
    new Promise<void>((resolve) => {
      from.on('data', (chunk: Buffer) => {
        if (!to.write(chunk)) {
          from.pause();
          to.once('drain', () => from.resume());
        }
      });
      from.once('close', () => resolve());
      from.once('error', () => resolve());
    });
  return Promise.all([one(output.stdout, sink.stdout), one(output.stderr, sink.stderr)]).then(async () => {
    await sink.close?.().catch(() => undefined);
    for (;;) {
      const status = await readShimExit(bundle);
      if (status) return exitOf(status.exitCode, null, status.finishedAt);
      const state = await containerState(runc, id);
      if (state?.status !== 'running' && state?.status !== 'created') return exitOf(255, null);
      await sleep(1_000);
    }
  });
}

/** runc's state of one container; undefined when runc does not know it. */
async function containerState(runc: Runc, id: string): Promise<(RuncState & { created: string }) | undefined> {
  const text = await runcCommand(runc, ['state', id]).catch(() => '');
  return text ? (JSON.parse(text) as RuncState & { created: string }) : undefined;
}

export interface ExecOptions {
  /** Allocate a terminal (kubectl exec -t). */
  tty?: boolean;
  /** Give the command a stdin to write to (kubectl exec -i); without it the command reads end-of-file. */
  stdin?: boolean;
  /** Initial terminal size. */
  size?: { cols: number; rows: number };
}

/** A process started in a running container; the kubelet API and exec probes use it (the shape of the kubelet API's ExecProcess). */
export interface ExecProcess {
  /** Null unless asked for with `stdin`. */
  stdin: Writable | null;
  stdout: Readable;
  /** Null with a terminal: everything comes on stdout. */
  stderr: Readable | null;
  /** The command's exit status (128 + n when killed by signal n). */
  exited: Promise<{ exitCode: number }>;
  /** Changes the terminal size (tty only); takes effect a moment later. */
  resize(cols: number, rows: number): void;
  /** Kills the command (SIGKILL) and runc exec: for timeouts of exec probes and closed streams. */
  kill(): void;
}

function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * `runc exec` in a running container. Without a terminal the command's stdio
 * are the pipes. `runc exec -t` needs a terminal on its own stdio (it fails
 * with "open /dev/tty: no such device or address" on pipes), so with `tty`
 * it runs under util-linux `script`, which gives it a pseudo-terminal and
 * relays it to our pipes; runc then copies that terminal's size changes
 * (SIGWINCH) into the container's terminal.
 */
function runcExec(runc: Runc, id: string, argv: string[], opts: ExecOptions = {}): ExecProcess {
  // The command's pid, to kill the command itself: killing runc exec alone would leave it running in the container.
  // Beside runc's state in the lab's directory, not in /tmp: a nodelet killed mid-exec leaves it where `down` removes it.
  const pidDir = `${runc.root}-exec`;
  mkdirSync(pidDir, { recursive: true, mode: 0o700 });
  const pidFile = path.join(pidDir, `${id}-${crypto.randomBytes(6).toString('hex')}.pid`);
  const runcArgs = ['--root', runc.root, 'exec', '--pid-file', pidFile, ...(opts.tty ? ['--tty'] : []), id, ...argv];
  let child: ChildProcess;
  if (!opts.tty) {
    child = spawn(runc.binary, runcArgs, { stdio: [opts.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
  } else {
    // Raw: the container's own terminal does echo, line editing and CR/LF; `script`'s terminal only relays bytes.
    const size = opts.size ? ` cols ${Math.floor(opts.size.cols)} rows ${Math.floor(opts.size.rows)}` : '';
    const inner = `stty raw -echo${size} 2>/dev/null; exec ${[runc.binary, ...runcArgs].map(shellQuote).join(' ')}`;
    child = spawn('script', ['--quiet', '--flush', '--return', '--echo', 'never', '--command', inner, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] });
  }
  const exited = new Promise<{ exitCode: number }>((resolve) => {
    child.once('error', () => resolve({ exitCode: 127 }));
    child.once('exit', (code, signal) => resolve({ exitCode: exitOf(code, signal).exitCode }));
  }).finally(() => fs.rm(pidFile, { force: true }));
  // With a terminal and no stdin, `script`'s input stays open and unused (end-of-file would end the session).
  return {
    stdin: opts.stdin ? (child.stdin as Writable) : null,
    stdout: child.stdout as Readable,
    stderr: opts.tty ? null : (child.stderr as Readable),
    exited,
    resize: (cols, rows) => {
      if (!opts.tty || child.pid === undefined) return;
      void terminalOfChild(child.pid).then((tty) => {
        // Setting the size on the terminal sends SIGWINCH to runc, which passes the size on.
        if (tty) execFile('stty', ['-F', tty, 'cols', String(Math.floor(cols)), 'rows', String(Math.floor(rows))], () => undefined);
      });
    },
    kill: () => {
      void fs
        .readFile(pidFile, 'utf8')
        .then((text) => {
          const pid = Number.parseInt(text.trim(), 10);
          if (Number.isInteger(pid) && pid > 0) process.kill(pid, 'SIGKILL');
        })
        .catch(() => undefined)
        .finally(() => child.kill('SIGKILL'));
    },
  };
}

/** The pseudo-terminal `script` made for its child (the child's stdin). */
async function terminalOfChild(scriptPid: number): Promise<string | undefined> {
  const children = await fs.readFile(`/proc/${scriptPid}/task/${scriptPid}/children`, 'utf8').catch(() => '');
  for (const pid of children.trim().split(/\s+/).filter(Boolean)) {
    const target = await fs.readlink(`/proc/${pid}/fd/0`).catch(() => '');
    if (target.startsWith('/dev/pts/')) return target;
  }
  return undefined;
}

export interface RuncState {
  id: string;
  pid: number;
  status: string;
  bundle: string;
}

/** Containers runc knows in `root` (none when the directory does not exist). */
export async function listContainers(runc: Runc): Promise<RuncState[]> {
  try {
    await fs.access(runc.root);
  } catch {
    return [];
  }
  // `runc list` reads the root's entries, then each one's state: a container another pod worker deletes
  // meanwhile fails the whole listing ("stat <root>/<id>: no such file or directory"). Many workers clean up
  // at once when a nodelet starts after its containers died (a reboot): list again.
  let out = '';
  for (let attempt = 1; ; attempt++) {
    try {
      out = await runcCommand(runc, ['list', '--format', 'json']);
      break;
    } catch (err) {
      if (attempt >= 10 || !/no such file or directory/.test((err as Error).message)) throw err;
      await sleep(50 * attempt);
    }
  }
  return ((JSON.parse(out || 'null') as RuncState[] | null) ?? []).map((s) => ({ id: s.id, pid: s.pid, status: s.status, bundle: s.bundle }));
}

/**
 * Kills and deletes containers an earlier nodelet left (it may have been
 * killed with SIGKILL while they ran): every container in `runc.root` whose
 * id passes `filter`. `down` calls it for the whole root. Returns the ids removed.
 */
export async function cleanupContainers(runc: Runc, filter: (id: string) => boolean = () => true): Promise<string[]> {
  const removed: string[] = [];
  for (const c of (await listContainers(runc)).filter((s) => filter(s.id))) {
    await runcCommand(runc, ['kill', c.id, 'KILL']).catch(() => undefined);
    for (let i = 0; i < 100; i++) {
      const state = await runcCommand(runc, ['state', c.id]).catch(() => '');
      if (!state || (JSON.parse(state) as RuncState).status === 'stopped') break;
      await sleep(20);
    }
    await runcCommand(runc, ['delete', '--force', c.id]).catch(() => undefined);
    await shimGone(c.bundle);
    removed.push(c.id);
  }
  return removed;
}

/** Waits a moment for the shim of a removed container to record the exit and go; kills it if it does not. */
async function shimGone(bundle: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (!(await liveShimPid(bundle))) return;
    await sleep(20);
  }
  const pid = await liveShimPid(bundle);
  if (pid) signalGroup(pid, 'SIGKILL');
}
