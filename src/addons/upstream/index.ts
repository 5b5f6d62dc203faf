export { installUpstreamAddon } from './install.js';
export { clusterProxyHubObjects, managedServiceAccountHubObjects } from './hub-objects.js';
export { crdsInYaml } from './crds.js';
export { upstreamLeftovers } from './removal.js';
export { isUpstreamAddon, UPSTREAM_MANAGER_DEPLOYMENT, UPSTREAM_RELEASE_NAMESPACE, type UpstreamAddon } from './names.js';
export { runsUpstream } from './implementation.js';
export { waitForUpstreamAgents } from './agent-ready.js';
