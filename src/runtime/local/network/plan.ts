import crypto from 'node:crypto';
import { InvalidInputError } from '../../../errors.js';

export interface NetworkPlanInput {
  /** Lab name (DNS-1123 label, at most 20 characters). */
  labName: string;
  /** Explicit range from the lab file; chosen from free candidates when omitted. */
  cidr?: string;
  vpcs: { name: string; hub: boolean; clusters: string[] }[];
}

export interface VpcPlan {
  name: string;
  /** Network namespace; empty in loopback mode. */
  netns: string;
  /** Host end of the veth pair (the VPC's gateway lives here); empty in loopback mode. */
  hostIf: string;
  /** The other end, inside the namespace. */
  nsIf: string;
  subnet: string;
  prefixLength: number;
  /** Host side of the veth; empty in loopback mode. */
  gateway: string;
  /** Cluster name → its own address inside the namespace. */
  clusterAddresses: Record<string, string>;
  /**
   * Cluster name → the range its pods take their addresses from, inside `subnet`. Empty in
   * loopback mode (pods share their node's address there); absent in plans stored before pods
   * had their own addresses.
   */
  clusterPodCidrs: Record<string, string>;
  hub: boolean;
}

export interface NetworkPlan {
  labName: string;
  mode: 'netns' | 'loopback';
  cidr: string;
  /** iptables chain (filter table) holding the VPC forwarding rules, jumped to from FORWARD. */
  chain: string;
  /** Comment on every rule, so leftovers can be found. */
  comment: string;
  vpcs: VpcPlan[];
}

/** Linux interface names hold at most IFNAMSIZ-1 = 15 characters. */
export const MAX_INTERFACE_NAME = 15;
/** iptables chain names hold at most 28 characters (XT_EXTENSION_MAXNAMELEN - 1). */
export const MAX_CHAIN_NAME = 28;
/** Cluster addresses start at .10 of their VPC subnet: .1 is the gateway, the rest is kept free. */
const FIRST_CLUSTER_OFFSET = 10;

/** Short, stable identifier of a lab for names with tight length limits (IFNAMSIZ = 16). */
function labHash(labName: string): string {
  return crypto.createHash('sha256').update(labName).digest('hex').slice(0, 6);
}

/** `ocmlab.<lab>.<vpc>`: dots cannot occur in lab or VPC names, so a lab's namespaces are unambiguous. */
function netnsName(labName: string, vpc: string): string {
  return `ocmlab.${labName}.${vpc}`;
}

export function netnsPrefixOf(labName: string): string {
  return `ocmlab.${labName}.`;
}

/** `ol<hash>`: every host-side link of a lab starts with it, followed by the VPC index and `h`. */
export function interfacePrefix(labName: string): string {
  return `ol${labHash(labName)}`;
}

function hostInterfaceName(labName: string, vpcIndex: number): string {
  return `${interfacePrefix(labName)}${vpcIndex}h`;
}

function namespaceInterfaceName(labName: string, vpcIndex: number): string {
  return `${interfacePrefix(labName)}${vpcIndex}n`;
}

/** Chain of the forwarding rules (from FORWARD). */
export function chainName(labName: string): string {
  return `OCMLAB-${labHash(labName).toUpperCase()}`;
}

/** Chains that keep the host's own connections into the VPCs open (from INPUT and OUTPUT). */
export function hostChainNames(labName: string): { input: string; output: string } {
  const base = chainName(labName);
  return { input: `${base}-IN`, output: `${base}-OUT` };
}

export function ruleComment(labName: string): string {
  return `ocm-lab:${labName}`;
}

function ipToInt(ip: string): number {
  return ip.split('.').reduce((acc, octet) => acc * 256 + Number(octet), 0);
}

export function intToIp(n: number): string {
  return [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');
}

const CIDR = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?:\/(\d{1,2}))?$/;

/** Parses `a.b.c.d/n` (or a bare address as /32) and returns the network address as an integer. */
export function parseCidr(cidr: string): { base: number; prefix: number } {
  const m = CIDR.exec(cidr);
  const octets = m ? m.slice(1, 5).map(Number) : [];
  const prefix = Number(m?.[5] ?? 32);
  if (!m || octets.some((o) => o > 255) || prefix > 32) throw new InvalidInputError(`'${cidr}' is not an IPv4 address or CIDR such as 10.213.0.0/16`);
  const size = 2 ** (32 - prefix);
  const n = ipToInt(octets.join('.'));
  return { base: n - (n % size), prefix };
}

/**
 * How a lab range is carved: VPC subnets of `vpcPrefix` (the first `firstIndex` of them left
 * unused), each cut into blocks of `blockPrefix`. Block 0 of a VPC holds its gateway and its
 * cluster addresses; block k+1 is the pod range of its cluster k.
 *   /16 or larger: /20 VPCs (the first skipped) of 16 /24 blocks — 15 clusters × 254 pods.
 *   /17…/20: 16 VPC subnets (the first skipped) of 16 blocks each (/25…/28).
 *   /21…/24: 4 VPC subnets of 4 blocks each (a /24: /26 VPCs, /28 blocks).
 */
export interface AddressLayout {
  vpcPrefix: number;
  blockPrefix: number;
  firstIndex: number;
  /** How many VPCs fit. */
  vpcCount: number;
  /** How many clusters fit in one VPC: a pod block each, and an address each in block 0. */
  clustersPerVpc: number;
}

/** Pod ranges smaller than this (a /29 holds 6 pods) are refused. */
export const SMALLEST_POD_PREFIX = 28;

export function addressLayout(labPrefix: number): AddressLayout {
  const shape =
    labPrefix <= 16
      ? { vpcPrefix: 20, blockPrefix: 24, firstIndex: 1, vpcCount: 2 ** (20 - labPrefix) - 1 }
      : labPrefix <= 20
        ? { vpcPrefix: labPrefix + 4, blockPrefix: labPrefix + 8, firstIndex: 1, vpcCount: 15 }
        : { vpcPrefix: labPrefix + 2, blockPrefix: labPrefix + 4, firstIndex: 0, vpcCount: 4 };
  const blocks = 2 ** (shape.blockPrefix - shape.vpcPrefix);
  const addressRoom = 2 ** (32 - shape.blockPrefix) - FIRST_CLUSTER_OFFSET;
  return { ...shape, clustersPerVpc: Math.max(0, Math.min(blocks - 1, addressRoom)) };
}

/** Refuses a range too small for the topology before anything is created. */
function checkFits(input: NetworkPlanInput, cidr: string, layout: AddressLayout): void {
  const hint = 'choose a larger network.cidr in the lab file (a /16 has room for 15 VPCs of 15 clusters each), or omit it to let ocm-lab pick one';
  if (layout.blockPrefix > SMALLEST_POD_PREFIX) {
    throw new InvalidInputError(
      `network.cidr ${cidr} is too small: each cluster's pod range would be a /${layout.blockPrefix}, and pods need at least a /${SMALLEST_POD_PREFIX}`,
      { hint: 'choose a /24 or larger network.cidr in the lab file, or omit it to let ocm-lab pick one' },
    );
  }
  if (input.vpcs.length > layout.vpcCount) {
    throw new InvalidInputError(
      `network.cidr ${cidr} has room for ${layout.vpcCount} VPC subnets (/${layout.vpcPrefix}), the lab has ${input.vpcs.length} VPCs`,
      { hint },
    );
  }
  const crowded = input.vpcs.find((v) => v.clusters.length > layout.clustersPerVpc);
  if (crowded) {
    throw new InvalidInputError(
      `network.cidr ${cidr} gives each VPC a /${layout.vpcPrefix} with room for ${layout.clustersPerVpc} clusters ` +
        `(each with a /${layout.blockPrefix} of pod addresses); VPC ${crowded.name} has ${crowded.clusters.length}`,
      { hint },
    );
  }
}

/** The lab's namespaces, links, subnets and addresses within `cidr`. Pure: the same input gives the same plan. */
export function planNetworkIn(input: NetworkPlanInput, cidr: string): NetworkPlan {
  const { base, prefix } = parseCidr(cidr);
  const layout = addressLayout(prefix);
  checkFits(input, cidr, layout);
  const vpcSize = 2 ** (32 - layout.vpcPrefix);
  const blockSize = 2 ** (32 - layout.blockPrefix);
  return {
    labName: input.labName,
    mode: 'netns',
    cidr: `${intToIp(base)}/${prefix}`,
    chain: chainName(input.labName),
    comment: ruleComment(input.labName),
    vpcs: input.vpcs.map((vpc, i) => {
      const subnetBase = base + (layout.firstIndex + i) * vpcSize;
      return {
        name: vpc.name,
        netns: netnsName(input.labName, vpc.name),
        hostIf: hostInterfaceName(input.labName, i),
        nsIf: namespaceInterfaceName(input.labName, i),
        subnet: `${intToIp(subnetBase)}/${layout.vpcPrefix}`,
        prefixLength: layout.vpcPrefix,
        gateway: intToIp(subnetBase + 1),
        clusterAddresses: Object.fromEntries(vpc.clusters.map((c, k) => [c, intToIp(subnetBase + FIRST_CLUSTER_OFFSET + k)])),
        clusterPodCidrs: Object.fromEntries(vpc.clusters.map((c, k) => [c, `${intToIp(subnetBase + (k + 1) * blockSize)}/${layout.blockPrefix}`])),
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
  if (input.vpcs.length > 254) throw new InvalidInputError(`a loopback lab has room for 254 VPCs, the lab has ${input.vpcs.length}`);
  const crowded = input.vpcs.find((v) => v.clusters.length > 245);
  if (crowded) throw new InvalidInputError(`a loopback VPC has room for 245 clusters; VPC ${crowded.name} has ${crowded.clusters.length}`);
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
      clusterAddresses: Object.fromEntries(vpc.clusters.map((c, k) => [c, `127.${second}.${i + 1}.${FIRST_CLUSTER_OFFSET + k}`])),
      // No pod network without namespaces: pods share their node's address.
      clusterPodCidrs: {},
      hub: vpc.hub,
    })),
  };
}

/**
 * A stored plan brought to the clusters of `input`: clusters it no longer has
 * lose their address and pod range; new ones get the lowest free slot of their
 * VPC. Everybody else keeps theirs, so running clusters never move. VPCs are
 * taken as they are (a VPC added or removed is refused before this).
 */
export function reconcilePlanClusters(plan: NetworkPlan, input: NetworkPlanInput): NetworkPlan {
  const layout = plan.mode === 'netns' ? addressLayout(parseCidr(plan.cidr).prefix) : null;
  const capacity = layout ? layout.clustersPerVpc : 245;
  return {
    ...plan,
    vpcs: plan.vpcs.map((vpc) => {
      const wanted = input.vpcs.find((v) => v.name === vpc.name)?.clusters ?? [];
      const subnetBase = parseCidr(vpc.subnet).base;
      const slotOf = (address: string) => ipToInt(address) - subnetBase - FIRST_CLUSTER_OFFSET;
      const addresses: Record<string, string> = {};
      const podCidrs: Record<string, string> = {};
      for (const name of wanted.filter((c) => c in vpc.clusterAddresses)) {
        addresses[name] = vpc.clusterAddresses[name] as string;
        if (vpc.clusterPodCidrs?.[name]) podCidrs[name] = vpc.clusterPodCidrs[name];
      }
      const used = new Set(Object.values(addresses).map(slotOf));
      for (const name of wanted.filter((c) => !(c in vpc.clusterAddresses))) {
        let slot = 0;
        while (used.has(slot)) slot += 1;
        if (slot >= capacity) {
          throw new InvalidInputError(`VPC ${vpc.name} (${vpc.subnet}) has room for ${capacity} clusters; cluster ${name} does not fit`, {
            hint: 'put the cluster in another VPC, or make a new lab with a larger network.cidr',
          });
        }
        used.add(slot);
        addresses[name] = intToIp(subnetBase + FIRST_CLUSTER_OFFSET + slot);
        if (layout) podCidrs[name] = `${intToIp(subnetBase + (slot + 1) * 2 ** (32 - layout.blockPrefix))}/${layout.blockPrefix}`;
      }
      return { ...vpc, clusterAddresses: addresses, clusterPodCidrs: podCidrs };
    }),
  };
}
