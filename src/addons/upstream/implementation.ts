import { addonImplementation, type LabConfig } from '../../config/index.js';
import { isUpstreamAddon, type UpstreamAddon } from './names.js';

/** Does the lab run upstream's build of `addon`? Only cluster-proxy and managed-serviceaccount have one. */
export function runsUpstream(config: Partial<Pick<LabConfig, 'addonImplementations'>>, addon: string): addon is UpstreamAddon {
  return isUpstreamAddon(addon) && addonImplementation(config, addon) === 'upstream';
}
