import type { CommandModule } from 'yargs';
import { clientFromFlag, inPodClient } from '../../../addons/framework/agent-env.js';
import { MsaAgent } from '../../../addons/managed-serviceaccount/agent.js';
import { parseDuration } from '../../../tunnel/flags.js';
import { repeat, runUntilSignal, stamp } from './run-loop.js';

interface Args {
  'cluster-name': string;
  'hub-kubeconfig': string;
  'resync-interval': string;
  namespace?: string;
}

/** `ocm-lab internal managed-serviceaccount-agent`: the spoke agent of managed-serviceaccount. */
export const msaAgentCommand: CommandModule<object, Args> = {
  command: 'managed-serviceaccount-agent',
  describe: 'run the managed-serviceaccount agent of one managed cluster',
  builder: (y) =>
    y
      .option('cluster-name', { type: 'string', demandOption: true })
      .option('hub-kubeconfig', { type: 'string', demandOption: true, describe: 'the agent’s hub kubeconfig (from the registration agent)' })
      .option('resync-interval', { type: 'string', default: '2s' })
      .option('namespace', {
        type: 'string',
        describe: 'where the managed ServiceAccounts live (default: $POD_NAMESPACE, the agent’s own namespace)',
      }) as never,
  handler: async (a) => {
    const interval = parseDuration('resync-interval', a['resync-interval']);
    const hub = await clientFromFlag('hub-kubeconfig', a['hub-kubeconfig']);
    const spoke = await inPodClient('managed-serviceaccount-agent');
    const namespace = a.namespace || process.env.POD_NAMESPACE || undefined;
    const agent = new MsaAgent({ cluster: a['cluster-name'], hub, spoke, spokeCaPem: spoke.endpoint.caPem, namespace, log: stamp });
    stamp(`managed-serviceaccount agent for ${a['cluster-name']} started${namespace ? `, ServiceAccounts in ${namespace}` : ''}`);
    await runUntilSignal((signal) =>
      repeat(signal, interval, async () => {
        for (const line of await agent.reconcileOnce()) stamp(line);
      }),
    );
  },
};
