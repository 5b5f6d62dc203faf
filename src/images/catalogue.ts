/**
 * The image catalogue: the images a lab's pods name (ours, OCM's, upstream's addons), what each holds and as which user.
 *
 * Where they come from, said here once (the docs link here):
 * - local: the nodelet maps each reference to files on this machine, bind-mounted read-only into the container
 *   (src/nodelet/images.ts, docs/nodelet.md "Images");
 * - kind, built path: each is built here FROM the lab's Debian base, OCM's and upstream's addons' from the provisioned binaries and ours
 *   with the repository's Dockerfile, then pushed once per machine to the kind labs' image registry, which every node
 *   pulls them from as a mirror of their upstream names (src/images/lab-images.ts, src/images/registry/, docs/kind.md);
 * - kind, official path: OCM's and upstream's addons' copied from quay.io into that registry under the same names, ours built
 *   FROM the official Node.js image pinned by digest;
 * - existing: the clusters' nodes pull OCM's images, and ours (`ocm-lab:<version>`) must be made available to them
 *   (the release workflow publishes it to ghcr.io for amd64 and arm64; `--image-registry` pushes it; docs/existing-clusters.md).
 */
import {
  CLUSTER_GATEWAY_UPSTREAM_VERSION,
  CLUSTER_PROXY_VERSION,
  MANAGED_SERVICEACCOUNT_VERSION,
  OCM_IMAGE_REPOSITORY,
  clusterProxyImage,
  type BinaryName,
} from '../provision/recipes.js';
import { PACKAGE_VERSION } from '../version.js';
import type { UpstreamAddon } from '../config/upstream-addons.js';

/**
 * Set on the lab's addon managers when their image is not the default (`up --image-registry`): the image they run,
 * which every agent and proxy-server they deploy runs too (OCM_LAB_IMAGE reads it in their process).
 */
export const OCM_LAB_POD_IMAGE_ENV = 'OCM_LAB_POD_IMAGE';

/**
 * Our own image, named for the package version: the `ocm-lab` CLI as a container's entry point and as `ocm-lab` on PATH.
 * Addon manifests name it; each runtime makes it available to its nodes (the local runtime's nodelet maps it to this
 * package, see src/nodelet/images.ts; kind builds it with the Dockerfile).
 */
export const OCM_LAB_IMAGE = process.env[OCM_LAB_POD_IMAGE_ENV]?.trim() || `ocm-lab:${PACKAGE_VERSION}`;

/** Our image as pushed to `registry` (a host with an optional path: `registry.example:5000/team`), or OCM_LAB_IMAGE without one. */
export function ocmLabImageAt(registry: string | undefined): string {
  return registry ? `${registry.replace(/\/+$/, '')}/ocm-lab:${PACKAGE_VERSION}` : OCM_LAB_IMAGE;
}

// OCM's images (repository, names, the binary each holds) are facts the OCM recipe pulls from too: src/provision/recipes.ts.
export { OCM_IMAGE_REPOSITORY, OCM_UPSTREAM_IMAGES, ocmImage } from '../provision/recipes.js';

/** The OCM images a spoke runs: the klusterlet operator and its agents (the hub runs all of OCM_UPSTREAM_IMAGES). */
export const SPOKE_OCM_IMAGES: readonly string[] = ['registration-operator', 'registration', 'work'];

/** The non-root user of OCM's images (`USER 10001`; group 0 as the image does not name one). */
export const OCM_IMAGE_USER = { uid: 10001, gid: 0 };

/** The addons that upstream also implements in Go (`implementation: upstream` in a lab file). */
export type { UpstreamAddon };

/**
 * Upstream's addon images at the pinned versions and what each holds. The
 * cluster-proxy image (cmd/Dockerfile of open-cluster-management-io/cluster-proxy)
 * is alpine with `/manager`, `/agent`, `/cluster-proxy` and apiserver-network-proxy's
 * `/proxy-server` and `/proxy-agent` at `/`, `USER 65532:65532`; the managed-
 * serviceaccount image (its Dockerfile) is ubi-minimal with `/msa` at `/`, no
 * USER (root). Neither sets ENTRYPOINT: every Deployment upstream generates
 * gives `command`. `/cluster-proxy` (service-proxy and user-server, both off by
 * default) is not mapped. The nodelet maps these to the provisioned binaries.
 */
export const UPSTREAM_ADDON_IMAGES: readonly {
  addon: UpstreamAddon;
  ref: string;
  files: readonly { binary: BinaryName; pathInImage: string }[];
  user: { uid: number; gid: number };
}[] = [
  {
    addon: 'cluster-proxy',
    ref: clusterProxyImage(CLUSTER_PROXY_VERSION),
    files: [
      { binary: 'cluster-proxy-manager', pathInImage: '/manager' },
      { binary: 'cluster-proxy-agent', pathInImage: '/agent' },
      { binary: 'proxy-server', pathInImage: '/proxy-server' },
      { binary: 'proxy-agent', pathInImage: '/proxy-agent' },
    ],
    user: { uid: 65532, gid: 65532 },
  },
  {
    addon: 'managed-serviceaccount',
    ref: `${OCM_IMAGE_REPOSITORY}/managed-serviceaccount:${MANAGED_SERVICEACCOUNT_VERSION}`,
    files: [{ binary: 'managed-serviceaccount', pathInImage: '/msa' }],
    user: { uid: 0, gid: 0 },
  },
];

/** The upstream image of an addon (`quay.io/open-cluster-management/cluster-proxy:v0.10.0`). */
export function upstreamAddonImage(addon: UpstreamAddon): string {
  const found = UPSTREAM_ADDON_IMAGES.find((i) => i.addon === addon);
  if (!found) throw new Error(`internal: no upstream image for ${addon}`);
  return found.ref;
}

/**
 * Upstream's cluster-gateway image (chart `charts/cluster-gateway` of oam-dev/cluster-gateway names
 * `oamdev/cluster-gateway:v<chart version>`): alpine with `/apiserver` (and a `/patch` tool, not mapped),
 * `ENTRYPOINT ["/apiserver"]`, no USER (root). Not part of any lab: `npm run bench -- gateway` runs it
 * side by side with ours, the nodelet mapping it when given the binary (UpOptions.extraImageBinaries).
 */
export const UPSTREAM_CLUSTER_GATEWAY_IMAGE = {
  ref: `oamdev/cluster-gateway:${CLUSTER_GATEWAY_UPSTREAM_VERSION}`,
  files: [{ binary: 'cluster-gateway-upstream', pathInImage: '/apiserver' }],
  entrypoint: ['/apiserver'],
  user: { uid: 0, gid: 0 },
} as const satisfies {
  ref: string;
  files: readonly { binary: BinaryName; pathInImage: string }[];
  entrypoint: readonly string[];
  user: { uid: number; gid: number };
};
