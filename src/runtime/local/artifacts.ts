import type { LabConfig } from '../../config/index.js';
import type { HostFacts } from '../../host/facts.js';
import { binarySources, type ArtifactSource } from '../../provision/sources.js';
import { labBinaryNames } from './lab-binaries.js';

/** What a local lab fetches or builds: every binary its Binaries step provisions (OCM's out of its quay.io images on the official path). */
export function localArtifacts(config: LabConfig, source: 'official' | 'build', facts: HostFacts): ArtifactSource[] {
  return binarySources(labBinaryNames(config), source, { kubernetes: config.kubernetesVersion, ocm: config.ocmVersion }, facts.platform);
}
