import type { LabConfig } from '../../config/index.js';
import type { HostFacts } from '../../host/facts.js';
import { binarySources, ocmImageSources, type ArtifactSource } from '../../provision/sources.js';

/** What a lab on existing clusters fetches: kubectl for this machine; the clusters pull OCM's images from quay.io themselves. */
export function existingArtifacts(config: LabConfig, source: 'official' | 'build', facts: HostFacts): ArtifactSource[] {
  const versions = { kubernetes: config.kubernetesVersion, ocm: config.ocmVersion };
  return [...binarySources(['kubectl'], source, versions, facts.platform), ...ocmImageSources(config.ocmVersion, 'official')];
}
