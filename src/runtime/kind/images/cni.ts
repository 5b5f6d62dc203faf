/**
 * The CNI config a kind node of ours runs pods with (kind's own kindnet is
 * disabled: `networking.disableDefaultCNI: true`, and this file is mounted at
 * /etc/cni/net.d/ of the node). Two shapes, one per node image:
 *
 * - `ptp` (kind's published kindest/node, and any node image not built here):
 *   a veth per pod with the node at its other end as the gateway, host-local
 *   for the address, portmap for hostPorts: only plugins kindest/node ships
 *   (KINDEST_NODE_CNI_PLUGINS). ptp installs its own route to the pod range
 *   (via the gateway), so the range must not be among the routes given here:
 *   the two collide ("file exists", docs/notes.md).
 * - `bridge` (the node image built here, which has Debian's full plugin set):
 *   every pod on a bridge in the node's network namespace (the node is the
 *   gateway). kindest/node has no `bridge` plugin.
 *
 * Either way pods get routes to the pod and service ranges (and whatever else
 * the runtime names), never a default route unless asked for, so nothing they
 * send follows the node's default route by accident; and what leaves the pod
 * range is masqueraded behind the node's address (other Docker networks do
 * not know the pod range).
 */

/**
 * What kind's published node image has in /opt/cni/bin: kind's images/base/Dockerfile builds exactly these
 * (docs/notes.md#what-kindestnode-holds-and-its-cni).
 */
export const KINDEST_NODE_CNI_PLUGINS = ['host-local', 'loopback', 'ptp', 'portmap'] as const;

/** How pods are attached to their node (see above). */
export type PodNetwork = 'ptp' | 'bridge';

export interface CniOptions {
  /** Default `bridge` (what the node image built here has run with since the start). */
  network?: PodNetwork;
  /** Default 10.96.0.0/16 (kind's default serviceSubnet). */
  serviceSubnet?: string;
  /** More destinations pods reach through the node (e.g. the hub's published address); `0.0.0.0/0` for a default route. */
  extraRoutes?: string[];
  /** Masquerade pod traffic leaving the pod range behind the node's address (default true: other Docker networks do not know the pod range). */
  ipMasq?: boolean;
  /** The network's name in the conflist (default `ocm-lab`). */
  name?: string;
  mtu?: number;
}

export function cniConflist(podSubnet: string, options: CniOptions = {}): string {
  if (!/^\d{1,3}(\.\d{1,3}){3}\/\d{1,2}$/.test(podSubnet)) throw new Error(`internal: pod subnet is not an IPv4 CIDR: ${podSubnet}`);
  // The pod range is on the bridge already (bridge), or routed by ptp itself (ptp).
  const routes = [...new Set([options.serviceSubnet ?? '10.96.0.0/16', ...(options.extraRoutes ?? [])])].filter((r) => r !== podSubnet);
  const ipam = { type: 'host-local', ranges: [[{ subnet: podSubnet }]], routes: routes.map((dst) => ({ dst })) };
  const mtu = options.mtu ? { mtu: options.mtu } : {};
  const ipMasq = options.ipMasq ?? true;
  const attach =
    (options.network ?? 'bridge') === 'ptp'
      ? { type: 'ptp', ipMasq, ...mtu, ipam }
      : { type: 'bridge', bridge: 'ocmlab0', isGateway: true, hairpinMode: true, ipMasq, ...mtu, ipam };
  const conflist = {
    cniVersion: '0.4.0',
    name: options.name ?? 'ocm-lab',
    plugins: [attach, { type: 'portmap', capabilities: { portMappings: true } }],
  };
  return `${JSON.stringify(conflist, null, 2)}\n`;
}

/**
 * Every plugin binary a conflist makes the runtime exec: each plugin's `type` and its IPAM's, and `loopback`,
 * which containerd runs for every pod's `lo` on its own.
 */
export function conflistPlugins(conflist: string): string[] {
  const parsed = JSON.parse(conflist) as { plugins?: { type?: unknown; ipam?: { type?: unknown } }[] };
  const types = (parsed.plugins ?? []).flatMap((p) => [p.type, p.ipam?.type]).filter((t): t is string => typeof t === 'string');
  return [...new Set(['loopback', ...types])].sort();
}
