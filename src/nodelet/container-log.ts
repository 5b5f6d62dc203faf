import fsp from 'node:fs/promises';
import path from 'node:path';
import { CriLogWriter } from './cri-log.js';
import type { LogSink } from './oci/runc.js';

/** `<podDir>/<container>.log`: the current run's output. */
export function logFile(podDir: string, container: string): string {
  return path.join(podDir, `${container}.log`);
}

/** `<podDir>/<container>.previous.log`: the run before the last restart (`logs --previous`). */
export function previousLogFile(podDir: string, container: string): string {
  return path.join(podDir, `${container}.previous.log`);
}

/**
 * Where one run of a container writes: `<podDir>/<container>.log` in the
 * kubelet's CRI log format (mode 0600), after the previous run's file became
 * `<container>.previous.log`.
 */
export async function openContainerLog(podDir: string, container: string): Promise<LogSink> {
  const file = logFile(podDir, container);
  const size = await fsp.stat(file).then(
    (s) => s.size,
    () => 0,
  );
  if (size > 0) await fsp.rename(file, previousLogFile(podDir, container));
  return CriLogWriter.open(file);
}

/** The current run's log of a container an earlier nodelet started, for appending (no rotation: the run goes on). */
export function appendContainerLog(podDir: string, container: string): Promise<LogSink> {
  return CriLogWriter.open(logFile(podDir, container));
}
