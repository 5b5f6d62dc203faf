/**
 * The one image the local runtime's nodelet runs. The kind runtime builds and
 * loads an image of this name whose entry point is the `ocm-lab` CLI.
 */
export const OCM_LAB_IMAGE = 'ocm-lab:dev';

const ACCEPTED = new Set([OCM_LAB_IMAGE, `library/${OCM_LAB_IMAGE}`, `docker.io/library/${OCM_LAB_IMAGE}`]);

/** True for `ocm-lab:dev`, also spelled with the `docker.io/library/` prefix. */
export function isOcmLabImage(image: string | undefined): boolean {
  return image !== undefined && ACCEPTED.has(image.trim());
}
