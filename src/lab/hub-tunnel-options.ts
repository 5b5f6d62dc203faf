import { hubPortForwarder } from '../addons/hub-client.js';
import type { HubTunnelOptions } from '../addons/cluster-proxy/hub-tunnel.js';
import type { LabConfig } from '../config/index.js';
import { hostReachesNodeAddresses } from '../runtime/registry.js';

/**
 * How this machine reaches lab `config`'s proxy-server, as the hub user of `kubeconfig` (default: the lab admin):
 * by the hub node's address where the runtime routes the host there (local), else through a port-forward
 * by the hub's API server, as clusteradm does (kind: on Docker Desktop the host has no route into the engine).
 */
export async function hubTunnelOptions(config: LabConfig, kubeconfig?: string): Promise<HubTunnelOptions> {
  return { portForward: hubPortForwarder(config, kubeconfig), forwardHostNetwork: !(await hostReachesNodeAddresses(config.name)) };
}
