import { DEFAULT_ADDONS, SUPPORTED_KUBERNETES_VERSIONS, SUPPORTED_OCM_VERSIONS, type ClusterConfig, type LabConfig } from './types.js';

/** The seed-article topology: hub in vpc-1, cluster1 and cluster2 in vpc-2. */
export function defaultLabConfig(): LabConfig {
  return {
    name: 'default',
    kubernetesVersion: SUPPORTED_KUBERNETES_VERSIONS[0],
    ocmVersion: SUPPORTED_OCM_VERSIONS[0],
    network: {},
    vpcs: [{ name: 'vpc-1' }, { name: 'vpc-2' }],
    clusters: [
      { name: 'hub', vpc: 'vpc-1', hub: true },
      { name: 'cluster1', vpc: 'vpc-2', hub: false },
      { name: 'cluster2', vpc: 'vpc-2', hub: false },
    ],
    addons: [...DEFAULT_ADDONS],
    source: null,
  };
}

export function hubCluster(config: LabConfig): ClusterConfig {
  const hub = config.clusters.find((c) => c.hub);
  if (!hub) throw new Error(`lab ${config.name} has no hub cluster`);
  return hub;
}

export function spokeClusters(config: LabConfig): ClusterConfig[] {
  return config.clusters.filter((c) => !c.hub);
}
