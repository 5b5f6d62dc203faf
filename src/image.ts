/**
 * Our own image: the `ocm-lab` CLI as a container's entry point. Addon
 * manifests name it; each runtime makes it available to its nodes (the
 * local runtime's nodelet maps it to this package, see src/nodelet/images.ts).
 */
export const OCM_LAB_IMAGE = 'ocm-lab:dev';
