import path from 'node:path';
import { docker } from '../../images/docker.js';

/**
 * Metric of our blackhole routes: higher than any route the node or its CNI
 * adds (metric 0), so a served range (the pod bridge, ptp's route to each pod) still wins, and
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

/** The node's own copy of the guards, and the systemd unit that applies them at every boot of the node, before containerd and the kubelet. */
const EGRESS_GUARDS_SCRIPT = '/etc/ocm-lab/egress-guards.sh';
const EGRESS_GUARDS_UNIT = 'ocm-lab-egress-guards.service';
const EGRESS_GUARDS_UNIT_FILE = `/etc/systemd/system/${EGRESS_GUARDS_UNIT}`;

/** The shell script that sets the guards (idempotent: a route replaced, a rule added only when missing). */
export function egressGuardsScript(guards: { blackholes: readonly string[]; rejected: readonly string[] }): string {
  const lines = [
    ...guards.blackholes.map((cidr) => blackholeArgs(cidr).join(' ')),
    ...guards.rejected.flatMap((cidr) =>
      (['OUTPUT', 'FORWARD'] as const).map((chain) => {
        const rule = rejectRuleArgs(chain, cidr).join(' ');
        return `iptables -C ${rule} 2>/dev/null || iptables -A ${rule}`;
      }),
    ),
  ];
  return `#!/bin/sh\n# ocm-lab: no packet for an unserved lab address leaves the machine (src/runtime/kind/node-routes.ts).\nset -e\n${lines.join('\n')}\n`;
}

function egressGuardsUnit(): string {
  return [
    '[Unit]',
    'Description=ocm-lab: route unserved lab addresses to nowhere before any pod runs',
    'Before=containerd.service kubelet.service',
    '',
    '[Service]',
    'Type=oneshot',
    `ExecStart=/bin/sh ${EGRESS_GUARDS_SCRIPT}`,
    'RemainAfterExit=yes',
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
}

/**
 * Keeps a packet for a lab address nothing serves from following the node's
 * default route off the machine. Pod addresses of no pod: a blackhole route.
 * ClusterIPs: a REJECT after kube-proxy's DNAT, not a route — a local process
 * (the API server calling a webhook Service) gets EINVAL from connect() to a
 * blackholed address before netfilter could rewrite it. Routes and rules live
 * in the node's network namespace, which a restart of the node (a Docker
 * engine restart, a reboot) makes anew: a unit of the node sets them again at
 * its boot, before containerd and the kubelet start, so no pod runs unguarded
 * until the next `up`.
 */
export async function ensureNodeEgressGuards(node: string, guards: { blackholes: readonly string[]; rejected: readonly string[] }): Promise<void> {
  if (!guards.blackholes.length && !guards.rejected.length) return;
  const install = [
    `mkdir -p ${path.posix.dirname(EGRESS_GUARDS_SCRIPT)}`,
    `printf '%s' "$1" > ${EGRESS_GUARDS_SCRIPT}.tmp && mv ${EGRESS_GUARDS_SCRIPT}.tmp ${EGRESS_GUARDS_SCRIPT}`,
    `printf '%s' "$2" > ${EGRESS_GUARDS_UNIT_FILE}.tmp && mv ${EGRESS_GUARDS_UNIT_FILE}.tmp ${EGRESS_GUARDS_UNIT_FILE}`,
    `mkdir -p /etc/systemd/system/multi-user.target.wants`,
    `ln -sf ../${EGRESS_GUARDS_UNIT} /etc/systemd/system/multi-user.target.wants/${EGRESS_GUARDS_UNIT}`,
    `sh ${EGRESS_GUARDS_SCRIPT}`,
  ].join(' && ');
  await docker(['exec', node, 'sh', '-c', install, 'sh', egressGuardsScript(guards), egressGuardsUnit()]);
}
