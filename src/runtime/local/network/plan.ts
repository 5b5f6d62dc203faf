import crypto from 'node:crypto';

export interface NetworkPlanInput {
  labName: string;
  /** Explicit range from the lab file; chosen from free candidates when omitted. */
  cidr?: string;
  vpcs: { name: string; hub: boolean; clusters: string[] }[];
}

export interface VpcPlan {
  name: string;
  netns: string;
  /** Host end of the veth pair (the VPC's gateway lives here). */
  hostIf: string;
  /** The other end, inside the namespace. */
  nsIf: string;
  subnet: string;
  prefixLength: number;
  gateway: string;
  clusterAddresses: Record<string, string>;
  hub: boolean;
}

export interface NetworkPlan {
  labName: string;
  mode: 'netns' | 'loopback';
  cidr: string;
  /** iptables chain (filter table) holding the VPC rules, jumped to from FORWARD. */
  chain: string;
  /** Comment on every rule, so leftovers can be found. */
  comment: string;
  vpcs: VpcPlan[];
}

/** Short, stable identifier of a lab for names with tight length limits (IFNAMSIZ = 15). */
export function labHash(labName: string): string {
  return crypto.createHash('sha256').update(labName).digest('hex').slice(0, 6);
}

/** `ocmlab.<lab>.<vpc>`: dots cannot occur in lab or VPC names, so a lab's namespaces are unambiguous. */
export function netnsName(labName: string, vpc: string): string {
  return `ocmlab.${labName}.${vpc}`;
}

export function netnsPrefixOf(labName: string): string {
  return `ocmlab.${labName}.`;
}

export function interfacePrefix(labName: string): string {
  return `ol${labHash(labName)}`;
}

export function chainName(labName: string): string {
  return `OCMLAB-${labHash(labName).toUpperCase()}`;
}

export function ruleComment(labName: string): string {
  return `ocm-lab:${labName}`;
}

export function ipToInt(ip: string): number {
  return ip.split('.').reduce((acc, octet) => acc * 256 + Number(octet), 0);
}

export function intToIp(n: number): string {
  return [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');
}

export function parseCidr(cidr: string): { base: number; prefix: number } {
  const [ip, bits] = cidr.split('/');
  const prefix = Number(bits ?? 32);
  const size = 2 ** (32 - prefix);
  const n = ipToInt(ip as string);
  return { base: n - (n % size), prefix };
}

/** A VPC's share of the lab range: /24s from a /22 or larger, quarters of smaller ranges. */
function vpcPrefixFor(labPrefix: number): number {
  return labPrefix <= 22 ? 24 : labPrefix + 2;
}

export function planNetworkIn(input: NetworkPlanInput, cidr: string): NetworkPlan {
  const { base, prefix } = parseCidr(cidr);
  const vpcPrefix = vpcPrefixFor(prefix);
  const vpcSize = 2 ** (32 - vpcPrefix);
  const ifPrefix = interfacePrefix(input.labName);
  return {
    labName: input.labName,
    mode: 'netns',
    cidr: `${intToIp(base)}/${prefix}`,
    chain: chainName(input.labName),
    comment: ruleComment(input.labName),
    vpcs: input.vpcs.map((vpc, i) => {
      // Skip the range's first /24 (often mistaken for a gateway network) when there is room.
      const index = prefix <= 22 ? i + 1 : i;
      const subnetBase = base + index * vpcSize;
      return {
        name: vpc.name,
        netns: netnsName(input.labName, vpc.name),
        hostIf: `${ifPrefix}${i}h`,
        nsIf: `${ifPrefix}${i}n`,
        subnet: `${intToIp(subnetBase)}/${vpcPrefix}`,
        prefixLength: vpcPrefix,
        gateway: intToIp(subnetBase + 1),
        clusterAddresses: Object.fromEntries(vpc.clusters.map((c, k) => [c, intToIp(subnetBase + 10 + k)])),
        hub: vpc.hub,
      };
    }),
  };
}

/**
 * Without network namespaces every cluster gets its own 127.x address (Linux
 * answers on all of 127/8), distinct per lab; nothing is isolated.
 */
export function planLoopback(input: NetworkPlanInput): NetworkPlan {
  const second = 1 + (parseInt(labHash(input.labName).slice(0, 4), 16) % 250);
  return {
    labName: input.labName,
    mode: 'loopback',
    cidr: `127.${second}.0.0/16`,
    chain: '',
    comment: ruleComment(input.labName),
    vpcs: input.vpcs.map((vpc, i) => ({
      name: vpc.name,
      netns: '',
      hostIf: '',
      nsIf: '',
      subnet: `127.${second}.${i + 1}.0/24`,
      prefixLength: 24,
      gateway: '',
      clusterAddresses: Object.fromEntries(vpc.clusters.map((c, k) => [c, `127.${second}.${i + 1}.${10 + k}`])),
      hub: vpc.hub,
    })),
  };
}
