export {
  addressLayout,
  chainName,
  hostChainNames,
  interfacePrefix,
  labHash,
  MAX_CHAIN_NAME,
  MAX_INTERFACE_NAME,
  netnsName,
  netnsPrefixOf,
  parseCidr,
  planLoopback,
  planNetworkIn,
  reconcilePlanClusters,
  ruleComment,
  SMALLEST_POD_PREFIX,
  type AddressLayout,
  type NetworkPlan,
  type NetworkPlanInput,
  type VpcPlan,
} from './plan.js';
export { CANDIDATE_CIDRS, chooseCidr, overlaps, readUsedRanges, usedRanges, type UsedRange } from './cidr.js';
export { applyScript, forwardRules, hostRules, labChains, removalScript, rulesJumpingTo, rulesOf, splitRuleLine, type ChainSpec } from './rules.js';
export { probeNetworkCapability } from './probe.js';
export { applyNetwork, netnsExecPrefix, planNetwork, teardownNetwork, type NetworkResource } from './apply.js';
export { networkHealth } from './health.js';
export { findLeftovers } from './leftovers.js';
export { vpcRoutes, vpcSysctls, type VpcRoute } from './vpc-routes.js';
