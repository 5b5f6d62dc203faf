export {
  chainName,
  interfacePrefix,
  labHash,
  netnsName,
  planLoopback,
  planNetworkIn,
  type NetworkPlan,
  type NetworkPlanInput,
  type VpcPlan,
} from './plan.js';
export { CANDIDATE_CIDRS, chooseCidr, overlaps, usedRanges, type UsedRange } from './cidr.js';
export {
  applyNetwork,
  chainRules,
  findLeftovers,
  netnsExecPrefix,
  networkHealth,
  planNetwork,
  probeNetworkCapability,
  teardownNetwork,
  type NetworkResource,
} from './apply.js';
