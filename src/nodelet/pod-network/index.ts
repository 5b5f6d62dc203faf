export { PodAddressPool } from './addresses.js';
export { conflictingListener, hostPortCheck, parseListeners } from './host-port.js';
export { podNetnsName, podNetnsPrefix, uidKey, vpcVethName } from './names.js';
export { PodNetwork } from './pod-network.js';
export { ServiceProxy } from './service-proxy.js';
export { renderServiceRules, SERVICES_CHAIN, type EndpointSliceLike, type ServiceLike } from './service-rules.js';
export { podNetworkHooks } from './hooks.js';
