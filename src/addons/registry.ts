import type { AddonName, AddonVocabulary } from '../config/types.js';
import type { BuiltinAddon } from './builtin.js';
import { clusterProxyBuiltin } from './cluster-proxy/builtin.js';
import { managedServiceAccountBuiltin } from './managed-serviceaccount/builtin.js';
import { clusterGatewayBuiltin } from './cluster-gateway/builtin.js';
import { helloworldBuiltin } from './helloworld/builtin.js';

/**
 * Every built-in addon, one line each (as runtime/registry.ts), keyed by its name: the only list of them.
 * An addon is its folder under src/addons/ (with a light builtin.ts, addons/builtin.ts says what it holds)
 * and its line here; lab files (through addonVocabulary), scenarios and `addon enable|disable` take the
 * names from here. The order is the order `up` and the errors list them in.
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
  return Object.keys(BUILTIN_ADDONS);
}

export function isBuiltinAddon(name: string): name is AddonName {
  return Object.hasOwn(BUILTIN_ADDONS, name);
}

/** The built-in addon `name`; unknown names are a bug of the caller (names come from a validated lab file or knownAddon). */
export function builtinAddon(name: AddonName): BuiltinAddon {
  if (!isBuiltinAddon(name)) throw new Error(`internal: ${JSON.stringify(name)} is not a built-in addon`);
  return BUILTIN_ADDONS[name]!;
}

/** What a lab file may name, as config/ checks it (the composition root provides it: config/addon-vocabulary.ts). */
export function addonVocabulary(): AddonVocabulary {
  return { names: builtinAddonNames(), requires: (name) => (isBuiltinAddon(name) ? BUILTIN_ADDONS[name]!.requires : undefined) };
}
