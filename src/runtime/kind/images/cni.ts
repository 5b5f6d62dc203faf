/**
 * The CNI config a kind node of ours runs pods with (kind's own kindnet is
 * disabled: `networking.disableDefaultCNI: true`, and this file is mounted at
 * /etc/cni/net.d/ of the node). bridge puts every pod on a bridge in the
 * node's network namespace (the node is the gateway), host-local gives it an
 * address from the pod range; portmap serves hostPorts. (ptp fails here: its
 * pod-range route collides with the one the kernel adds for the address,
 * "file exists".) Pods get routes to the pod and service ranges (and
 * whatever else the runtime names), never a default route unless asked for, so
 * nothing they send follows the node's default route by accident.
 */
export interface CniOptions {
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
  // The pod range is on the bridge already.
  const routes = [...new Set([options.serviceSubnet ?? '10.96.0.0/16', ...(options.extraRoutes ?? [])])].filter((r) => r !== podSubnet);
  const conflist = {
    cniVersion: '0.4.0',
    name: options.name ?? 'ocm-lab',
    plugins: [
      {
        type: 'bridge',
        bridge: 'ocmlab0',
        isGateway: true,
        hairpinMode: true,
        ipMasq: options.ipMasq ?? true,
        ...(options.mtu ? { mtu: options.mtu } : {}),
        ipam: {
          type: 'host-local',
          ranges: [[{ subnet: podSubnet }]],
          routes: routes.map((dst) => ({ dst })),
        },
      },
      { type: 'portmap', capabilities: { portMappings: true } },
    ],
  };
  return `${JSON.stringify(conflist, null, 2)}\n`;
}
