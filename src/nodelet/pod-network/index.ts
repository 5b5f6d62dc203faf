export { PodAddressPool } from './addresses.js';
export { conflictingListener, hostPortCheck, parseListeners, type Listener, type PortProtocol } from './host-port.js';
export { netnsPath, POD_GATEWAY, POD_INTERFACE, podNetnsName, podNetnsPrefix, uidKey, vethAlias, vpcVethName } from './names.js';
export { PodNetwork, type PodNetworkOptions, type PodSandboxNetwork } from './pod-network.js';
export { ServiceProxy, type ServiceProxyOptions, type ServiceRulesSink } from './service-proxy.js';
export { renderServiceRules, SERVICES_CHAIN, type EndpointSliceLike, type ServiceLike, type ServiceRulesOptions } from './service-rules.js';
export { podNetworkHooks } from './hooks.js';
export { serviceHostAliases, type ServiceWithName } from './service-hosts.js';
