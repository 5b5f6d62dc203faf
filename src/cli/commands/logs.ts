import fs from 'node:fs/promises';
import path from 'node:path';
import type { CommandModule } from 'yargs';
import { loadLabConfig } from '../../config/index.js';
import { InvalidInputError, NotFoundError } from '../../errors.js';
import { streamContainerLog } from '../../nodelet/cri-log.js';
import { podLogFile } from '../../nodelet/logs.js';
import { labDir } from '../../paths.js';
import type { GlobalOptions } from '../output.js';

type Args = GlobalOptions & { cluster: string; pod: string; container?: string; previous: boolean };

/** `ocm-lab logs <cluster> <namespace>/<pod>`: what a container run by the nodelet printed. */
export const logsCommand: CommandModule<GlobalOptions, Args> = {
  command: 'logs <cluster> <pod>',
  describe: 'print the logs of a container the nodelet runs (pod as <namespace>/<pod>)',
  builder: (y) =>
    y
      .positional('cluster', { type: 'string', demandOption: true, describe: 'cluster name, e.g. cluster1' })
      .positional('pod', { type: 'string', demandOption: true, describe: '<namespace>/<pod>' })
      .option('container', { type: 'string', describe: 'container name (needed when the pod has several; -c is the global --config)' })
      .option('previous', { alias: 'p', type: 'boolean', default: false, describe: 'the run before the last restart' }),
  handler: async (argv) => {
    const config = await loadLabConfig(argv.config);
    const cluster = config.clusters.find((c) => c.name === argv.cluster);
    if (!cluster) {
      throw new NotFoundError(`lab '${config.name}' has no cluster '${argv.cluster}'`, { hint: `its clusters: ${config.clusters.map((c) => c.name).join(', ')}` });
    }
    const m = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\/([a-z0-9]([-a-z0-9.]*[a-z0-9])?)$/.exec(argv.pod);
    if (!m) throw new InvalidInputError(`'${argv.pod}' is not <namespace>/<pod>`, { hint: 'e.g. ocm-lab logs cluster1 default/web-7d4b9c-x2x8q' });
    const clusterDir = path.join(labDir(config.name), 'clusters', cluster.name);
    await fs.access(clusterDir).catch(() => {
      throw new NotFoundError(`lab '${config.name}' is not up (${clusterDir} does not exist)`, { hint: "name the lab with --config, or run 'ocm-lab up'" });
    });
    const file = await podLogFile({
      clusterDir,
      cluster: cluster.name,
      namespace: m[1] as string,
      pod: m[3] as string,
      container: argv.container,
      previous: argv.previous,
    });
    // The nodelet writes the kubelet's CRI log format; print the lines as `kubectl logs` does.
    await streamContainerLog(file, { follow: false, timestamps: false }, process.stdout);
  },
};
