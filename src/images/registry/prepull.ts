import { docker } from '../docker.js';
import { OCM_UPSTREAM_IMAGES, ocmImage, SPOKE_OCM_IMAGES } from '../catalogue.js';

/**
 * What a new node pulls from the registry while OCM installs, in the order its pods need them: OCM's images first (a spoke
 * runs only the klusterlet's), then the rest (ours, upstream addons'). Pods pull IfNotPresent, so each then starts from
 * what is on the node instead of waiting for its pull (what the registry cost against `kind load`: docs/measured/kind.md).
 */
export function prepullOrder(images: readonly string[], ocmVersion: string, hub: boolean): string[] {
  const ocm = OCM_UPSTREAM_IMAGES.map((i) => ({ ref: ocmImage(i.image, ocmVersion), onSpoke: SPOKE_OCM_IMAGES.includes(i.image) }));
  const ocmRefs = new Set(ocm.map((i) => i.ref));
  const ocmForNode = ocm.filter((i) => hub || i.onSpoke).map((i) => i.ref);
  return [...ocmForNode.filter((ref) => images.includes(ref)), ...images.filter((ref) => !ocmRefs.has(ref))];
}

/** One pull from the lab's registry takes seconds; a pull stuck longer (its upstream fallback not answering) is left to the kubelet. */
const PULL_TIMEOUT_MS = 120_000;

export interface PrepullNode {
  container: string;
  hub: boolean;
}

/**
 * Starts the pulls of every node (nodes side by side, one image at a time in each) and resolves when all have ended, never
 * rejecting: a pull that fails leaves the image to the kubelet, which pulls it when a pod needs it (and reports its error).
 * `signal` ends the pulls not yet done (a failed `up` removes the nodes anyway); each pull is bounded by PULL_TIMEOUT_MS.
 */
export function startPrepulls(nodes: readonly PrepullNode[], images: readonly string[], ocmVersion: string, signal: AbortSignal): Promise<string[]> {
  return Promise.all(
    nodes.map(async (node) => {
      let pulled = 0;
      for (const ref of prepullOrder(images, ocmVersion, node.hub)) {
        if (signal.aborted) break;
        const bounded = AbortSignal.any([signal, AbortSignal.timeout(PULL_TIMEOUT_MS)]);
        const r = await docker(['exec', node.container, 'crictl', 'pull', ref], { allowFailure: true, signal: bounded }).catch(() => null);
        if (r?.exitCode === 0) pulled++;
      }
      return `${node.container}: ${pulled} pulled`;
    }),
  );
}
