import { PUBLISHERS } from '../../provision/artifacts.js';
import { refuseUnknownOptions } from '../options.js';
import type { RuntimeDefinition } from '../types.js';
import { localVerdicts } from './verdicts.js';

/** Real control planes as processes in network namespaces, a nodelet as each cluster's node: `auto`'s choice where kind is not usable. */
export const localRuntime: RuntimeDefinition = {
  name: 'local',
  autoRank: 2,
  create: async (options) => {
    refuseUnknownOptions('local', options, []);
    const { LocalRuntime } = await import('./runtime.js');
    return new LocalRuntime();
  },
  // Kubernetes' binaries from dl.k8s.io, etcd from GitHub, OCM's binaries out of its quay.io images.
  officialSources: [PUBLISHERS.dlK8s, PUBLISHERS.github, PUBLISHERS.quay],
  verdicts: localVerdicts,
  artifacts: (config, source, facts) => import('./artifacts.js').then((m) => m.localArtifacts(config, source, facts)),
};
