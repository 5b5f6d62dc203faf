import path from 'node:path';
import type { CommandModule } from 'yargs';
import { InvalidInputError } from '../../../errors.js';
import { DEFAULT_BACKOFF } from '../../../nodelet/backoff.js';
import { runNodelet } from '../../../nodelet/nodelet.js';
import { parseDuration } from '../../../tunnel/flags.js';

interface Args {
  cluster: string;
  kubeconfig: string;
  'scheduler-kubeconfig': string;
  'node-name'?: string;
  'work-dir': string;
  address: string;
  'kubernetes-version': string;
  'restart-backoff': string;
  'restart-backoff-max': string;
  resync: string;
}

/** `ocm-lab internal nodelet`: the lab's node agent, one per cluster, started by `up` inside the cluster's VPC. */
export const nodeletCommand: CommandModule<object, Args> = {
  command: 'nodelet',
  describe: 'run the node agent that runs pods of the ocm-lab image as processes',
  builder: (y) =>
    y
      .option('cluster', { type: 'string', demandOption: true, describe: 'cluster name (kubeconfig entry of the pods)' })
      .option('kubeconfig', { type: 'string', demandOption: true, describe: 'node credentials (CN=system:node:<node>, O=system:nodes)' })
      .option('scheduler-kubeconfig', { type: 'string', demandOption: true, describe: 'credentials allowed to bind pods (CN=system:kube-scheduler)' })
      .option('node-name', { type: 'string', describe: 'Node name (default <cluster>-nodelet)' })
      .option('work-dir', { type: 'string', demandOption: true, describe: 'pod directories (logs, volumes, kubeconfigs) go under <work-dir>/pods' })
      .option('address', { type: 'string', demandOption: true, describe: "the cluster's address: node InternalIP and every pod's podIP" })
      .option('kubernetes-version', { type: 'string', default: 'v0.0.0', describe: 'reported as the kubelet version' })
      .option('restart-backoff', { type: 'string', default: `${DEFAULT_BACKOFF.initialMs / 1000}s`, describe: 'first delay before restarting a crashed container' })
      .option('restart-backoff-max', { type: 'string', default: `${DEFAULT_BACKOFF.maxMs / 1000}s`, describe: 'longest restart delay' })
      .option('resync', { type: 'string', default: '60s', describe: 'how often volumes and kubeconfigs are written again' }) as never,
  handler: async (a) => {
    const node = a['node-name'] ?? `${a.cluster}-nodelet`;
    if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(node)) throw new InvalidInputError(`--node-name '${node}' is not a valid Node name (lower-case DNS subdomain)`);
    const initialMs = parseDuration('restart-backoff', a['restart-backoff']);
    const maxMs = parseDuration('restart-backoff-max', a['restart-backoff-max']);
    if (maxMs < initialMs) throw new InvalidInputError(`--restart-backoff-max (${a['restart-backoff-max']}) is shorter than --restart-backoff (${a['restart-backoff']})`);
    const nodelet = await runNodelet({
      clusterName: a.cluster,
      nodeName: node,
      kubeconfig: path.resolve(a.kubeconfig),
      schedulerKubeconfig: path.resolve(a['scheduler-kubeconfig']),
      workDir: path.resolve(a['work-dir']),
      address: a.address,
      version: a['kubernetes-version'],
      cliMain: path.resolve(process.argv[1] ?? ''),
      backoff: { initialMs, maxMs, resetAfterMs: 2 * maxMs },
      resyncMs: parseDuration('resync', a.resync),
    });
    await new Promise<void>((resolve) => {
      const stop = (): void => {
        process.stderr.write(`${new Date().toISOString()} stopping: containers get SIGTERM\n`);
        nodelet.stop().then(resolve, (err: Error) => {
          process.stderr.write(`stop: ${err.message}\n`);
          resolve();
        });
      };
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
    });
    process.exit(0);
  },
};
