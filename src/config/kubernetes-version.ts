import { InvalidInputError } from '../errors.js';
import { describeOffers, minorOf, releaseOfRequest } from '../provision/versions.js';
import { KUBERNETES_VERSION_CHOICES, SUPPORTED_KUBERNETES_VERSIONS, type LabConfig } from './types.js';

/**
 * The config fields of a written Kubernetes version (already validated): the built patch, and what was
 * written; nothing written asks for the newest minor, which either source gives. An exact patch is kept as
 * written too, even the built one: on kind's official path it is what makes `v1.37.2` mean that patch
 * (built here) rather than whichever patch kind's node image runs.
 */
export function kubernetesFields(written: string | undefined): Pick<LabConfig, 'kubernetesVersion' | 'kubernetesRequest'> {
  const release = written === undefined ? undefined : releaseOfRequest(written);
  if (!release) return { kubernetesVersion: SUPPORTED_KUBERNETES_VERSIONS[0], kubernetesRequest: minorOf(SUPPORTED_KUBERNETES_VERSIONS[0]) };
  return { kubernetesVersion: release.kubernetes, kubernetesRequest: written as string };
}

/**
 * The lab with `--kubernetes-version` applied (unchanged without one). A
 * version the lab cannot run is bad input (exit 2) that lists the ones it can.
 */
export function withKubernetesVersion(config: LabConfig, version: string | undefined): LabConfig {
  if (version === undefined) return config;
  const wanted = version.startsWith('v') ? version : `v${version}`;
  if (!(KUBERNETES_VERSION_CHOICES as readonly string[]).includes(wanted)) {
    const minor = /^v(\d+\.\d+)(?:\.\d+)?$/.exec(wanted)?.[1];
    const sameMinor = minor ? releaseOfRequest(`v${minor}`) : undefined;
    throw new InvalidInputError(
      `--kubernetes-version ${version}: not a Kubernetes version ocm-lab can run; ` +
        `supported: ${SUPPORTED_KUBERNETES_VERSIONS.join(', ')} (or their minors, v1.37 …)`,
      {
        hint: sameMinor
          ? `for Kubernetes ${minor}, use --kubernetes-version v${minor} (${describeOffers(sameMinor)})`
          : `use one of ${SUPPORTED_KUBERNETES_VERSIONS.join(', ')} (the first is the default), or a minor such as v1.36`,
      },
    );
  }
  const { kubernetesRequest: _previous, ...rest } = config;
  return { ...rest, ...kubernetesFields(wanted) };
}
