import { InvalidInputError } from '../errors.js';
import { clusterKubeconfigFile } from '../paths.js';
import { kubernetesFields } from './kubernetes-version.js';
import { DEFAULT_ADDONS, DEFAULT_OCM_VERSION, type ClusterConfig, type LabConfig } from './types.js';

/** The seed-article topology: hub in vpc-1, cluster1 and cluster2 in vpc-2. A fresh object on every call. */
export function defaultLabConfig(): LabConfig {
  return {
    name: 'default',
    ...kubernetesFields(undefined),
    ocmVersion: DEFAULT_OCM_VERSION,
    network: {},
    vpcs: [{ name: 'vpc-1' }, { name: 'vpc-2' }],
    clusters: [
      { name: 'hub', vpc: 'vpc-1', hub: true },
      { name: 'cluster1', vpc: 'vpc-2', hub: false },
      { name: 'cluster2', vpc: 'vpc-2', hub: false },
    ],
    addons: [...DEFAULT_ADDONS],
    addonImplementations: {},
    source: null,
    clusterProfile: true,
  };
}

/** The hub cluster; a validated config has exactly one. */
export function hubCluster(config: LabConfig): ClusterConfig {
  const hubs = config.clusters.filter((c) => c.hub);
  if (hubs.length !== 1) {
    throw new InvalidInputError(
      `lab '${config.name}' has ${hubs.length} hub clusters${hubs.length ? ` (${hubs.map((h) => h.name).join(', ')})` : ''}; exactly one must have hub: true`,
    );
  }
  return hubs[0]!;
}

/** The hub's admin kubeconfig of a lab (every runtime writes it there). */
export function hubAdminKubeconfig(config: LabConfig): string {
  return clusterKubeconfigFile(config.name, hubCluster(config).name);
}

/** The managed clusters, in file order. */
export function spokeClusters(config: LabConfig): ClusterConfig[] {
  return config.clusters.filter((c) => !c.hub);
}
