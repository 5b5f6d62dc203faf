/**
 * The addons upstream's own build can stand in for (`implementation: upstream`; cluster-gateway's upstream build is
 * not part of the matrix). Not a list of the built-in addons (src/addons/registry.ts is the only one): which of them
 * have an upstream build is a fact of upstream's images and charts, and images/catalogue.ts and addons/upstream/
 * key their tables by it. test/unit/addon-registry-names.test.ts checks that each is a built-in addon.
 */
export const UPSTREAM_ADDONS = ['cluster-proxy', 'managed-serviceaccount'] as const;
export type UpstreamAddon = (typeof UPSTREAM_ADDONS)[number];

export function isUpstreamAddon(addon: string): addon is UpstreamAddon {
  return (UPSTREAM_ADDONS as readonly string[]).includes(addon);
}
