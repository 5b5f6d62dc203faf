import { createHash } from 'node:crypto';
import { InvalidInputError } from '../../errors.js';

/** Label on every object `addon dev` creates, valued with the addon's name: what removal looks for. */
export const DEV_ADDON_LABEL = 'ocm-lab.io/dev-addon';
/** Pod-template annotation with the code bundle's hash: a new bundle rolls the pods. */
export const CODE_HASH_ANNOTATION = 'ocm-lab.io/addon-code-hash';

/** Where the code ConfigMap is mounted in manager and agent pods. */
export const CODE_MOUNT = '/addon';
export const MANAGER_FILE = 'manager.mjs';
export const AGENT_FILE = 'agent.mjs';
/** Where an addon's own image keeps its bundles (`ocm-lab addon build`, run by the project's Dockerfile). */
export const IMAGE_CODE_DIR = '/addon';

/**
 * The code hash of an addon run from its image (`addon dev --image`): the image reference, so a new tag rolls the pods.
 * The manager and `addon dev` compute it alike, one from its flag and one from its option.
 */
export const imageCodeHash = (image: string) => codeHash(`image:${image}`);

/** What an agent finds in its environment (set on its Deployment by agentWorkload). */
export const AGENT_ENV = {
  addonName: 'OCM_LAB_ADDON_NAME',
  clusterName: 'OCM_LAB_CLUSTER_NAME',
  installNamespace: 'OCM_LAB_INSTALL_NAMESPACE',
  hubKubeconfig: 'OCM_LAB_HUB_KUBECONFIG',
  codeHash: 'OCM_LAB_ADDON_CODE_HASH',
} as const;

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** Longest name whose derived object names (`<name>-addon-manager-<hash>`) stay within 63 characters. */
const MAX_ADDON_NAME = 30;

/** Why `name` cannot name an addon, or null when it can. */
export function addonNameProblem(name: string): string | null {
  if (!DNS1123_LABEL.test(name))
    return `addon name ${JSON.stringify(name)} is not a DNS-1123 label: lower-case letters, digits and '-', starting and ending with a letter or digit`;
  if (name.length > MAX_ADDON_NAME)
    return (
      `addon name ${JSON.stringify(name)} has ${name.length} characters; ` +
      `at most ${MAX_ADDON_NAME} (object names derived from it must stay DNS-1123 labels)`
    );
  return null;
}

export function validateAddonName(name: string): string {
  const problem = addonNameProblem(name);
  if (problem) throw new InvalidInputError(problem, { hint: 'e.g. ocm-lab addon new demo' });
  return name;
}

/** A short content hash of a bundle. */
export function codeHash(code: string): string {
  return createHash('sha256').update(code).digest('hex').slice(0, 16);
}

export const managerDeploymentName = (addon: string) => `${addon}-addon-manager`;
/** Hub ConfigMap with the manager bundle, named after its hash so a pod never mounts a half-updated one. */
export const managerCodeConfigMapName = (addon: string, hash: string) => `${addon}-addon-manager-${hash.slice(0, 10)}`;
/** Hub ConfigMap with the agent bundle; the manager reads it through the API on every pass. */
export const agentCodeHubConfigMapName = (addon: string) => `${addon}-addon-agent-code`;
/** Spoke ConfigMap (in the ManifestWork) with the agent bundle, named after its hash. */
export const agentCodeConfigMapName = (addon: string, hash: string) => `${addon}-agent-${hash.slice(0, 10)}`;
export const agentDeploymentName = (addon: string) => `${addon}-agent`;
