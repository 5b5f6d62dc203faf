export { detachRegistry, type RegistryFacts } from './container.js';
export { builtRegistryImage, registryImageKey, REGISTRY_IMAGE } from './image.js';
export { mirrorInNode, publishRegistryHosting, registryWithImages } from './lab-registry.js';
