import { addonImplementation, type LabConfig } from '../../config/types.js';
import { ALL_BINARIES, OCM_BINARIES, type BinaryName } from '../../provision/index.js';
import { UPSTREAM_ADDON_BINARIES } from '../../provision/recipes.js';
/** The binaries of upstream's addon images, for the addons the lab runs from upstream's build (none for a lab of ours). */
function upstreamAddonBinaries(config: LabConfig): BinaryName[] {
  return Object.entries(UPSTREAM_ADDON_BINARIES)
    .filter(([addon]) => config.addons.includes(addon) && addonImplementation(config, addon) === 'upstream')
    .flatMap(([, binaries]) => [...binaries]);
}

/**
 * Every binary a local lab runs, provisioned by its Binaries step: Kubernetes, etcd, OCM, upstream's
 * addons where chosen, and `extra` (UpOptions.extraImageBinaries).
 */
export function labBinaryNames(config: LabConfig, extra: readonly BinaryName[] = []): BinaryName[] {
  return [...new Set([...ALL_BINARIES, ...upstreamAddonBinaries(config), ...extra])];
}

/** The binaries the nodelet maps images to (`--image-binary`): OCM's, and upstream's addons' where chosen. */
export function imageBinaryNames(config: LabConfig, extra: readonly BinaryName[] = []): BinaryName[] {
  return [...new Set([...OCM_BINARIES, ...upstreamAddonBinaries(config), ...extra])];
}
