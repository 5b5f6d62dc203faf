export {
  chainName,
  hostChainNames,
  interfacePrefix,
  labHash,
  MAX_CHAIN_NAME,
  MAX_INTERFACE_NAME,
  netnsName,
  parseCidr,
  planLoopback,
  planNetworkIn,
  ruleComment,
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
