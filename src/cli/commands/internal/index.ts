import type { CommandModule } from 'yargs';

/**
 * Subcommands of `ocm-lab internal`: entry points the lab itself starts as
 * processes (tunnel server and agent, nodelet, addon managers and agents). Not
 * for people. Each is loaded on its own, so a process pays only for its modules.
 */
const LOADERS: Record<string, () => Promise<CommandModule<any, any>>> = {
  'proxy-server': async () => (await import('./proxy-server.js')).proxyServerCommand,
  'proxy-agent': async () => (await import('./proxy-agent.js')).proxyAgentCommand,
  'user-server': async () => (await import('./user-server.js')).userServerCommand,
  'service-proxy': async () => (await import('./service-proxy.js')).serviceProxyCommand,
  'port-forward-proxy': async () => (await import('./port-forward-proxy.js')).portForwardProxyCommand,
  nodelet: async () => (await import('./nodelet.js')).nodeletCommand,
  supervise: async () => (await import('./supervise.js')).superviseCommand,
  'test-workload': async () => (await import('./test-workload.js')).testWorkloadCommand,
  'addon-manager': async () => (await import('./addon-manager.js')).addonManagerCommand,
  'managed-serviceaccount-agent': async () => (await import('./msa-agent.js')).msaAgentCommand,
  'helloworld-agent': async () => (await import('./helloworld-agent.js')).helloworldAgentCommand,
  'cluster-gateway': async () => (await import('./cluster-gateway.js')).clusterGatewayCommand,
  'vpc-gateway': async () => (await import('./vpc-gateway.js')).vpcGatewayCommand,
  'run-addon': async () => (await import('./run-addon.js')).runAddonCommand,
};

/** The internal command named `name`, or all of them (for help and unknown names). */
export async function loadInternalCommands(name?: string): Promise<CommandModule<any, any>[]> {
  const one = name ? LOADERS[name] : undefined;
  return one ? [await one()] : Promise.all(Object.values(LOADERS).map((load) => load()));
}
