import { withKubernetesVersion } from './kubernetes-version.js';
import { checkOcmOnKubernetes, withOcmVersion } from './ocm-version.js';
import type { LabConfig } from './types.js';

/** The lab with `--kubernetes-version` and `--ocm-version` applied, refused (exit 2) when its OCM does not run on its Kubernetes. */
export function withVersionFlags(config: LabConfig, flags: { 'kubernetes-version'?: string | undefined; 'ocm-version'?: string | undefined }): LabConfig {
  return checkOcmOnKubernetes(withOcmVersion(withKubernetesVersion(config, flags['kubernetes-version']), flags['ocm-version']));
}
