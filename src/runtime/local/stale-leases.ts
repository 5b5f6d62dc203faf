import path from 'node:path';
import { listContainers, runcAt } from '../../nodelet/oci/index.js';

/** True when no container of the node runs: every pod process of it is gone (a reboot), not only its nodelet. */
export async function nodeHasNoLiveContainers(nodeletWorkDir: string): Promise<boolean> {
  const states = await listContainers(runcAt(path.join(nodeletWorkDir, 'runc')));
  return !states.some((s) => s.status === 'running' || s.status === 'paused');
}
