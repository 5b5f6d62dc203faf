import { InvalidInputError } from '../../errors.js';
import type { RuntimeDefinition } from '../types.js';
import type { ExistingClustersInput } from './contexts.js';
import { ExistingRuntime } from './runtime.js';

function stringOption(options: Record<string, unknown>, key: string): string | undefined {
  const value = options[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !value) throw new InvalidInputError(`runtime option existing.${key} must be a non-empty string`);
  return value;
}

/**
 * The existing runtime's options (the lab file's `runtime.existing`, or the
 * flags of `up`): the kubeconfig and which of its contexts are the hub and the
 * spokes. None: the lab reuses what it recorded.
 */
export function existingInput(options: Record<string, unknown>): ExistingClustersInput | undefined {
  const unknown = Object.keys(options).filter((k) => !['kubeconfig', 'hubContext', 'spokeContexts'].includes(k));
  if (unknown.length)
    throw new InvalidInputError(`unknown runtime option existing.${unknown[0]}; the existing runtime takes kubeconfig, hubContext and spokeContexts`);
  const kubeconfig = stringOption(options, 'kubeconfig');
  const hubContext = stringOption(options, 'hubContext');
  const spokes = options.spokeContexts ?? [];
  if (!Array.isArray(spokes) || spokes.some((s) => typeof s !== 'string' || !s))
    throw new InvalidInputError('runtime option existing.spokeContexts must be a list of context names');
  if (kubeconfig === undefined && hubContext === undefined && spokes.length === 0) return undefined;
  if (!kubeconfig || !hubContext) {
    throw new InvalidInputError('--runtime existing needs --kubeconfig FILE and --hub-context CTX (and a --spoke-context CTX per spoke)', {
      hint: 'ocm-lab up --runtime existing --kubeconfig ~/.kube/config --hub-context hub --spoke-context cluster1 --spoke-context cluster2',
    });
  }
  return { kubeconfig, hubContext, spokeContexts: spokes as string[] };
}

/** Clusters the user already has, reached through contexts of their kubeconfig: never picked by `auto`. */
export const existingRuntime: RuntimeDefinition = {
  name: 'existing',
  create: (options) => new ExistingRuntime(existingInput(options)),
};
