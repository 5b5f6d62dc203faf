import os from 'node:os';
import path from 'node:path';
import { InvalidInputError } from '../../errors.js';
import { PUBLISHERS } from '../../provision/artifacts.js';
import { refuseUnknownOptions, stringOption } from '../options.js';
import type { RuntimeDefinition } from '../types.js';
import type { ExistingClustersInput } from './contexts.js';
import { parseImageRegistry } from '../../images/user-registry.js';
import { parseHubServer } from './hub-server.js';

/**
 * The existing runtime's options (the lab file's `runtime.existing`, or the
 * flags of `up`): the kubeconfig and which of its contexts are the hub and the
 * spokes, the registry our image goes to and the hub's address for spokes. None: the lab reuses what it recorded.
 */
export function existingInput(options: Record<string, unknown>): ExistingClustersInput | undefined {
  refuseUnknownOptions('existing', options, ['kubeconfig', 'hubContext', 'spokeContexts', 'imageRegistry', 'hubServer']);
  const given = stringOption('existing', options, 'kubeconfig');
  // `~/…` as a shell would expand it: the lab file is not read by a shell.
  const kubeconfig = given?.startsWith('~/') ? path.join(os.homedir(), given.slice(2)) : given;
  const hubContext = stringOption('existing', options, 'hubContext');
  const spokes = options.spokeContexts ?? [];
  if (!Array.isArray(spokes) || spokes.some((s) => typeof s !== 'string' || !s))
    throw new InvalidInputError(`runtime.existing.spokeContexts must be a list of context names, not ${JSON.stringify(spokes)}`);
  const registry = stringOption('existing', options, 'imageRegistry');
  const imageRegistry = registry === undefined ? undefined : parseImageRegistry(registry);
  const server = stringOption('existing', options, 'hubServer');
  const hubServer = server === undefined ? undefined : parseHubServer(server);
  if (kubeconfig === undefined && hubContext === undefined && spokes.length === 0 && imageRegistry === undefined && hubServer === undefined) return undefined;
  if (!kubeconfig || !hubContext) {
    throw new InvalidInputError('--runtime existing needs --kubeconfig FILE and --hub-context CTX (and a --spoke-context CTX per spoke)', {
      hint: 'ocm-lab up --runtime existing --kubeconfig ~/.kube/config --hub-context hub --spoke-context cluster1 --spoke-context cluster2',
    });
  }
  return { kubeconfig, hubContext, spokeContexts: spokes as string[], ...(imageRegistry ? { imageRegistry } : {}), ...(hubServer ? { hubServer } : {}) };
}

/** Clusters the user already has, reached through contexts of their kubeconfig: never picked by `auto`. */
export const existingRuntime: RuntimeDefinition = {
  name: 'existing',
  create: async (options) => {
    const input = existingInput(options);
    const { ExistingRuntime } = await import('./runtime.js');
    return new ExistingRuntime(input);
  },
  // kubectl from dl.k8s.io, OCM's images from quay.io (the clusters are the user's).
  officialSources: [PUBLISHERS.dlK8s, PUBLISHERS.quay],
  // The clusters are the user's: nothing of this machine decides whether they run.
  verdicts: () => [],
  artifacts: (config, source, facts) => import('./artifacts.js').then((m) => m.existingArtifacts(config, source, facts)),
};
