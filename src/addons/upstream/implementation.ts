import type { LabConfig } from '../../config/index.js';
import { isUpstreamAddon, type UpstreamAddon } from './names.js';

/**
 * Does the lab run upstream's build of `addon` (a lab file's
 * `{name: …, implementation: upstream}`)? Only cluster-proxy and
 * managed-serviceaccount have one; a lab recorded before the field existed runs ours.
 */
export function runsUpstream(config: Pick<LabConfig, 'addonImplementations'>, addon: string): addon is UpstreamAddon {
  return isUpstreamAddon(addon) && config.addonImplementations?.[addon] === 'upstream';
}
