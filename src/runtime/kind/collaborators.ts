import type { LabConfig } from '../../config/index.js';
import { cniConflist, ensureKindNodeImage, nodeImageRef } from './images/index.js';
import { ensureLabImages, labImages } from '../../images/lab-images.js';

/**
 * What the kind runtime takes from its neighbours in this folder: the node
 * image and CNI config (images/) and the lab's own images (lab-images.ts),
 * behind one small interface so plans can be made (and tested) without
 * building anything.
 */
export interface Collaborators {
  nodeImageName(kubernetesVersion: string): string;
  ensureNodeImage(kubernetesVersion: string, onProgress: (line: string) => void): Promise<string>;
  cniConflist(podSubnet: string, serviceSubnet: string, extraRoutes: string[]): string;
  labImages(config: LabConfig): string[];
  ensureLabImages(config: LabConfig, onProgress: (line: string) => void): Promise<string[]>;
}

export async function loadCollaborators(): Promise<Collaborators> {
  return {
    // One Kubernetes version is supported; the node image is built for it.
    nodeImageName: (version) => nodeImageRef(version),
    ensureNodeImage: (version, onProgress) => ensureKindNodeImage({ onProgress, kubernetesVersion: version }),
    cniConflist: (podSubnet, serviceSubnet, extraRoutes) => cniConflist(podSubnet, { serviceSubnet, extraRoutes }),
    labImages: (config) => labImages(config),
    ensureLabImages: (config, onProgress) => ensureLabImages(config, { onProgress }),
  };
}
