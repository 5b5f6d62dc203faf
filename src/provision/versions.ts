/** Versions the lab is pinned to; every recipe, download and version check derives from these. */
export const KUBERNETES_VERSION = 'v1.34.4';
export const ETCD_VERSION = 'v3.6.4';
/** The Go module proxy here serves OCM v1.2.1 but answers 403 for v1.3.x (see docs/notes.md). */
export const OCM_VERSION = 'v1.2.1';

/** Oldest Go toolchain that builds every recipe (OCM v1.2.1's go.mod says 1.25). */
export const MIN_GO: readonly [number, number] = [1, 25];

/**
 * What the offline kind node image holds (`kubeadm config images list --kubernetes-version v1.34.4`
 * names etcd 3.6.5-0, coredns v1.12.1 and pause 3.10.1); pinned to KUBERNETES_VERSION.
 */
export const KUBEADM_ETCD_VERSION = 'v3.6.5';
export const COREDNS_VERSION = 'v1.12.1';
export const CRICTL_VERSION = 'v1.34.0';
export const KIND_VERSION = 'v0.33.0';
export const PAUSE_VERSION = '3.10.1';
