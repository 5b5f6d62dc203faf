/**
 * Sends `signal` to process group `pgid`: a child spawned with `detached: true` leads a group of its own (its pid
 * is the group's id), so this reaches it and whatever it started. Signal 0 only asks whether the group is there.
 * True when the signal went to a process of the group; false when none is left (ESRCH) or none of those left may be
 * signalled (EPERM, e.g. only a setuid program a block started remains). Any other error is a bug and is thrown.
 */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ESRCH' || code === 'EPERM') return false;
    throw err;
  }
}
