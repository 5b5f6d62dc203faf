import { PUBLISHERS } from '../../provision/artifacts.js';
import { refuseUnknownOptions, stringOption } from '../options.js';
import type { RuntimeDefinition } from '../types.js';
import { kindKubernetesSource, kindVerdicts } from './verdicts.js';

/** kind clusters on one Docker network per VPC: `auto`'s first choice where a Docker engine and kind answer. Option: `nodeImage`. */
export const kindRuntime: RuntimeDefinition = {
  name: 'kind',
  autoRank: 1,
  available: async () => {
    const { kindAvailability } = await import('./availability.js');
    return kindAvailability();
  },
  create: async (options) => {
    refuseUnknownOptions('kind', options, ['nodeImage']);
    const nodeImage = stringOption('kind', options, 'nodeImage');
    const { KindRuntime } = await import('./runtime.js');
    return new KindRuntime(nodeImage);
  },
  prepare: () => import('./setup.js').then((m) => m.kindPreparation),
  imageRegistry: () => import('../../images/registry/control.js').then((m) => m.imageRegistryControl),
  // kubectl from dl.k8s.io, etcd and kind from GitHub, OCM's images from quay.io, the node image and the Node.js base from Docker Hub.
  officialSources: [PUBLISHERS.dlK8s, PUBLISHERS.github, PUBLISHERS.quay, PUBLISHERS.dockerHub],
  verdicts: kindVerdicts,
  kubernetesSource: kindKubernetesSource,
  usesEngine: true,
  artifacts: (config, source, facts) => import('./artifacts.js').then((m) => m.kindArtifacts(config, source, facts)),
};
