import net from 'node:net';

const PRIVATE_RANGES: [string, number][] = [
  ['10.0.0.0', 8],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
];

function ipv4ToInt(ip: string): number {
  return ip.split('.').reduce((acc, octet) => acc * 256 + Number(octet), 0);
}

function intToIpv4(n: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join('.');
}

function blockOf(n: number, prefix: number): number {
  return Math.floor(n / 2 ** (32 - prefix));
}

/**
 * Why `cidr` cannot be a lab's network range, or null when it can: it must be
 * an IPv4 network address with a /16../24 prefix inside RFC 1918 space.
 */
export function checkPrivateCidr(cidr: string): string | null {
  const m = /^(\d{1,3}(?:\.\d{1,3}){3})\/(\d{1,2})$/.exec(cidr);
  const ip = m?.[1];
  if (!m || !ip || !net.isIPv4(ip)) return 'must be an IPv4 CIDR such as 10.213.0.0/16';
  const prefix = Number(m[2]);
  if (prefix < 16 || prefix > 24) return 'must have a prefix length from /16 to /24 (e.g. 10.213.0.0/16)';
  const n = ipv4ToInt(ip);
  const inside = PRIVATE_RANGES.some(([base, bits]) => prefix >= bits && blockOf(n, bits) === blockOf(ipv4ToInt(base), bits));
  if (!inside) return 'must be inside a private range (10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16)';
  const network = blockOf(n, prefix) * 2 ** (32 - prefix);
  if (network !== n) return `has host bits set; use ${intToIpv4(network)}/${prefix}`;
  return null;
}
