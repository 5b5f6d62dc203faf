export { helloworldAddon, helloworldAgentManifests, HELLOWORLD_HUB_PERMISSIONS } from './addon.js';
export { addonActiveOnHub, hubConfigMapsPath } from './agent.js';
export { ConfigMapCopier, copiesConfigMap, copyDiffers, spokeCopy, type ConfigMap } from './copier.js';
export * from './constants.js';
