import { spawn, type ChildProcess } from 'node:child_process';
import { close as closeFd, constants as fsConstants, open as openFd } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { run } from '../../util/exec.js';

/**
 * A container's shim: a small `/bin/sh` process, in a session of its own,
 * that runs `runc run` in the foreground and outlives the nodelet (as
 * containerd's shim outlives containerd). It opens the two FIFOs the nodelet
 * made in the bundle, each for reading and writing, before runc starts; runc
 * hands them to the container as stdout and stderr. Because the shim (and the container's
 * own descriptor) hold a read end, a write never fails when no nodelet reads:
 * output waits in the pipe (64 KiB) until a nodelet opens the FIFO again. When
 * runc exits, the shim writes its exit status to `exit-status` and exits; the
 * last writer is then gone and the nodelet's reader sees end-of-file. So a
 * restarted nodelet adopts a running container instead of restarting it.
 *
 * The nodelet makes the FIFOs and opens its read ends before the shim starts:
 * a pipe keeps its data only while some end is open (a container that ends at
 * once would otherwise take its output with it), and Linux reports end-of-file
 * (EPOLLHUP) to a non-blocking reader only for writers that came after it
 * opened, or that were there when it did.
 */
const SHIM_SCRIPT = [
  'b=$1; shift',
  'exec 3<>"$b/stdout.fifo" 4<>"$b/stderr.fifo" </dev/null || exit 125',
  'echo $$ > "$b/shim.pid"',
  '"$@" >&3 2>&4',
  'code=$?',
  'echo "$code" > "$b/exit-status.tmp" && mv -f "$b/exit-status.tmp" "$b/exit-status"',
].join('\n');

/** The files of a container's shim in its bundle directory. */
function shimFiles(bundle: string): { stdout: string; stderr: string; exitStatus: string; shimPid: string } {
  return {
    stdout: path.join(bundle, 'stdout.fifo'),
    stderr: path.join(bundle, 'stderr.fifo'),
    exitStatus: path.join(bundle, 'exit-status'),
    shimPid: path.join(bundle, 'shim.pid'),
  };
}

/** Starts the shim running `argv` (runc run …) for the container of `bundle`. The child is the nodelet's until the nodelet goes. */
export function startShim(bundle: string, argv: string[]): ChildProcess {
  const child = spawn('/bin/sh', ['-c', SHIM_SCRIPT, 'ocm-lab-shim', bundle, ...argv], { detached: true, stdio: 'ignore' });
  child.unref();
  return child;
}

/** The read ends of a container's output FIFOs, opened before anything writes to them. */
export interface ShimOutputFds {
  stdout: number;
  stderr: number;
}

const openFdAsync = promisify(openFd);
const closeFdAsync = promisify(closeFd);

async function openReadEnds(bundle: string): Promise<ShimOutputFds> {
  const files = shimFiles(bundle);
  const flags = fsConstants.O_RDONLY | fsConstants.O_NONBLOCK;
  const stdout = await openFdAsync(files.stdout, flags);
  try {
    return { stdout, stderr: await openFdAsync(files.stderr, flags) };
  } catch (err) {
    await closeFdAsync(stdout).catch(() => undefined);
    throw err;
  }
}

/** Makes the FIFOs of a new run of the container (the last run's exit status goes) and opens their read ends. */
export async function makeShimOutput(bundle: string): Promise<ShimOutputFds> {
  const files = shimFiles(bundle);
  await Promise.all([files.stdout, files.stderr, files.exitStatus, files.shimPid].map((f) => fs.rm(f, { force: true })));
  await run('mkfifo', ['-m', '600', files.stdout, files.stderr]);
  return openReadEnds(bundle);
}

/**
 * Opens the read ends of a running shim's FIFOs; undefined when the shim is gone (it might have gone
 * before the open, and then no end-of-file would ever come).
 */
export async function reopenShimOutput(bundle: string): Promise<ShimOutputFds | undefined> {
  const fds = await openReadEnds(bundle).catch(() => undefined);
  if (fds && !(await liveShimPid(bundle))) {
    await closeShimOutput(fds);
    return undefined;
  }
  return fds;
}

export async function closeShimOutput(fds: ShimOutputFds): Promise<void> {
  await Promise.all([closeFdAsync(fds.stdout), closeFdAsync(fds.stderr)].map((p) => p.catch(() => undefined)));
}

/** Streams reading the FIFOs; they own the descriptors from here on. */
export function readShimOutput(fds: ShimOutputFds): { stdout: Readable; stderr: Readable } {
  // A FIFO is a pipe to libuv: read without blocking a thread of the pool (one per container would exhaust it).
  const socket = (fd: number) => new net.Socket({ fd, readable: true, writable: false });
  return { stdout: socket(fds.stdout), stderr: socket(fds.stderr) };
}

/** The exit status the shim recorded, and when; undefined when it wrote none (the shim itself was killed). */
export async function readShimExit(bundle: string): Promise<{ exitCode: number; finishedAt: Date } | undefined> {
  const file = shimFiles(bundle).exitStatus;
  try {
    const [text, stat] = await Promise.all([fs.readFile(file, 'utf8'), fs.stat(file)]);
    const exitCode = Number.parseInt(text.trim(), 10);
    return Number.isInteger(exitCode) ? { exitCode, finishedAt: stat.mtime } : undefined;
  } catch {
    return undefined;
  }
}

/** The shim's pid, when its pid file names a live shim of this bundle (not a later process that got the same pid). */
export async function liveShimPid(bundle: string): Promise<number | undefined> {
  const pid = Number.parseInt((await fs.readFile(shimFiles(bundle).shimPid, 'utf8').catch(() => '')).trim(), 10);
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  const argv = (await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0');
  return argv.includes('ocm-lab-shim') && argv.includes(bundle) ? pid : undefined;
}
