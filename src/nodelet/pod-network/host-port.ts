import { run } from '../../util/exec.js';

export type PortProtocol = 'TCP' | 'UDP' | 'SCTP';

export interface Listener {
  address: string;
  port: number;
}

const WILDCARDS = new Set(['0.0.0.0', '*', '::', '[::]', '']);

/** Local addresses of `ss -H -l -n` output ("LISTEN 0 4096 10.213.32.10:6443 0.0.0.0:*", IPv6 in brackets, `%if` suffixes). */
export function parseListeners(ssOutput: string): Listener[] {
  const found: Listener[] = [];
  for (const line of ssOutput.split('\n')) {
    const local = line.trim().split(/\s+/)[3];
    if (!local) continue;
    const colon = local.lastIndexOf(':');
    const port = Number(local.slice(colon + 1));
    if (colon < 0 || !Number.isInteger(port)) continue;
    const address = local
      .slice(0, colon)
      .replace(/%.*$/, '')
      .replace(/^\[(.*)\]$/, '$1');
    found.push({ address, port });
  }
  return found;
}

/** The listener that keeps `ip:port` from being bound (a wildcard on either side counts), or null. */
export function conflictingListener(listeners: Listener[], ip: string, port: number): Listener | null {
  return listeners.find((l) => l.port === port && (WILDCARDS.has(l.address) || WILDCARDS.has(ip) || l.address === ip)) ?? null;
}

/**
 * Whether a hostNetwork pod's port is free on the node (the VPC namespace, which the
 * node's processes share): null when it is, else a message for the pod's Event. SCTP
 * is not checked.
 */
export async function hostPortCheck(vpcNetns: string, ip: string, port: number, protocol: PortProtocol = 'TCP'): Promise<string | null> {
  if (protocol === 'SCTP') return null;
  const r = await run('ip', ['netns', 'exec', vpcNetns, 'ss', '-H', '-l', '-n', protocol === 'UDP' ? '-u' : '-t']);
  const taken = conflictingListener(parseListeners(r.stdout), ip || '0.0.0.0', port);
  if (!taken) return null;
  const where = taken.address.includes(':') ? `[${taken.address}]` : taken.address || '*';
  return `port ${port}/${protocol} on ${ip || '0.0.0.0'} is already in use on the node (something listens on ${where}:${taken.port})`;
}
