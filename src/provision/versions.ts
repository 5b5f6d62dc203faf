/** Versions the lab is pinned to; every recipe, download and version check derives from these. */
export const KUBERNETES_VERSION = 'v1.34.4';
export const ETCD_VERSION = 'v3.6.4';
/** The Go module proxy here serves OCM v1.2.1 but answers 403 for v1.3.x (see docs/notes.md). */
export const OCM_VERSION = 'v1.2.1';

/** Oldest Go toolchain that builds every recipe (OCM v1.2.1's go.mod says 1.25). */
export const MIN_GO: readonly [number, number] = [1, 25];
