import type { CommandModule } from 'yargs';
import { loadLabConfig } from '../../config/load.js';
import { InvalidInputError, NotFoundError } from '../../errors.js';
import { ApiError, isStatus, KubeClient } from '../../kube/client.js';
import { clusterKubeconfigFile } from '../../paths.js';
import type { GlobalOptions } from '../output.js';

type Args = GlobalOptions & { cluster: string; pod: string; container?: string; previous: boolean };

/** `ocm-lab logs <cluster> <namespace>/<pod>`: what a container printed, from the cluster's API (as `kubectl logs`), on any runtime. */
export const logsCommand: CommandModule<GlobalOptions, Args> = {
  command: 'logs <cluster> <pod>',
  describe: 'print the logs of a container of a lab cluster (pod as <namespace>/<pod>)',
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
      throw new NotFoundError(`lab '${config.name}' has no cluster '${argv.cluster}'`, {
        hint: `its clusters: ${config.clusters.map((c) => c.name).join(', ')}`,
      });
    }
    const m = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\/([a-z0-9]([-a-z0-9.]*[a-z0-9])?)$/.exec(argv.pod);
    if (!m) throw new InvalidInputError(`'${argv.pod}' is not <namespace>/<pod>`, { hint: 'e.g. ocm-lab logs cluster1 default/web-7d4b9c-x2x8q' });
    const [namespace, pod] = [m[1] as string, m[3] as string];
    const kubeconfig = clusterKubeconfigFile(config.name, cluster.name);
    const client = await KubeClient.fromKubeconfig(kubeconfig).catch((err: unknown) => {
      throw new NotFoundError(`lab '${config.name}' is not up (${kubeconfig}: ${(err as Error).message})`, {
        hint: "name the lab with --config, or run 'ocm-lab up'",
      });
    });
    try {
      const text = await client.getText(`/api/v1/namespaces/${namespace}/pods/${pod}/log`, { container: argv.container, previous: argv.previous || undefined });
      process.stdout.write(text);
    } catch (err) {
      if (isStatus(err, 404))
        throw new NotFoundError(`pod ${namespace}/${pod} does not exist on cluster ${cluster.name}`, {
          hint: `kubectl --context ${cluster.name} -n ${namespace} get pods`,
        });
      if (isStatus(err, 400))
        throw new InvalidInputError(`cluster ${cluster.name} refused the logs of ${namespace}/${pod}: ${(err as ApiError).message}`, {
          hint: 'name the container with --container',
        });
      throw err;
    } finally {
      client.close();
    }
  },
};
