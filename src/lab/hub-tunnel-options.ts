import { hubPortForwarder } from '../addons/hub-client.js';
import type { HubTunnelOptions } from '../addons/cluster-proxy/hub-tunnel.js';
import type { LabConfig } from '../config/index.js';
import { recordedRuntimeFacts } from '../config/lab-state.js';

/**
 * Whether this machine dials lab `labName`'s node addresses: what `up` recorded in its state. Only a lab
 * brought up before that was recorded loads the runtime registry (and its flag tables) to ask its line:
 * `proxy kubectl` runs per command, and that import was most of what it loaded beyond the tree before.
 */
export async function labHostReachesNodes(labName: string): Promise<boolean> {
  const recorded = await recordedRuntimeFacts(labName);
  if (recorded === null) return false;
  if (recorded.hostReachesNodes !== undefined) return recorded.hostReachesNodes;
  const { hostReachesNodeAddresses } = await import('../runtime/registry.js');
  return hostReachesNodeAddresses(labName);
}

/**
 * How this machine reaches lab `config`'s proxy-server, as the hub user of `kubeconfig` (default: the lab admin):
 * by the hub node's address where the runtime routes the host there (local), else through a port-forward
 * by the hub's API server, as clusteradm does (kind: on Docker Desktop the host has no route into the engine).
 */
export async function hubTunnelOptions(config: LabConfig, kubeconfig?: string): Promise<HubTunnelOptions> {
  return { portForward: hubPortForwarder(config, kubeconfig), forwardHostNetwork: !(await labHostReachesNodes(config.name)) };
}
