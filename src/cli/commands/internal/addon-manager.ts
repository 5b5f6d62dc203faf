import type { CommandModule } from 'yargs';
import { inPodClient } from '../../../addons/framework/agent-env.js';
import { AddonManager } from '../../../addons/framework/manager.js';
import { clusterProxyAddon } from '../../../addons/cluster-proxy/addon.js';
import { ENTRYPOINT_TYPE_OF } from '../../../addons/cluster-proxy/configuration.js';
import { PROXY_ENTRYPOINTS, type ProxyEntrypoint } from '../../../config/types.js';
import { managedServiceAccountAddon } from '../../../addons/managed-serviceaccount/addon.js';
import { clusterGatewayAddon } from '../../../addons/cluster-gateway/addon.js';
import { HELLOWORLD, helloworldAddon } from '../../../addons/helloworld/index.js';
import { InvalidInputError } from '../../../errors.js';
import { parseDuration } from '../../../tunnel/flags.js';
import { repeat, runUntilSignal, stamp } from './run-loop.js';

interface Args {
  addon: string;
  'proxy-entrypoint-host'?: string;
  'proxy-entrypoint'?: string;
  'resync-interval': string;
}

/** `ocm-lab internal addon-manager --addon NAME`: the hub manager of one of our addons (runs as a Deployment). */
export const addonManagerCommand: CommandModule<object, Args> = {
  command: 'addon-manager',
  describe: 'run the hub manager of an ocm-lab addon',
  builder: (y) =>
    y
      .option('addon', { type: 'string', demandOption: true, describe: 'cluster-proxy, managed-serviceaccount, cluster-gateway or helloworld' })
      .option('proxy-entrypoint-host', { type: 'string', describe: 'cluster-proxy: hub address the agents dial (the default Hostname entrypoint)' })
      .option('proxy-entrypoint', {
        type: 'string',
        choices: PROXY_ENTRYPOINTS,
        describe: 'cluster-proxy: the entrypoint type of the ManagedProxyConfiguration it creates (default hostname)',
      })
      .option('resync-interval', { type: 'string', default: '2s', describe: 'time between reconcile passes' }) as never,
  handler: async (a) => {
    let addon;
    if (a.addon === 'cluster-proxy') {
      if (!a['proxy-entrypoint-host'])
        throw new InvalidInputError('--proxy-entrypoint-host is required for cluster-proxy: the agents dial it', {
          hint: 'the hub address reachable from the managed clusters',
        });
      const type = a['proxy-entrypoint'] ? ENTRYPOINT_TYPE_OF[a['proxy-entrypoint'] as ProxyEntrypoint] : undefined;
      addon = clusterProxyAddon({ entrypointHost: a['proxy-entrypoint-host'], ...(type ? { entrypointType: type } : {}) });
    } else if (a.addon === 'managed-serviceaccount') {
      addon = managedServiceAccountAddon(stamp);
    } else if (a.addon === 'cluster-gateway') {
      addon = clusterGatewayAddon(stamp);
    } else if (a.addon === HELLOWORLD) {
      addon = helloworldAddon();
    } else {
      throw new InvalidInputError(`--addon ${JSON.stringify(a.addon)} is not one of cluster-proxy, managed-serviceaccount, cluster-gateway, helloworld`);
    }
    const interval = parseDuration('resync-interval', a['resync-interval']);
    const manager = new AddonManager(await inPodClient('addon-manager'), addon, stamp);
    stamp(`${addon.name} addon manager started`);
    await runUntilSignal((signal) => repeat(signal, interval, () => manager.reconcileAndLog()));
  },
};
