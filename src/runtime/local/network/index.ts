export {
  addressLayout,
  chainName,
  hostChainNames,
  interfacePrefix,
  MAX_CHAIN_NAME,
  MAX_INTERFACE_NAME,
  netnsPrefixOf,
  parseCidr,
  planLoopback,
  planNetworkIn,
  reconcilePlanClusters,
  ruleComment,
  SMALLEST_POD_PREFIX,
  type NetworkPlan,
  type NetworkPlanInput,
} from './plan.js';
export { chooseCidr, overlaps, usedRanges } from './cidr.js';
export { applyScript, forwardRules, hostRules, labChains, removalScript, rulesJumpingTo, rulesOf, splitRuleLine } from './rules.js';
export { probeNetworkCapability } from './probe.js';
export { applyNetwork, netnsExecPrefix, planNetwork, teardownNetwork, type NetworkResource } from './apply.js';
export { networkHealth } from './health.js';
export { findLeftovers } from './leftovers.js';
export { vpcRoutes, vpcSysctls } from './vpc-routes.js';
