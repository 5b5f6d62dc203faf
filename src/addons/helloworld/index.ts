export { helloworldAddon, helloworldAgentManifests } from './addon.js';
export { addonActiveOnHub, hubConfigMapsPath } from './agent.js';
export { ConfigMapCopier, copyDiffers, spokeCopy, type ConfigMap } from './copier.js';
export * from './constants.js';
