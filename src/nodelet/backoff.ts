export interface BackoffPolicy {
  /** The wait before restarting a container that crashes again (the first restart is at once). */
  initialMs: number;
  maxMs: number;
  /** A container that ran at least this long before exiting starts the schedule again. */
  resetAfterMs: number;
}

/**
 * The kubelet's schedule (v1.34–v1.37 with their default feature gates; docs/notes.md#the-kubelets-crash-loop-back-off): 10 s, doubling,
 * capped at 5 min, reset after 10 min of good running.
 */
export const DEFAULT_BACKOFF: BackoffPolicy = { initialMs: 10_000, maxMs: 300_000, resetAfterMs: 600_000 };

/**
 * Delay before restarting a container after crash number `crashes` (1 = its first crash, or the first
 * after a run long enough to reset the count). As the kubelet: the first restart at once, since a
 * container is backed off only while the back-off its previous restart set still runs; then 10 s,
 * 20 s, 40 s … up to the cap.
 */
export function restartDelayMs(crashes: number, policy: BackoffPolicy = DEFAULT_BACKOFF): number {
  if (crashes <= 1) return 0;
  const exp = Math.min(crashes - 2, 30);
  return Math.min(policy.initialMs * 2 ** exp, policy.maxMs);
}

/** How many crashes count towards the next delay, given how long the last run lasted. */
export function nextCrashCount(previousCrashes: number, ranMs: number, policy: BackoffPolicy = DEFAULT_BACKOFF): number {
  return ranMs >= policy.resetAfterMs ? 1 : previousCrashes + 1;
}

export type RestartPolicy = 'Always' | 'OnFailure' | 'Never';

export function shouldRestart(policy: RestartPolicy | undefined, exitCode: number): boolean {
  switch (policy ?? 'Always') {
    case 'Always':
      return true;
    case 'OnFailure':
      return exitCode !== 0;
    case 'Never':
      return false;
  }
}
