import net from 'node:net';

/**
 * One spelling per address, so SANs compare as strings. IPv6 goes through the
 * WHATWG URL parser, which also turns a dotted tail (::ffff:1.2.3.4) into hex:
 * @peculiar/x509 2.2 encodes the dotted form wrongly (as ::ffff:1).
 * Returns undefined for anything that is not an IP address.
 */
export function canonicalIp(ip: string): string | undefined {
  switch (net.isIP(ip)) {
    case 4:
      return ip;
    case 6:
      return new URL(`http://[${ip}]/`).hostname.slice(1, -1);
    default:
      return undefined;
  }
}

const DNS_NAME = /^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

export function isDnsName(name: string): boolean {
  return name.length <= 253 && DNS_NAME.test(name);
}
