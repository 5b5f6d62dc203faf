/** The public names the simulated connected world answers as, and the loopback address each resolves to inside its namespace. */

/** Registries: one distribution process (one storage, one certificate naming them all) answers for all of them. */
export const REGISTRY_HOSTS = ['quay.io', 'registry.k8s.io', 'registry-1.docker.io', 'ghcr.io'] as const;

/**
 * HTTPS file servers. dl.k8s.io redirects to cdn.dl.k8s.io, and GitHub's release downloads redirect to
 * release-assets.githubusercontent.com (objects.githubusercontent.com before 2025): the fixture answers the same way.
 * proxy.golang.org serves Go modules' source (OCM's manifests come from open-cluster-management.io/ocm's);
 * registry.npmjs.org serves ocm-lab's dependencies to `npx <tarball>`.
 */
export const FILE_HOSTS = [
  'dl.k8s.io',
  'cdn.dl.k8s.io',
  'github.com',
  'objects.githubusercontent.com',
  'release-assets.githubusercontent.com',
  'proxy.golang.org',
  'registry.npmjs.org',
] as const;

/** Where the world's servers listen: the registry hosts resolve to `registry`, the file hosts to `files`. */
export interface WorldAddresses {
  registry: string;
  files: string;
}

/**
 * Addresses unlikely to be taken on a shared machine (all of 127.0.0.0/8 is loopback on Linux). A second world on the
 * same machine at the same time (another test file, a benchmark) passes addresses of its own.
 */
export const DEFAULT_ADDRESSES: WorldAddresses = { registry: '127.0.77.1', files: '127.0.77.2' };

/** Where one of the world's public names is served (null for a name the world does not answer as). */
export function worldAddressOf(host: string, addresses: WorldAddresses): string | null {
  if ((REGISTRY_HOSTS as readonly string[]).includes(host)) return addresses.registry;
  if ((FILE_HOSTS as readonly string[]).includes(host)) return addresses.files;
  return null;
}

/** The hosts file of the namespace: the simulated names first (the first match wins), then the host's own lines. */
export function hostsFile(hostHosts: string, addresses: WorldAddresses): string {
  return [
    '# ocm-lab test: the simulated connected world (this file exists only inside a private mount namespace)',
    `${addresses.registry} ${REGISTRY_HOSTS.join(' ')}`,
    `${addresses.files} ${FILE_HOSTS.join(' ')}`,
    hostHosts,
  ].join('\n');
}
