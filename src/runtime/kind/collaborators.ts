import type { LabConfig } from '../../config/index.js';
import { OCM_LAB_IMAGE } from '../../images/catalogue.js';
import { ensureKindNodeImage, nodeImageRef } from './images/index.js';
import { chooseNodeImage, pullOfficialNode } from './images/official-node.js';
import { ensureLabImages, ensureOwnImage, labImages } from '../../images/lab-images.js';
import type { ArtifactsMode } from '../../provision/artifacts.js';
import type { Mirrors } from '../../provision/mirrors.js';

/** Where the kind runtime's images come from, as `up` decided (provision/artifacts.ts). */
export interface ImageSources {
  artifacts: ArtifactsMode;
  mirrors: Mirrors;
}

/** The lab's images once made: `local` ones are in the Docker engine, `upstream` ones are to be copied from their registries. */
export interface LabImageSet {
  local: string[];
  upstream: string[];
}

/**
 * What the kind runtime takes from its neighbours in this folder: the node
 * image (images/) and the lab's own images (lab-images.ts),
 * behind one small interface so plans can be made (and tested) without
 * building anything.
 */
export interface Collaborators {
  nodeImageName(kubernetesVersion: string): string;
  /** The node image clusters start from (kind's published one by digest, or built here), the line saying which and why, and whether it was built here. */
  ensureNodeImage(config: LabConfig, sources: ImageSources, onProgress: (line: string) => void): Promise<NodeImage>;
  labImages(config: LabConfig): string[];
  /** Under `build`, every lab image built here; otherwise ocm-lab:<version> (FROM the official Node.js image) and the rest left to copy. */
  ensureLabImages(config: LabConfig, sources: ImageSources, onProgress: (line: string) => void): Promise<LabImageSet>;
  /** The upstream images built here (the fallback under `auto` when their registry does not answer). */
  buildLabImages(config: LabConfig, onProgress: (line: string) => void): Promise<void>;
}

/** A node image, and whether it is the one built here (the only one with Debian's full set of CNI plugins: images/cni.ts). */
interface NodeImage {
  ref: string;
  line: string;
  built: boolean;
}

async function ensureNodeImage(config: LabConfig, sources: ImageSources, onProgress: (line: string) => void): Promise<NodeImage> {
  const choice = await chooseNodeImage(config, sources.artifacts, sources.mirrors);
  onProgress(choice.line);
  if (choice.source === 'official') {
    const ref = await pullOfficialNode(choice, sources.artifacts, sources.mirrors, onProgress);
    if (ref) return { ref, line: choice.line, built: false };
  }
  const ref = await ensureKindNodeImage({ onProgress, kubernetesVersion: config.kubernetesVersion });
  return { ref, line: choice.source === 'official' ? `node image: built here (${choice.ref} could not be pulled)` : choice.line, built: true };
}

export async function loadCollaborators(): Promise<Collaborators> {
  return {
    // One Kubernetes version is supported; the node image is built for it.
    nodeImageName: (version) => nodeImageRef(version),
    ensureNodeImage,
    labImages: (config) => labImages(config),
    ensureLabImages: async (config, sources, onProgress) => {
      if (sources.artifacts === 'build') return { local: await ensureLabImages(config, { onProgress }), upstream: [] };
      const own = await ensureOwnImage({ onProgress, ownBase: { kind: 'official', mirrors: sources.mirrors } }).catch(async (err: unknown) => {
        if (sources.artifacts === 'official') throw err;
        onProgress(`${OCM_LAB_IMAGE}: ${(err as Error).message}; building it FROM the lab's own base instead`);
        return ensureOwnImage({ onProgress });
      });
      return { local: [own.ref], upstream: labImages(config).filter((i) => i !== own.ref) };
    },
    buildLabImages: async (config, onProgress) => {
      await ensureLabImages(config, { onProgress });
    },
  };
}
