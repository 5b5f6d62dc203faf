/** Kept for the addons' imports; the image map lives in images.ts. */
export { isOcmLabImage, OCM_LAB_IMAGE } from './images.js';
