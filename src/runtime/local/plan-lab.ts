import type { LabConfig } from '../../config/index.js';
import { clusterPkiPaths } from '../../pki/index.js';
import { recipeOf, recipesFor, type BinaryName } from '../../provision/index.js';
import { CONTROL_PLANE_COMPONENTS, controlPlaneSpecs, type ControlPlaneBinaries } from './controlplane.js';
import { imageBinaryNames, labBinaryNames } from './lab-binaries.js';
import { addressingOf } from './lab-network.js';
import {
  chainName,
  hostChainNames,
  interfacePrefix,
  labChains,
  netnsPrefixOf,
  vpcRoutes,
  vpcSysctls,
  type NetworkPlan,
  type NetworkResource,
} from './network/index.js';
import { CLI_MAIN } from '../../paths.js';
import { KUBELET_PORT, nodeletCredentials, nodeletSpec, nodeName } from './nodelets.js';
import { CONTROLLER_MANAGER_PORT, planCluster, type ClusterPlan } from './plan.js';
import type { ProcessSpec } from './process.js';
import { supervisorFiles, supervisorSpec } from './supervision.js';
import type { LocalLabState } from './state.js';

interface LocalVpcPlan {
  name: string;
  hub: boolean;
  netns: string | null;
  subnet: string;
  /** The host end of the VPC's veth pair and its address (netns mode). */
  hostInterface: string | null;
  namespaceInterface: string | null;
  gateway: string | null;
  clusters: { name: string; address: string; podCidr: string | null }[];
  /** Routes inside the namespace besides its own subnet and default route: unreachable ones drop what nobody serves. */
  routes: { dst: string; type: string; why: string }[];
  sysctls: Record<string, string>;
}

interface LocalProcessPlan {
  name: string;
  /** What the process is started under: `ip netns exec …` or `nsenter --net=…` (empty in loopback mode). */
  prefix: string[];
  /** The provisioned binary by name (its path is known once `up` has provisioned it), or `ocm-lab` for the nodelet. */
  binary: string;
  args: string[];
  /** Variables set for it besides the inherited environment. */
  env?: Record<string, string>;
  listens: string[];
  logFile: string;
  pidFile: string;
}

interface LocalClusterPlan {
  name: string;
  vpc: string;
  hub: boolean;
  address: string;
  apiServer: string;
  netns: string | null;
  podCidr: string | null;
  node: string;
  dir: string;
  processes: LocalProcessPlan[];
}

interface LocalBinaryPlan {
  name: BinaryName;
  version: string;
  module: string;
}

export interface LocalLabPlan {
  lab: string;
  runtime: 'local';
  labDir: string;
  kubernetesVersion: string;
  ocmVersion: string;
  network: {
    mode: NetworkPlan['mode'];
    /** Why this mode and this range (kept from the running lab, chosen on this machine, or why there are no namespaces). */
    why: string;
    cidr: string;
    vpcs: LocalVpcPlan[];
    iptables: { table: string; chain: string; jumpFrom: string[]; rules: string[][] }[];
  };
  clusters: LocalClusterPlan[];
  /** One per lab, started after the nodelets: restarts any process of `clusters` that dies (with back-off). */
  supervisor: LocalProcessPlan;
  /** Provisioned (from --bin-dir, PATH, the cache, a release download or a Go build) before anything starts. */
  binaries: LocalBinaryPlan[];
}

export interface LocalPlanInput {
  labDir: string;
  /** The network `up` would use: the one in the lab's state, or one planned for this machine. */
  network: NetworkPlan;
  networkWhy: string;
}

/** Each binary by its name in place of its path: paths are known only once `up` has provisioned the binaries. */
function byName<N extends BinaryName>(names: readonly N[]): Record<N, string> {
  return Object.fromEntries(names.map((b) => [b, b as string])) as Record<N, string>;
}

function processPlan(spec: ProcessSpec, listens: string[]): LocalProcessPlan {
  const ours = spec.binary === process.execPath && spec.args[0] === CLI_MAIN;
  return {
    name: spec.name,
    prefix: spec.prefix,
    binary: ours ? 'ocm-lab' : spec.binary,
    args: ours ? spec.args.slice(1) : spec.args,
    ...(spec.extraEnv ? { env: spec.extraEnv } : {}),
    listens,
    logFile: spec.logFile,
    pidFile: spec.pidFile,
  };
}

function clusterProcesses(config: LabConfig, cluster: ClusterPlan): LocalProcessPlan[] {
  const pki = clusterPkiPaths(cluster.pkiDir);
  const specs = controlPlaneSpecs(cluster, byName(['etcd', 'kube-apiserver', 'kube-controller-manager']) as ControlPlaneBinaries, pki);
  const listens: Record<(typeof CONTROL_PLANE_COMPONENTS)[number], string[]> = {
    etcd: [cluster.etcdClientUrl, cluster.etcdPeerUrl],
    'kube-apiserver': [cluster.apiServerUrl],
    'kube-controller-manager': [`https://${cluster.address}:${CONTROLLER_MANAGER_PORT}`],
  };
  const nodelet = nodeletSpec({
    cluster,
    labName: config.name,
    credentials: nodeletCredentials(cluster),
    clusterCaCert: pki.caCert,
    kubernetesVersion: config.kubernetesVersion,
    ocmVersion: config.ocmVersion,
    imageBinaries: byName(imageBinaryNames(config)),
  });
  return [...CONTROL_PLANE_COMPONENTS.map((c) => processPlan(specs[c], listens[c])), processPlan(nodelet, [`https://${cluster.address}:${KUBELET_PORT}`])];
}

function vpcPlan(network: NetworkPlan, vpc: NetworkPlan['vpcs'][number]): LocalVpcPlan {
  const netns = network.mode === 'netns';
  return {
    name: vpc.name,
    hub: vpc.hub,
    netns: netns ? vpc.netns : null,
    subnet: vpc.subnet,
    hostInterface: netns ? vpc.hostIf : null,
    namespaceInterface: netns ? vpc.nsIf : null,
    gateway: netns ? vpc.gateway : null,
    clusters: Object.entries(vpc.clusterAddresses).map(([name, address]) => ({ name, address, podCidr: netns ? (vpc.clusterPodCidrs?.[name] ?? null) : null })),
    routes: netns ? vpcRoutes(network, vpc).map((r) => ({ dst: r.dst, type: r.type, why: r.why })) : [],
    sysctls: netns ? vpcSysctls(vpc) : {},
  };
}

/**
 * Everything `up --runtime local` would create for `config` on `input.network`:
 * namespaces, addresses, routes, forwarding rules, and each cluster's processes
 * with the flags the runtime starts them with. Pure: the runtime's own planning
 * functions, given the same input, give the same plan.
 */
export function planLocalLab(config: LabConfig, input: LocalPlanInput): LocalLabPlan {
  const addressing = addressingOf(input.network);
  const recipes = recipesFor({ kubernetes: config.kubernetesVersion, ocm: config.ocmVersion });
  const clusters = config.clusters.map((c) => {
    const plan = planCluster(input.labDir, c, addressing(c.name));
    return {
      name: c.name,
      vpc: c.vpc,
      hub: c.hub,
      address: plan.address,
      apiServer: plan.apiServerUrl,
      netns: plan.netns,
      podCidr: plan.podCidr,
      node: nodeName(plan),
      dir: plan.dir,
      processes: clusterProcesses(config, plan),
    };
  });
  return {
    lab: config.name,
    runtime: 'local',
    labDir: input.labDir,
    kubernetesVersion: config.kubernetesVersion,
    ocmVersion: config.ocmVersion,
    network: {
      mode: input.network.mode,
      why: input.networkWhy,
      cidr: input.network.cidr,
      vpcs: input.network.vpcs.map((v) => vpcPlan(input.network, v)),
      iptables:
        input.network.mode === 'netns' ? labChains(input.network).map((c) => ({ table: c.table, chain: c.chain, jumpFrom: c.jumpFrom, rules: c.rules })) : [],
    },
    clusters,
    supervisor: processPlan(supervisorSpec(input.labDir), []),
    binaries: labBinaryNames(config).map((name) => {
      const recipe = recipeOf(name, recipes);
      return { name, version: recipe.version, module: recipe.module };
    }),
  };
}

/** What `down` looks for by name when the lab's state is gone: namespaces, host links and chains named after the lab. */
function leftoverNames(labName: string): { netns: string; links: string; chains: string[] } {
  const host = hostChainNames(labName);
  return { netns: `${netnsPrefixOf(labName)}*`, links: `${interfacePrefix(labName)}*`, chains: [chainName(labName), host.input, host.output] };
}

export interface LocalDownPlan {
  lab: string;
  runtime: 'local';
  labDir: string;
  /** False: no state in labDir (never brought up, or taken down); down then only removes leftovers found by name. */
  exists: boolean;
  /** The lab's supervisor, stopped first (whether or not there is state) so that it restarts nothing `down` stops. */
  supervisor: { pidFile: string };
  /** Every process with a pid file under clusters/ is stopped, whatever the state says. */
  processes: { cluster: string; name: string; pidFile: string }[];
  /** Network resources the state recorded, removed last created first. */
  networkResources: NetworkResource[];
  /** What `down` looks for by name besides the recorded resources. */
  leftovers: { netns: string; links: string; chains: string[] };
  labDirectory: 'removed' | 'kept';
}

/** What `down` would stop and remove for a lab, from its state (null: the lab is not up). Pure. */
export function planLocalDown(labName: string, labDir: string, state: LocalLabState | null, keepData: boolean): LocalDownPlan {
  const network = state?.runtimeState.network;
  const processes = network
    ? planLocalLab(state.config, { labDir, network, networkWhy: '' }).clusters.flatMap((c) =>
        c.processes.map((p) => ({ cluster: c.name, name: p.name, pidFile: p.pidFile })),
      )
    : [];
  return {
    lab: labName,
    runtime: 'local',
    labDir,
    exists: state !== null,
    supervisor: { pidFile: supervisorFiles(labDir).pidFile },
    processes,
    networkResources: state?.runtimeState.networkResources ?? [],
    leftovers: leftoverNames(labName),
    labDirectory: keepData ? 'kept' : 'removed',
  };
}
