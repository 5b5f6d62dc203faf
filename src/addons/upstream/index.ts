export { installUpstreamAddon } from './install.js';
export { upstreamHubObjects, clusterProxyHubObjects, managedServiceAccountHubObjects } from './hub-objects.js';
export { upstreamAddonCrds, crdsInYaml, UPSTREAM_CRD_SOURCES } from './crds.js';
export { upstreamLeftovers } from './removal.js';
export { isUpstreamAddon, UPSTREAM_ADDONS, UPSTREAM_MANAGER_DEPLOYMENT, UPSTREAM_RELEASE_NAMESPACE, type UpstreamAddon } from './names.js';
export { runsUpstream } from './implementation.js';
export { waitForUpstreamAgents } from './agent-ready.js';
