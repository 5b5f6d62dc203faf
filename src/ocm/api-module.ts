/** The OCM API module of the lab's OCM version (its operator CRDs are what benches and tests install by hand). */
export const OCM_API_MODULE = 'open-cluster-management.io/api';
export const OCM_API_VERSION = 'v1.2.0';
