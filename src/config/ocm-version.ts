import { InvalidInputError } from '../errors.js';
import { ocmOnKubernetesProblem } from '../provision/versions.js';
import { SUPPORTED_OCM_VERSIONS, type LabConfig } from './types.js';

/** The supported OCM release `given` names: itself, or for a minor (`v1.3`, `1.3`) its newest patch; undefined when none. */
export function resolveOcmVersion(given: string): string | undefined {
  const wanted = given.startsWith('v') ? given : `v${given}`;
  if (SUPPORTED_OCM_VERSIONS.includes(wanted)) return wanted;
  // Newest first, so the first of the minor is its newest patch.
  return /^v\d+\.\d+$/.test(wanted) ? SUPPORTED_OCM_VERSIONS.find((v) => v.startsWith(`${wanted}.`)) : undefined;
}

/** What to say about an OCM version the lab cannot run. */
export const OCM_VERSION_CHOICES = `supported: ${SUPPORTED_OCM_VERSIONS.join(', ')} (or a minor such as v1.3 for its newest patch)`;

/** The lab with `--ocm-version` applied (unchanged without one); a version the lab cannot run is bad input (exit 2). */
export function withOcmVersion(config: LabConfig, version: string | undefined): LabConfig {
  if (version === undefined) return config;
  const resolved = resolveOcmVersion(version);
  if (!resolved) {
    throw new InvalidInputError(`--ocm-version ${version}: not an OCM version ocm-lab can run; ${OCM_VERSION_CHOICES}`, {
      hint: 'use one of them; `ocm-lab versions` lists them beside the Kubernetes versions each runs on',
    });
  }
  return { ...config, ocmVersion: resolved };
}

/** Refuses (exit 2) a lab whose OCM does not run on its Kubernetes, naming both and why. */
export function checkOcmOnKubernetes(config: LabConfig): LabConfig {
  const problem = ocmOnKubernetesProblem(config.ocmVersion, config.kubernetesVersion);
  if (problem) {
    throw new InvalidInputError(`OCM ${config.ocmVersion} on Kubernetes ${config.kubernetesVersion}: ${problem}`, {
      hint: '`ocm-lab versions` lists which OCM runs on which Kubernetes; choose another --kubernetes-version or --ocm-version',
    });
  }
  return config;
}
