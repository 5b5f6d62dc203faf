import type { LabConfig } from '../../config/index.js';
import type { HostFacts } from '../../host/facts.js';
import { OCM_LAB_IMAGE } from '../../images/catalogue.js';
import { OFFICIAL_NODE_BASE } from '../../images/lab-images.js';
import { parseReference } from '../../provision/oci/reference.js';
import { KIND_NODE_BINARIES, OCM_BINARIES } from '../../provision/recipes.js';
import { binarySources, ocmImageSources, type ArtifactSource } from '../../provision/sources.js';
import { KIND_VERSION, officialNodeImage } from '../../provision/versions.js';
import { OFFICIAL_REGISTRY_IMAGE } from '../../images/registry/image.js';
import { kindKubernetesSource } from './verdicts.js';

/**
 * What a kind lab fetches or builds on the path decided: kubectl and kind for this machine; kind's published node
 * image by digest where the engine can run it (official path), else the node image built here with its binaries;
 * OCM's images from quay.io, or built here from OCM's binaries; ocm-lab's own image, built here on the official
 * Node.js image by digest or on the lab's Debian base; the image registry's image, distribution's by digest or
 * built here. (A mirrors file's digests: may replace these pins at `up`; the dry run shows the built-in ones.)
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
  const tag = parseReference(OCM_LAB_IMAGE).tag ?? '';
  const own: ArtifactSource[] =
    source === 'official'
      ? [
          { artifact: 'Node.js base image', version: parseReference(OFFICIAL_NODE_BASE.name).tag ?? '', from: 'image', ...pinned(OFFICIAL_NODE_BASE) },
          { artifact: `${OCM_LAB_IMAGE} image`, version: tag, from: 'built here', builtFrom: 'the Dockerfile on the Node.js base image above' },
          { artifact: 'registry image', version: '2.8.3', from: 'image', ...pinned(OFFICIAL_REGISTRY_IMAGE) },
        ]
      : [
          {
            artifact: `${OCM_LAB_IMAGE} image`,
            version: tag,
            from: 'built here',
            builtFrom: "the Dockerfile on the lab's Debian base with this machine's node",
          },
          { artifact: 'registry image', version: '2', from: 'built here', builtFrom: "Debian's docker-registry package on the lab's Debian base" },
        ];
  return [...binarySources(['kubectl', 'kind'], source, versions, facts.platform), ...node, ...ocm, ...own];
}

function pinned(image: { name: string; digest: string }): { image: string; digest: string } {
  return { image: image.name, digest: image.digest };
}
