/**
 * The built-in addons by name: what a lab file, a scenario and `addon enable` may name. A leaf
 * (it imports nothing) because config/ sits below addons/ and cannot import the addons'
 * registry; each name has its definition in src/addons/registry.ts, whose type makes the
 * compiler demand an entry for every name here and refuse one for a name not here.
 * helloworld: the addon-framework's example addon (seed 003), ocm-lab's build only, not in the default set.
 */
export const ADDON_NAMES = ['cluster-proxy', 'managed-serviceaccount', 'cluster-gateway', 'helloworld'] as const;
export type AddonName = (typeof ADDON_NAMES)[number];

/** The addons upstream's own build can stand in for (`implementation: upstream`; cluster-gateway's upstream build is not part of the matrix). */
export const UPSTREAM_ADDONS = ['cluster-proxy', 'managed-serviceaccount'] as const satisfies readonly AddonName[];
export type UpstreamAddon = (typeof UPSTREAM_ADDONS)[number];

export function isUpstreamAddon(addon: string): addon is UpstreamAddon {
  return (UPSTREAM_ADDONS as readonly string[]).includes(addon);
}
