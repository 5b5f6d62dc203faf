import type { CommandModule } from 'yargs';

/**
 * Subcommands of `ocm-lab internal`: entry points the lab itself starts as
 * processes (tunnel server and agent, nodelet, addon managers and agents). Not
 * for people. Each is loaded on its own, so a process pays only for its modules.
 * A runtime's own (kind's vpc-gateway) come with its line in runtime/registry.ts,
 * which is loaded only for them (and for help).
 */
const LOADERS: Record<string, () => Promise<CommandModule<any, any>>> = {
  'proxy-server': () => import('./proxy-server.js').then((m) => m.proxyServerCommand),
  'proxy-agent': () => import('./proxy-agent.js').then((m) => m.proxyAgentCommand),
  'user-server': () => import('./user-server.js').then((m) => m.userServerCommand),
  'service-proxy': () => import('./service-proxy.js').then((m) => m.serviceProxyCommand),
  'port-forward-proxy': () => import('./port-forward-proxy.js').then((m) => m.portForwardProxyCommand),
  nodelet: () => import('./nodelet.js').then((m) => m.nodeletCommand),
  supervise: () => import('./supervise.js').then((m) => m.superviseCommand),
  'test-workload': () => import('./test-workload.js').then((m) => m.testWorkloadCommand),
  'addon-manager': () => import('./addon-manager.js').then((m) => m.addonManagerCommand),
  'managed-serviceaccount-agent': () => import('./msa-agent.js').then((m) => m.msaAgentCommand),
  'helloworld-agent': () => import('./helloworld-agent.js').then((m) => m.helloworldAgentCommand),
  'cluster-gateway': () => import('./cluster-gateway.js').then((m) => m.clusterGatewayCommand),
  'run-addon': () => import('./run-addon.js').then((m) => m.runAddonCommand),
};

/** The internal command named `name`, or all of them (for help and unknown names). */
export async function loadInternalCommands(name?: string): Promise<CommandModule<any, any>[]> {
  const own = name ? LOADERS[name] : undefined;
  if (own) return [await own()];
  const loaders = { ...LOADERS, ...(await import('../../../runtime/registry.js').then((m) => m.RUNTIME_INTERNAL_COMMANDS)) };
  const one = name ? loaders[name] : undefined;
  return one ? [await one()] : Promise.all(Object.values(loaders).map((load) => load()));
}
