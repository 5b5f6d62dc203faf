import fs from 'node:fs/promises';

/** Whether a process with this pid exists (signal 0 checks without sending anything). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
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
