import { docker } from '../../images/docker.js';

/**
 * Metric of our blackhole routes: higher than any route the node or its CNI
 * adds (metric 0), so a served range (the node's pod bridge) still wins, and
 * `ip route replace` with this metric is idempotent.
 */
const BLACKHOLE_METRIC = 4242;
const REJECT_COMMENT = 'ocm-lab: unserved lab address';

export function blackholeArgs(cidr: string): string[] {
  return ['ip', 'route', 'replace', 'blackhole', cidr, 'metric', String(BLACKHOLE_METRIC)];
}

/** A filter rule that refuses what is still addressed to `cidr` after kube-proxy's DNAT (nat runs before filter). */
function rejectRuleArgs(chain: 'OUTPUT' | 'FORWARD', cidr: string): string[] {
  return [chain, '-d', cidr, '-m', 'comment', '--comment', `'${REJECT_COMMENT}'`, '-j', 'REJECT'];
}

/**
 * Keeps a packet for a lab address nothing serves from following the node's
 * default route off the machine. Pod addresses of no pod: a blackhole route.
 * ClusterIPs: a REJECT after kube-proxy's DNAT, not a route — a local process
 * (the API server calling a webhook Service) gets EINVAL from connect() to a
 * blackholed address before netfilter could rewrite it.
 */
export async function ensureNodeEgressGuards(node: string, guards: { blackholes: readonly string[]; rejected: readonly string[] }): Promise<void> {
  const script = [
    ...guards.blackholes.map((cidr) => blackholeArgs(cidr).join(' ')),
    ...guards.rejected.flatMap((cidr) =>
      (['OUTPUT', 'FORWARD'] as const).map((chain) => {
        const rule = rejectRuleArgs(chain, cidr).join(' ');
        return `{ iptables -C ${rule} 2>/dev/null || iptables -A ${rule}; }`;
      }),
    ),
  ];
  if (script.length) await docker(['exec', node, 'sh', '-c', script.join(' && ')]);
}
