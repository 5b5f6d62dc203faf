/** The public names the simulated connected world answers as, and the loopback address each resolves to inside its namespace. */

/** Registries: one distribution process (one storage, one certificate naming them all) answers for all of them. */
export const REGISTRY_HOSTS = ['quay.io', 'registry.k8s.io', 'registry-1.docker.io', 'ghcr.io'] as const;

/**
 * HTTPS file servers. dl.k8s.io redirects to cdn.dl.k8s.io, and GitHub's release downloads redirect to
 * release-assets.githubusercontent.com (objects.githubusercontent.com before 2025): the fixture answers the same way.
 * proxy.golang.org serves Go modules' source (OCM's manifests come from open-cluster-management.io/ocm's).
 */
export const FILE_HOSTS = [
  'dl.k8s.io',
  'cdn.dl.k8s.io',
  'github.com',
  'objects.githubusercontent.com',
  'release-assets.githubusercontent.com',
  'proxy.golang.org',
] as const;

/** Addresses unlikely to be taken on a shared machine (all of 127.0.0.0/8 is loopback on Linux). */
export const REGISTRY_ADDRESS = '127.0.77.1';
export const FILES_ADDRESS = '127.0.77.2';

/** The hosts file of the namespace: the simulated names first (the first match wins), then the host's own lines. */
export function hostsFile(hostHosts: string): string {
  return [
    '# ocm-lab test: the simulated connected world (this file exists only inside a private mount namespace)',
    `${REGISTRY_ADDRESS} ${REGISTRY_HOSTS.join(' ')}`,
    `${FILES_ADDRESS} ${FILE_HOSTS.join(' ')}`,
    hostHosts,
  ].join('\n');
}
