import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';

/**
 * Whether a process with this pid is running: it exists (signal 0 checks
 * without sending anything) and has not exited. An exited process whose parent
 * has not yet collected its status (a zombie, state Z) has stopped: an orphan's
 * status goes to PID 1, which in some CI sandboxes collects only every few seconds.
 */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** A process's command line, arguments joined by spaces. */
export async function cmdline(pid: number): Promise<string> {
  return (await fs.readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0').join(' ');
}

/** When a process started, in clock ticks after boot (/proc/<pid>/stat field 22): exact, so two reads of one process agree. */
export async function processStartTicks(pid: number): Promise<number> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
}

/** When a process started, in ms since the epoch: its start (/proc/<pid>/stat field 22, clock ticks after boot) against /proc/uptime, to 10 ms. */
export async function processStartMs(pid: number): Promise<number> {
  const startedTicks = await processStartTicks(pid);
  const now = Date.now();
  const uptimeSeconds = Number((await fs.readFile('/proc/uptime', 'utf8')).split(' ')[0]);
  return now - (uptimeSeconds * 1000 - startedTicks * 10);
}
