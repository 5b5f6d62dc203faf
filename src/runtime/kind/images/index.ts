/**
 * Offline images of the kind runtime: the kind node image, the images kubeadm
 * preloads into it, and our base image that other images are built FROM.
 * Nothing here pulls: Debian packages (debootstrap), our Go builds, files of
 * the kind module in the Go module cache.
 */
export { BASE_IMAGE, baseImageKey, ensureBaseImage } from './base-image.js';
export { CNI_CONFLIST_FILE, cniConflist, type CniOptions } from './cni.js';
export {
  componentImageKey,
  componentImageSpecs,
  ensureComponentImage,
  ensureComponentImages,
  pauseImage,
  type ComponentImageSpec,
} from './component-images.js';
export { buildImage, ensureImage, imageKey, imageTarFile, LABEL_IMAGE_KEY, localImageKey, type BuiltImage, type ContextFile } from './docker-build.js';
export { ensureKindNodeImage, ensureKindNodeImageDetail, nodeImageKey, nodeImageRef } from './node-image.js';
export type { ImageBuildOptions } from './options.js';
export { BASE_ROOTFS, NODE_ROOTFS, ensureRootfsTar, rootfsKey, type RootfsSpec } from './rootfs.js';
