import path from 'node:path';
import type { LabConfig } from '../../config/index.js';
import { InvalidInputError } from '../../errors.js';
import { OCM_LAB_IMAGE } from '../../images/catalogue.js';
import { renderKindConfig, type KindTemplates } from './kind-config.js';
import { cniConflist, conflistPlugins, type PodNetwork } from './images/cni.js';
import { hubEndpointLabels, hubEndpointName, kindClusterName, nodeContainerName, vpcNetworkLabels, vpcNetworkName } from './names.js';
import { REGISTRY_CONTAINER, REGISTRY_VOLUME } from '../../images/registry/names.js';
import { parseReference } from '../../provision/oci/reference.js';

/** Kind's default ranges: every cluster has its own node, so they may repeat across clusters. */
export const POD_SUBNET = '10.244.0.0/16';
export const SERVICE_SUBNET = '10.96.0.0/16';
/** The ports spokes reach on the hub: kube-apiserver, and the proxy-server's agent port (hostNetwork on the hub node). */
export const HUB_PUBLISHED_PORTS = [6443, 8091] as const;
/** Sets how many `kind create cluster` run at a time (default: every cluster the lab lacks, at once). */
const CREATE_CONCURRENCY_ENV = 'OCM_LAB_KIND_CREATE_CONCURRENCY';

/**
 * How many `kind create cluster` run side by side: all of them unless $OCM_LAB_KIND_CREATE_CONCURRENCY says fewer. Most of
 * a create is waiting (the node container's systemd, kubeadm's health checks), so on 2 cores three at once take less than
 * three in turn (docs/measured/kind.md); a machine where kubeadm times out under that load sets 1.
 */
export function clusterCreateConcurrency(clusters: number, env: NodeJS.ProcessEnv = process.env): number {
  const given = env[CREATE_CONCURRENCY_ENV];
  if (given === undefined || given === '') return Math.max(1, clusters);
  if (!/^[1-9]\d*$/.test(given)) {
    throw new InvalidInputError(`${CREATE_CONCURRENCY_ENV}=${given} is not a whole number of clusters at a time`, {
      hint: `set ${CREATE_CONCURRENCY_ENV} to 1 (one create at a time) or more, or unset it to create every cluster at once`,
    });
  }
  return Number(given);
}

export interface KindNetworkPlan {
  name: string;
  vpc: string;
  /** From the lab file's network.cidr; null: Docker picks from its address pools. */
  subnet: string | null;
  gateway: string | null;
  labels: Record<string, string>;
}

export interface KindClusterPlan {
  name: string;
  vpc: string;
  hub: boolean;
  kindName: string;
  nodeContainer: string;
  network: string;
  podSubnet: string;
  serviceSubnet: string;
  /** Files the Clusters step writes before `kind create cluster`. */
  kindConfigFile: string;
  cniConflistFile: string;
  /** Every CNI plugin the node runs pods with (the conflist's, and loopback): a subset of what the node image has. */
  cniPlugins: string[];
  /** The conflist mounted into the node, with the VPC network's subnet (a placeholder while Docker has not given one). */
  cniConflist: string;
  kindConfig: string;
  /** Ranges the node routes to nowhere, so a packet for an unserved lab address never leaves the machine. */
  blackholes: string[];
  /** Ranges refused (REJECT) once kube-proxy's DNAT has had its turn: the service range. */
  rejected: string[];
  internalServer: string;
  internalAddress: string;
}

export interface HubEndpointPlan {
  name: string;
  image: string;
  /** The hub's network first, then every other VPC's. */
  networks: string[];
  forwards: { port: number; target: string }[];
  command: string[];
  labels: Record<string, string>;
}

/** The image registry every lab on the machine shares: attached to this lab's networks, mirrored in its nodes. */
interface ImageRegistryPlan {
  name: string;
  volume: string;
  /** Every VPC network of the lab. */
  networks: string[];
  /** Upstream registries whose lab images nodes pull from it first (upstream is the fallback). */
  mirrors: string[];
}

export interface KindLabPlan {
  lab: string;
  runtime: 'kind';
  labDir: string;
  kubernetesVersion: string;
  nodeImage: string;
  /** `ptp` on any node image but the one built here (kind's kindest/node has no `bridge` plugin), `bridge` on that one (images/cni.ts). */
  podNetwork: PodNetwork;
  networks: KindNetworkPlan[];
  clusters: KindClusterPlan[];
  hubEndpoint: HubEndpointPlan;
  imageRegistry: ImageRegistryPlan;
  /** The lab's images: pushed to the image registry (what it lacks), pulled from it by the nodes. */
  images: string[];
}

export interface KindPlanInput {
  labDir: string;
  nodeImage: string;
  /** How pods attach to the node: `bridge` only on the node image built here. */
  podNetwork: PodNetwork;
  images: readonly string[];
  templates: KindTemplates;
}

function parseCidr(cidr: string): { base: number; prefix: number } {
  const [ip, bits] = cidr.split('/');
  const octets = (ip ?? '').split('.').map(Number);
  return { base: octets.reduce((n, o) => n * 256 + o, 0) >>> 0, prefix: Number(bits) };
}

function formatIp(n: number): string {
  return [24, 16, 8, 0].map((shift) => (n >>> shift) & 255).join('.');
}

function overlaps(a: string, b: string): boolean {
  const x = parseCidr(a);
  const y = parseCidr(b);
  const prefix = Math.min(x.prefix, y.prefix);
  const mask = prefix === 0 ? 0 : (~0 << (32 - prefix)) >>> 0;
  return (x.base & mask) >>> 0 === (y.base & mask) >>> 0;
}

/** network.cidr in 16 equal VPC subnets (a /16 gives /20s); the lab file allows at most MAX_VPCS VPCs. */
const VPC_SUBNET_BITS = 4;

/** Docker subnets of the VPC networks: from network.cidr when the lab file gives one, in VPC order. */
function vpcSubnets(config: LabConfig): Map<string, { subnet: string; gateway: string }> {
  const cidr = config.network.cidr;
  if (!cidr) return new Map();
  for (const inner of [POD_SUBNET, SERVICE_SUBNET]) {
    if (overlaps(cidr, inner)) {
      throw new InvalidInputError(
        `network.cidr ${cidr} overlaps ${inner}, which the kind runtime uses inside every node (pods ${POD_SUBNET}, services ${SERVICE_SUBNET})`,
        {
          hint: 'choose a network.cidr outside 10.244.0.0/16 and 10.96.0.0/16 (e.g. 172.30.0.0/16)',
        },
      );
    }
  }
  const { base, prefix } = parseCidr(cidr);
  const vpcPrefix = prefix + VPC_SUBNET_BITS;
  if (vpcPrefix > 28) {
    throw new InvalidInputError(`network.cidr ${cidr} is too small for the kind runtime: each VPC network would be a /${vpcPrefix}`, {
      hint: 'choose a /24 or larger network.cidr, or omit it to let Docker pick the subnets',
    });
  }
  const size = 2 ** (32 - vpcPrefix);
  const network = (base & ((~0 << (32 - prefix)) >>> 0)) >>> 0;
  return new Map(config.vpcs.map((v, i) => [v.name, { subnet: `${formatIp(network + i * size)}/${vpcPrefix}`, gateway: formatIp(network + i * size + 1) }]));
}

/** Where a cluster's conflist comes from: pods reach the service range and their VPC network (its nodes, the hub's endpoint, the node's DNS). */
export function clusterConflist(network: PodNetwork, cluster: Pick<KindClusterPlan, 'podSubnet' | 'serviceSubnet'>, vpcSubnet: string): string {
  return cniConflist(cluster.podSubnet, { network, serviceSubnet: cluster.serviceSubnet, extraRoutes: [vpcSubnet] });
}

function hubEndpointCommand(hubNode: string): string[] {
  return ['ocm-lab', 'internal', 'vpc-gateway', ...HUB_PUBLISHED_PORTS.flatMap((port) => ['--forward', `${port}=${hubNode}:${port}`])];
}

/**
 * Everything `up --runtime kind` creates for `config`, by name. Pure: the same
 * input gives the same plan, so up, down, status and --dry-run share it.
 */
export function planKindLab(config: LabConfig, input: KindPlanInput): KindLabPlan {
  const hub = config.clusters.find((c) => c.hub);
  if (!hub) throw new InvalidInputError(`lab '${config.name}' has no hub cluster`);
  const subnets = vpcSubnets(config);
  const networks: KindNetworkPlan[] = config.vpcs.map((v) => ({
    name: vpcNetworkName(config.name, v.name),
    vpc: v.name,
    subnet: subnets.get(v.name)?.subnet ?? null,
    gateway: subnets.get(v.name)?.gateway ?? null,
    labels: vpcNetworkLabels(config.name, v.name),
  }));
  const endpoint = hubEndpointName(config.name);
  const hubNode = nodeContainerName(config.name, hub.name);
  const clusters: KindClusterPlan[] = config.clusters.map((c) => {
    const dir = path.join(input.labDir, 'clusters', c.name, 'kind');
    const node = nodeContainerName(config.name, c.name);
    const cniConflistFile = path.join(dir, 'cni.conflist');
    const network = vpcNetworkName(config.name, c.vpc);
    const conflist = clusterConflist(
      input.podNetwork,
      { podSubnet: POD_SUBNET, serviceSubnet: SERVICE_SUBNET },
      subnets.get(c.vpc)?.subnet ?? `<subnet the engine gives ${network}>`,
    );
    return {
      name: c.name,
      vpc: c.vpc,
      hub: c.hub,
      kindName: kindClusterName(config.name, c.name),
      nodeContainer: node,
      network,
      podSubnet: POD_SUBNET,
      serviceSubnet: SERVICE_SUBNET,
      kindConfigFile: path.join(dir, 'kind-config.yaml'),
      cniConflistFile,
      cniPlugins: conflistPlugins(conflist),
      cniConflist: conflist,
      kindConfig: renderKindConfig(c.hub ? input.templates.hub : input.templates.spoke, {
        nodeImage: input.nodeImage,
        podSubnet: POD_SUBNET,
        serviceSubnet: SERVICE_SUBNET,
        cniConflist: cniConflistFile,
        ...(c.hub ? { endpointName: endpoint } : {}),
      }),
      blackholes: [POD_SUBNET],
      rejected: [SERVICE_SUBNET],
      // A spoke is known by its node's address on its VPC network, which Docker assigns when the node starts.
      internalServer: c.hub ? `https://${endpoint}:6443` : `https://<${node}'s address on ${network}>:6443`,
      internalAddress: c.hub ? endpoint : `<${node}'s address on ${network}>`,
    };
  });
  return {
    lab: config.name,
    runtime: 'kind',
    labDir: input.labDir,
    kubernetesVersion: config.kubernetesVersion,
    nodeImage: input.nodeImage,
    podNetwork: input.podNetwork,
    networks,
    clusters,
    hubEndpoint: {
      name: endpoint,
      image: OCM_LAB_IMAGE,
      networks: [vpcNetworkName(config.name, hub.vpc), ...config.vpcs.filter((v) => v.name !== hub.vpc).map((v) => vpcNetworkName(config.name, v.name))],
      forwards: HUB_PUBLISHED_PORTS.map((port) => ({ port, target: `${hubNode}:${port}` })),
      command: hubEndpointCommand(hubNode),
      labels: hubEndpointLabels(config.name),
    },
    imageRegistry: {
      name: REGISTRY_CONTAINER,
      volume: REGISTRY_VOLUME,
      networks: networks.map((n) => n.name),
      mirrors: [...new Set(input.images.map((i) => parseReference(i).host))].sort(),
    },
    images: [...new Set(input.images)],
  };
}
