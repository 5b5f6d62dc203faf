import { InvalidInputError } from '../errors.js';
import { SUPPORTED_KUBERNETES_VERSIONS, type LabConfig } from './types.js';

/**
 * The lab with `--kubernetes-version` applied (unchanged without one). A
 * version the lab cannot run is bad input (exit 2) that lists the ones it can.
 */
export function withKubernetesVersion(config: LabConfig, version: string | undefined): LabConfig {
  if (version === undefined) return config;
  const wanted = version.startsWith('v') ? version : `v${version}`;
  if (!(SUPPORTED_KUBERNETES_VERSIONS as readonly string[]).includes(wanted)) {
    const minor = /^v(\d+\.\d+)(?:\.\d+)?$/.exec(wanted)?.[1];
    const sameMinor = minor ? SUPPORTED_KUBERNETES_VERSIONS.find((v) => v.startsWith(`v${minor}.`)) : undefined;
    throw new InvalidInputError(
      `--kubernetes-version ${version}: not a Kubernetes version ocm-lab can run; supported: ${SUPPORTED_KUBERNETES_VERSIONS.join(', ')}`,
      {
        hint: sameMinor
          ? `for Kubernetes ${minor}, use --kubernetes-version ${sameMinor}`
          : `use one of ${SUPPORTED_KUBERNETES_VERSIONS.join(', ')} (the first is the default)`,
      },
    );
  }
  return { ...config, kubernetesVersion: wanted };
}
