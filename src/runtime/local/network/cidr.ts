import { ConflictError } from '../../../errors.js';
import { run } from '../../../util/exec.js';
import { intToIp, parseCidr } from './plan.js';

/** Ranges tried in order when the lab file names none. */
const CANDIDATE_CIDRS = ['10.213.0.0/16', '10.214.0.0/16', '10.215.0.0/16', '10.216.0.0/16', '172.29.0.0/16', '172.30.0.0/16', '192.168.213.0/24'];

export interface UsedRange {
  cidr: string;
  /** What uses it, for the error message: "route 10.0.0.0/8 dev eth0". */
  what: string;
  dev?: string;
}

export function overlaps(a: string, b: string): boolean {
  const x = parseCidr(a);
  const y = parseCidr(b);
  const prefix = Math.min(x.prefix, y.prefix);
  const size = 2 ** (32 - prefix);
  return Math.floor(x.base / size) === Math.floor(y.base / size);
}

interface IpRoute {
  dst?: string;
  dev?: string;
  type?: string;
  table?: string;
}

/** Route types that describe the machine's own addresses or multicast rather than a network reached through it. */
const NOT_A_NETWORK = new Set(['local', 'broadcast', 'multicast', 'anycast']);
interface IpAddr {
  ifname?: string;
  addr_info?: { family?: string; local?: string; prefixlen?: number }[];
}

/** IPv4 ranges already in use on this machine, from `ip -j route` and `ip -j addr` output. */
export function usedRanges(routes: IpRoute[], addrs: IpAddr[]): UsedRange[] {
  const used: UsedRange[] = [];
  for (const r of routes) {
    if (!r.dst || r.dst === 'default' || r.dst.includes(':')) continue;
    if (r.dst.startsWith('127.') || (r.type && NOT_A_NETWORK.has(r.type))) continue;
    const where = `${r.dev ? ` dev ${r.dev}` : ''}${r.table && r.table !== 'main' ? ` table ${r.table}` : ''}`;
    used.push({ cidr: r.dst.includes('/') ? r.dst : `${r.dst}/32`, what: `route ${r.dst}${where}`, dev: r.dev });
  }
  for (const a of addrs) {
    for (const info of a.addr_info ?? []) {
      if (info.family !== 'inet' || !info.local || info.local.startsWith('127.')) continue;
      const { base } = parseCidr(`${info.local}/${info.prefixlen ?? 32}`);
      used.push({
        cidr: `${intToIp(base)}/${info.prefixlen ?? 32}`,
        what: `address ${info.local}/${info.prefixlen ?? 32} on ${a.ifname ?? '?'}`,
        dev: a.ifname,
      });
    }
  }
  return used;
}

/**
 * The lab's range: the requested one if nothing else uses it, else the first
 * free candidate. Ranges on this lab's own interfaces (an earlier `up`) are not conflicts.
 */
export function chooseCidr(requested: string | undefined, used: UsedRange[], ownInterfacePrefix: string): string {
  const foreign = used.filter((u) => !(u.dev && u.dev.startsWith(ownInterfacePrefix)));
  if (requested) {
    const clash = foreign.find((u) => overlaps(u.cidr, requested));
    if (clash) {
      throw new ConflictError(`network.cidr ${requested} overlaps ${clash.what} on this machine`, {
        hint:
          'choose a range that overlaps nothing in `ip route show table all` as network.cidr in the lab file, ' +
          'or omit network.cidr to let ocm-lab pick a free one',
      });
    }
    return requested;
  }
  const free = CANDIDATE_CIDRS.find((c) => !foreign.some((u) => overlaps(u.cidr, c)));
  if (!free) {
    throw new ConflictError(`every candidate lab range (${CANDIDATE_CIDRS.join(', ')}) overlaps a route of this machine`, {
      hint: 'set network.cidr in the lab file to a free private range',
    });
  }
  return free;
}

export async function readUsedRanges(): Promise<UsedRange[]> {
  const routes = JSON.parse((await run('ip', ['-j', '-4', 'route', 'show', 'table', 'all'])).stdout || '[]') as IpRoute[];
  const addrs = JSON.parse((await run('ip', ['-j', '-4', 'addr', 'show'])).stdout || '[]') as IpAddr[];
  return usedRanges(routes, addrs);
}
