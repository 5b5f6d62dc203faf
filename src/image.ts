import type { BinaryName } from './provision/recipes.js';

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

/**
 * OCM's upstream images and the binary each holds. Each is built FROM ubi-minimal
 * with one Go binary copied to `/` and `USER 10001`; none sets ENTRYPOINT, WORKDIR
 * or CMD of its own, so the Deployments OCM generates always give `command`
 * (build/Dockerfile.<name> in open-cluster-management-io/ocm). The nodelet maps
 * these images to the binaries; the kind runtime builds them from the binaries.
 */
export const OCM_UPSTREAM_IMAGES: readonly { image: Parameters<typeof ocmImage>[0]; binary: BinaryName; pathInImage: string }[] = [
  { image: 'registration-operator', binary: 'registration-operator', pathInImage: '/registration-operator' },
  { image: 'registration', binary: 'registration', pathInImage: '/registration' },
  { image: 'work', binary: 'work', pathInImage: '/work' },
  { image: 'placement', binary: 'placement', pathInImage: '/placement' },
  { image: 'addon-manager', binary: 'addon', pathInImage: '/addon' },
];

/** The non-root user of OCM's images (`USER 10001`; group 0 as the image does not name one). */
export const OCM_IMAGE_USER = { uid: 10001, gid: 0 };
