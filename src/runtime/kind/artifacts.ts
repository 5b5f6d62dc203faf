import type { LabConfig } from '../../config/index.js';
import type { HostFacts } from '../../host/facts.js';
import { KIND_NODE_BINARIES, OCM_BINARIES } from '../../provision/recipes.js';
import { binarySources, ocmImageSources, type ArtifactSource } from '../../provision/sources.js';
import { KIND_VERSION, officialNodeImage } from '../../provision/versions.js';
import { kindKubernetesSource } from './verdicts.js';

/**
 * What a kind lab fetches or builds on the path decided: kubectl and kind for this machine; kind's published node
 * image by digest where the engine can run it (official path), else the node image built here with its binaries;
 * OCM's images from quay.io, or built here from OCM's binaries.
 */
export function kindArtifacts(config: LabConfig, source: 'official' | 'build', facts: HostFacts): ArtifactSource[] {
  const versions = { kubernetes: config.kubernetesVersion, ocm: config.ocmVersion };
  const official = officialNodeImage(config.kubernetesVersion);
  const officialNode = source === 'official' && official !== undefined && kindKubernetesSource(config.kubernetesVersion, facts) === 'official-node';
  const node: ArtifactSource[] = officialNode
    ? [{ artifact: 'node image', version: official.kubernetes, from: 'image', image: official.tag, digest: official.digest }]
    : [
        {
          artifact: 'node image',
          version: config.kubernetesVersion,
          from: 'built here',
          builtFrom: `Debian packages and the binaries below (kind ${KIND_VERSION}'s base)`,
        },
        ...binarySources(
          KIND_NODE_BINARIES.filter((n) => n !== 'kubectl' && n !== 'kind'),
          source,
          versions,
          facts.platform,
        ),
      ];
  const ocm =
    source === 'official'
      ? ocmImageSources(config.ocmVersion, 'official')
      : [...ocmImageSources(config.ocmVersion, 'build'), ...binarySources(OCM_BINARIES, 'build', versions, facts.platform)];
  return [...binarySources(['kubectl', 'kind'], source, versions, facts.platform), ...node, ...ocm];
}
