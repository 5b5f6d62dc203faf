import YAML from 'yaml';
import { API_VERSION, clusterProfileEnabled, KIND, type LabConfig } from './types.js';

/** The lab as lab-file YAML, with every default written out; parseLabConfig reads it back to an equal config. */
export function renderLabConfig(config: LabConfig): string {
  return YAML.stringify({
    apiVersion: API_VERSION,
    kind: KIND,
    name: config.name,
    kubernetesVersion: config.kubernetesRequest ?? config.kubernetesVersion,
    ocmVersion: config.ocmVersion,
    ...(config.network.cidr === undefined ? {} : { network: { cidr: config.network.cidr } }),
    vpcs: config.vpcs.map((v) => ({ name: v.name })),
    clusters: config.clusters.map((c) => (c.hub ? { name: c.name, vpc: c.vpc, hub: true } : { name: c.name, vpc: c.vpc })),
    addons: config.addons.map((name) => (config.addonImplementations[name] === 'upstream' ? { name, implementation: 'upstream' } : name)),
    clusterProfile: clusterProfileEnabled(config),
    ...(config.clusterProxy ? { clusterProxy: { entrypoint: config.clusterProxy.entrypoint } } : {}),
    ...(config.artifacts ? { artifacts: config.artifacts } : {}),
    ...(config.mirrorsFile ? { mirrors: config.mirrorsFile } : {}),
    ...(config.ocmSource ? { ocmSource: config.ocmSource } : {}),
    ...(config.runtime ? { runtime: { ...(config.runtime.name === undefined ? {} : { name: config.runtime.name }), ...config.runtime.options } } : {}),
  });
}
