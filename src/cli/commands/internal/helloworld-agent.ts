import type { CommandModule } from 'yargs';
import { clientFromFlag, inPodClient } from '../../../addons/framework/agent-env.js';
import { addonActiveOnHub, ConfigMapCopier, hubConfigMapsPath, type ConfigMap } from '../../../addons/helloworld/index.js';
import { Informer, RESYNCING } from '../../../kube/informer.js';
import { runUntilSignal, stamp } from './run-loop.js';

interface Args {
  'cluster-name': string;
  'hub-kubeconfig': string;
  'addon-namespace': string;
}

/**
 * `ocm-lab internal helloworld-agent`: the helloworld agent of one managed cluster. A list+watch
 * of the cluster's namespace on the hub feeds the copier, so a change reaches the cluster as soon
 * as the hub's watch delivers it.
 */
export const helloworldAgentCommand: CommandModule<object, Args> = {
  command: 'helloworld-agent',
  describe: 'copy the ConfigMaps of the cluster’s namespace on the hub to this cluster',
  builder: (y) =>
    y
      .option('cluster-name', { type: 'string', demandOption: true })
      .option('hub-kubeconfig', { type: 'string', demandOption: true, describe: 'the agent’s hub kubeconfig (from the registration agent)' })
      .option('addon-namespace', { type: 'string', demandOption: true, describe: 'where the copies go on this cluster' }) as never,
  handler: async (a) => {
    const cluster = a['cluster-name'];
    const hub = await clientFromFlag('hub-kubeconfig', a['hub-kubeconfig']);
    const spoke = await inPodClient('helloworld-agent');
    const copier = new ConfigMapCopier({ spoke, namespace: a['addon-namespace'], addonActive: () => addonActiveOnHub(hub, cluster), log: stamp });
    const configMaps = new Informer<ConfigMap>(hub, hubConfigMapsPath(cluster), stamp, {}, RESYNCING);
    configMaps.onEvent((e) => {
      if (e.type !== 'DELETED') copier.offer(e.object);
    });
    stamp(`helloworld agent for ${cluster} started: copying ConfigMaps of namespace ${cluster} on the hub to ${a['addon-namespace']}`);
    await runUntilSignal(async (signal) => {
      configMaps.start();
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      copier.stop();
      await configMaps.stop();
    });
  },
};
