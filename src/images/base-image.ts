import { ensureImage, imageKey, importRootfs, LABEL_IMAGE_KEY, type BuiltImage } from './docker-build.js';
import { resolveImageOptions, type ImageBuildOptions } from './options.js';
import { BASE_ROOTFS, ensureRootfsTar, rootfsKey } from './rootfs.js';

/**
 * Our base image: Debian minbase with ca-certificates, iptables, conntrack,
 * iproute2 and procps. kube-proxy's image and the lab's own images (ocm-lab:<version>,
 * OCM's) are built FROM it, so nothing is ever pulled.
 */
export const BASE_IMAGE = `ocm-lab/base:${BASE_ROOTFS.suite}`;

const BASE_CHANGES = ['ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', 'CMD ["/bin/bash"]'];

export function baseImageKey(): string {
  return imageKey({ image: BASE_IMAGE, rootfs: rootfsKey(BASE_ROOTFS), changes: BASE_CHANGES });
}

/** BASE_IMAGE in the engine (built from the debootstrap rootfs the first time, then loaded from the cache). */
export async function ensureBaseImage(options: ImageBuildOptions = {}): Promise<BuiltImage> {
  const opts = resolveImageOptions(options);
  const key = baseImageKey();
  return ensureImage(
    BASE_IMAGE,
    key,
    async () => {
      const tar = await ensureRootfsTar(BASE_ROOTFS, opts);
      await importRootfs(tar, BASE_IMAGE, [...BASE_CHANGES, `LABEL ${LABEL_IMAGE_KEY}=${key}`], opts);
    },
    opts,
  );
}
