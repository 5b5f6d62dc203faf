/**
 * Offline images of the kind runtime alone: the kind node image and the images
 * kubeadm preloads into it (built FROM src/images' base image). Where images
 * come from is said once, in src/image.ts.
 */
export { CNI_CONFLIST_FILE, cniConflist, type CniOptions } from './cni.js';
export {
  componentImageKey,
  componentImageSpecs,
  ensureComponentImage,
  ensureComponentImages,
  pauseImage,
  type ComponentImageSpec,
} from './component-images.js';
export { ensureKindNodeImage, ensureKindNodeImageDetail, nodeImageKey, nodeImageRef } from './node-image.js';
