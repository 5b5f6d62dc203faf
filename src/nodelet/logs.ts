import fs from 'node:fs/promises';
import path from 'node:path';
import { InvalidInputError, NotFoundError } from '../errors.js';
import { logFile, previousLogFile } from './container-log.js';

export interface PodLogRequest {
  /** `<lab>/clusters/<cluster>` */
  clusterDir: string;
  cluster: string;
  namespace: string;
  pod: string;
  container?: string;
  previous?: boolean;
}

/**
 * The log file of a container the nodelet ran:
 * `<cluster>/nodelet/pods/<namespace>_<pod>_<uid>/<container>.log`
 * (`<container>.previous.log` for the run before the last restart).
 */
export async function podLogFile(req: PodLogRequest): Promise<string> {
  const podsDir = path.join(req.clusterDir, 'nodelet', 'pods');
  const prefix = `${req.namespace}_${req.pod}_`;
  const candidates = (await fs.readdir(podsDir).catch(() => [] as string[])).filter((d) => d.startsWith(prefix) && !d.slice(prefix.length).includes('_'));
  if (candidates.length === 0) {
    throw new NotFoundError(`pod ${req.namespace}/${req.pod} has no logs on cluster ${req.cluster}: the nodelet is not running it`, {
      hint: `only pods of the ocm-lab image bound to ${req.cluster}-nodelet have logs here; see 'kubectl --context ${req.cluster} -n ${req.namespace} get pods'`,
    });
  }
  // A pod recreated under the same name (StatefulSet): the newest directory is the current one.
  const stamped = await Promise.all(candidates.map(async (d) => ({ d, t: (await fs.stat(path.join(podsDir, d))).mtimeMs })));
  const podDir = path.join(podsDir, stamped.sort((a, b) => b.t - a.t)[0]!.d);
  const containers = (await fs.readdir(podDir)).filter((f) => f.endsWith('.log') && !f.endsWith('.previous.log')).map((f) => f.slice(0, -'.log'.length)).sort();
  let container = req.container;
  if (!container) {
    if (containers.length !== 1) {
      throw new InvalidInputError(`pod ${req.namespace}/${req.pod} has ${containers.length ? `containers ${containers.join(', ')}` : 'no container logs yet'}; name one with --container`);
    }
    container = containers[0] as string;
  } else if (!containers.includes(container)) {
    throw new NotFoundError(`pod ${req.namespace}/${req.pod} has no container '${container}' with logs${containers.length ? ` (it has: ${containers.join(', ')})` : ''}`);
  }
  const file = req.previous ? previousLogFile(podDir, container) : logFile(podDir, container);
  try {
    await fs.access(file);
  } catch {
    throw new NotFoundError(`container ${container} of pod ${req.namespace}/${req.pod} has no ${req.previous ? 'previous run (it has not restarted)' : 'log yet'}`);
  }
  return file;
}
