import { SERVICE_CIDR } from '../plan.js';
import type { NetworkPlan, VpcPlan } from './plan.js';

/** A route inside a VPC namespace besides its connected subnet and default route. */
export interface VpcRoute {
  /** What `ip route replace` takes, e.g. ['unreachable', '10.96.0.0/16']. */
  spec: string[];
  /** The destination, as `ip -j route` prints it (a /32 without its prefix). */
  dst: string;
  type: 'unreachable' | 'unicast';
  why: string;
}

/**
 * No packet may leave the machine, and traffic nobody serves should fail at once
 * rather than wander: the lab range and the service range are unreachable from a
 * VPC except where it may really go. A spoke reaches the hub's subnet; the hub
 * reaches every spoke's subnet, because its replies to spokes go that way (the host's
 * FORWARD rules still drop the hub's new connections). A ClusterIP that no rule of the
 * pod's nat table rewrote dies here with "no route to host" instead of following the
 * default route. Pod /32 routes (added per pod) and the VPC's own connected subnet are
 * more specific than these, so they win.
 */
export function vpcRoutes(plan: NetworkPlan, vpc: VpcPlan): VpcRoute[] {
  const routes: VpcRoute[] = [
    { spec: ['unreachable', plan.cidr], dst: plan.cidr, type: 'unreachable', why: 'the lab range outside the VPCs this one may reach' },
    { spec: ['unreachable', SERVICE_CIDR], dst: SERVICE_CIDR, type: 'unreachable', why: 'ClusterIPs no rule of a pod rewrote' },
  ];
  const peers = vpc.hub ? plan.vpcs.filter((v) => v !== vpc) : plan.vpcs.filter((v) => v.hub && v !== vpc);
  for (const peer of peers) {
    routes.push({ spec: [peer.subnet, 'via', vpc.gateway, 'dev', vpc.nsIf], dst: peer.subnet, type: 'unicast', why: `${peer.name} through the host` });
  }
  return routes;
}

/**
 * Sysctls of a VPC namespace that let pods live behind it: it forwards between pod
 * veths and its link to the host, and answers the host's ARP requests for pod
 * addresses (proxy ARP, answered at once rather than after the default random delay).
 */
export function vpcSysctls(vpc: VpcPlan): Record<string, string> {
  return {
    'net.ipv4.ip_forward': '1',
    [`net.ipv4.conf.${vpc.nsIf}.proxy_arp`]: '1',
    [`net.ipv4.neigh.${vpc.nsIf}.proxy_delay`]: '0',
  };
}
