/**
 * Our own image: the `ocm-lab` CLI as a container's entry point. Addon
 * manifests name it; each runtime makes it available to its nodes (the
 * local runtime's nodelet maps it to this package, see src/nodelet/images.ts).
 */
export const OCM_LAB_IMAGE = 'ocm-lab:dev';

/** Registry path of OCM's images (`quay.io/open-cluster-management/<name>:<OCM version>`). */
export const OCM_IMAGE_REPOSITORY = 'quay.io/open-cluster-management';

/** One of OCM's upstream images at the lab's OCM version, e.g. `quay.io/open-cluster-management/registration:v1.2.1`. */
export function ocmImage(name: 'registration-operator' | 'registration' | 'work' | 'placement' | 'addon-manager', ocmVersion: string): string {
  return `${OCM_IMAGE_REPOSITORY}/${name}:${ocmVersion}`;
}
