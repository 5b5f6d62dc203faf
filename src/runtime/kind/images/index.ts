/**
 * Offline images of the kind runtime alone: the kind node image and the images
 * kubeadm preloads into it (built FROM src/images' base image). Where images
 * come from is said once, in src/images/catalogue.ts.
 */
export { cniConflist } from './cni.js';
export { componentImageKey, componentImageSpecs, ensureComponentImage } from './component-images.js';
export { ensureKindNodeImage, ensureKindNodeImageDetail, nodeImageKey, nodeImageRef } from './node-image.js';
