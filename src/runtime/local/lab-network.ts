import type { LabConfig } from '../../config/index.js';
import type { ClusterAddressing } from './plan.js';
import type { LocalRuntimeState } from './state.js';
import type { VpcStatus } from '../types.js';
import {
  applyNetwork,
  findLeftovers,
  netnsExecPrefix,
  networkHealth,
  planLoopback,
  planNetwork,
  probeNetworkCapability,
  reconcilePlanClusters,
  teardownNetwork,
  type NetworkPlan,
  type NetworkPlanInput,
  type NetworkResource,
} from './network/index.js';

/** A lab's network as the rest of the local runtime sees it: where each cluster lives. */
export interface ResolvedNetwork {
  plan: NetworkPlan;
  summary: string;
  addressing(cluster: string): ClusterAddressing;
}

export function planInput(config: LabConfig): NetworkPlanInput {
  return {
    labName: config.name,
    cidr: config.network.cidr,
    vpcs: config.vpcs.map((v) => {
      const clusters = config.clusters.filter((c) => c.vpc === v.name);
      return { name: v.name, hub: clusters.some((c) => c.hub), clusters: clusters.map((c) => c.name) };
    }),
  };
}

export function addressingOf(plan: NetworkPlan): (cluster: string) => ClusterAddressing {
  return (cluster) => {
    const vpc = plan.vpcs.find((v) => cluster in v.clusterAddresses);
    if (!vpc) throw new Error(`internal: cluster ${cluster} has no address in the network plan`);
    return {
      address: vpc.clusterAddresses[cluster] as string,
      netns: plan.mode === 'netns' ? vpc.netns : null,
      netnsPrefix: plan.mode === 'netns' ? netnsExecPrefix(vpc) : [],
      podCidr: plan.mode === 'netns' ? (vpc.clusterPodCidrs?.[cluster] ?? null) : null,
    };
  };
}

function resolved(plan: NetworkPlan): ResolvedNetwork {
  const summary =
    plan.mode === 'netns' ? `${plan.vpcs.map((v) => `${v.name} ${v.subnet}`).join(', ')}; isolation enforced` : 'loopback addresses; isolation NOT enforced';
  return { plan, summary, addressing: addressingOf(plan) };
}

/**
 * Plans the lab's network once (the plan is kept in the lab state so addresses
 * never move) and applies it; every resource is recorded before it is created.
 */
export async function resolveNetwork(
  config: LabConfig,
  state: LocalRuntimeState,
  persist: () => Promise<void>,
  progress: (line: string) => void,
): Promise<ResolvedNetwork> {
  if (state.network) {
    // Spokes added or removed since the plan was made: new ones get free addresses, nobody else moves.
    const reconciled = reconcilePlanClusters(state.network, planInput(config));
    if (JSON.stringify(reconciled) !== JSON.stringify(state.network)) {
      state.network = reconciled;
      await persist();
    }
  } else {
    const capability = await probeNetworkCapability();
    if (capability.canIsolate) {
      state.network = await planNetwork(planInput(config));
    } else {
      progress(`cannot create network namespaces (${capability.reason ?? 'unknown reason'}): using loopback addresses, isolation NOT enforced`);
      state.network = planLoopback(planInput(config));
    }
    await persist();
  }
  const plan = state.network;
  if (plan.mode === 'netns') {
    await applyNetwork(plan, async (resource) => {
      const key = JSON.stringify(resource);
      if (!state.networkResources.some((r) => JSON.stringify(r) === key)) {
        state.networkResources.push(resource);
        await persist();
      }
    });
  }
  return resolved(plan);
}

export async function networkStatus(state: LocalRuntimeState): Promise<{
  vpcs: VpcStatus[];
  isolation: { enforced: boolean; reason: string | null };
  addressing(cluster: string): ClusterAddressing;
}> {
  const plan = state.network;
  if (!plan) {
    return {
      vpcs: [],
      isolation: { enforced: false, reason: 'the lab network was never created' },
      addressing: () => {
        throw new Error('no network plan');
      },
    };
  }
  const vpcs = plan.vpcs.map((v) => {
    const netns = plan.mode === 'netns' ? v.netns : null;
    return { name: v.name, subnet: plan.mode === 'netns' ? v.subnet : null, carrier: netns, details: { netns } };
  });
  if (plan.mode !== 'netns') {
    return {
      vpcs,
      isolation: { enforced: false, reason: 'no network namespaces (needs root/CAP_NET_ADMIN, iproute2 and iptables): loopback addresses only' },
      addressing: addressingOf(plan),
    };
  }
  const health = await networkHealth(plan);
  return {
    vpcs,
    isolation: { enforced: health.enforced, reason: health.enforced ? null : health.problems.join('; ') },
    addressing: addressingOf(plan),
  };
}

/** Removes the lab's network: from the recorded resources, or by name when the state is gone. Returns how many were removed. */
export async function removeNetwork(labName: string, state: LocalRuntimeState | null, persist: (state: LocalRuntimeState) => Promise<void>): Promise<number> {
  const recorded: NetworkResource[] = state?.networkResources ?? [];
  const leftovers = await findLeftovers(labName);
  const all = [...recorded, ...leftovers.filter((l) => !recorded.some((r) => JSON.stringify(r) === JSON.stringify(l)))];
  if (all.length) await teardownNetwork(all);
  if (state && recorded.length) await persist({ ...state, networkResources: [] });
  return all.length;
}
