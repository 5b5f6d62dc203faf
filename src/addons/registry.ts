import type { AddonName } from '../config/types.js';
import type { BuiltinAddon } from './builtin.js';
import { clusterProxyBuiltin } from './cluster-proxy/builtin.js';
import { managedServiceAccountBuiltin } from './managed-serviceaccount/builtin.js';
import { clusterGatewayBuiltin } from './cluster-gateway/builtin.js';
import { helloworldBuiltin } from './helloworld/builtin.js';

/**
 * Every built-in addon, one line each (as runtime/registry.ts): an addon is its folder under
 * src/addons/ (with a light builtin.ts, addons/builtin.ts says what it holds) and its line here.
 * The key type makes the compiler demand a line for each name of config/addon-names.ts (what a
 * lab file may name; config/ cannot import this) and refuse a name not there. The order is the
 * order `up` lists them in.
 */
export const BUILTIN_ADDONS: Record<AddonName, BuiltinAddon> = {
  'cluster-proxy': clusterProxyBuiltin,
  'managed-serviceaccount': managedServiceAccountBuiltin,
  'cluster-gateway': clusterGatewayBuiltin,
  helloworld: helloworldBuiltin,
};

/** The built-in addons, in registry order. */
export function builtinAddons(): BuiltinAddon[] {
  return Object.values(BUILTIN_ADDONS);
}

export function builtinAddonNames(): AddonName[] {
  return builtinAddons().map((a) => a.name);
}

export function isBuiltinAddon(name: string): name is AddonName {
  return Object.hasOwn(BUILTIN_ADDONS, name);
}

/** The built-in addon `name`; unknown names are a bug of the caller (names come from a validated lab file or knownAddon). */
export function builtinAddon(name: AddonName): BuiltinAddon {
  if (!isBuiltinAddon(name)) throw new Error(`internal: ${JSON.stringify(name)} is not a built-in addon`);
  return BUILTIN_ADDONS[name];
}
