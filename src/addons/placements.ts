import { isStatus, type KubeClient } from '../kube/client.js';
import { getOrNull, objectPath, type KubeObject } from '../kube/objects.js';
import { deleteAndWait, type RemovalOptions } from '../ocm/removal.js';
import { ADDON_NAME_LABEL } from './framework/names.js';
import { PLACEMENT_API, type AddonInstall, type PlacementRef } from './framework/install-strategy.js';
import { builtinAddon, builtinAddons, isBuiltinAddon } from './registry.js';

/**
 * Each lab addon's install strategy, upstream's default for it (docs/addons.md, "Install strategy";
 * the `install` of its definition, e.g. cluster-proxy/builtin.ts), and the Placements and
 * ManagedClusterSetBindings the lab creates for it, as upstream's charts do.
 */

/** The ManagedClusterSet every accepted cluster joins by default (OCM's registration hub creates it). */
const GLOBAL_CLUSTER_SET = 'global';
const CLUSTER_SET_BINDING_API = 'cluster.open-cluster-management.io/v1beta2';
/** The built-in addons' default strategies by name (each definition's `install`), as the registry holds them when this module loads. */
export const ADDON_INSTALL: Record<string, AddonInstall> = Object.fromEntries(builtinAddons().map((a) => [a.name, a.install]));

/** The addon's default install strategy: its definition's; AllClusters for an addon the lab does not build in. */
export function addonInstall(addon: string): AddonInstall {
  return isBuiltinAddon(addon) ? builtinAddon(addon).install : 'AllClusters';
}

/** The Placement spec each chart writes: every cluster of the global set, and what the addon's definition adds (placementSpec). */
function placementSpec(addon: string): Record<string, unknown> {
  const extra = isBuiltinAddon(addon) ? builtinAddon(addon).placementSpec : undefined;
  return { clusterSets: [GLOBAL_CLUSTER_SET], ...structuredClone(extra ?? {}) };
}

/** Shared by the addons whose Placements live in one namespace: labelled as the lab's (not one addon's), so removal takes only what the lab made. */
const LAB_MADE_LABEL = { 'app.kubernetes.io/managed-by': 'ocm-lab' };

function clusterSetBinding(namespaceName: string): KubeObject {
  return {
    apiVersion: CLUSTER_SET_BINDING_API,
    kind: 'ManagedClusterSetBinding',
    metadata: { name: GLOBAL_CLUSTER_SET, namespace: namespaceName, labels: { ...LAB_MADE_LABEL } },
    spec: { clusterSet: GLOBAL_CLUSTER_SET },
  };
}

function placement(ref: PlacementRef, addon: string): KubeObject {
  return {
    apiVersion: PLACEMENT_API,
    kind: 'Placement',
    metadata: { name: ref.name, namespace: ref.namespace, labels: { [ADDON_NAME_LABEL]: addon } },
    spec: placementSpec(addon),
  };
}

/** The ManagedClusterSetBinding and Placement of each Placement a strategy names, in that order (the Placement needs the binding). */
export function placementObjects(addon: string, strategy: AddonInstall = addonInstall(addon)): KubeObject[] {
  if (strategy === 'AllClusters' || strategy.type !== 'Placements') return [];
  return strategy.placements.flatMap((p) => [clusterSetBinding(p.namespace), placement(p, addon)]);
}

/**
 * Deletes the Placements of the addon's default strategy that the lab made (labelled with the
 * addon), and each namespace's global ManagedClusterSetBinding the lab made once no Placement is
 * left there (another addon's or a user's may use it).
 */
export async function removePlacementObjects(hub: KubeClient, addon: string, removal: RemovalOptions): Promise<string[]> {
  const labelOf = async (o: KubeObject, key: string) => (await getOrNull<KubeObject>(hub, objectPath(o)))?.metadata.labels?.[key];
  const objects = placementObjects(addon);
  const placements: KubeObject[] = [];
  for (const p of objects.filter((o) => o.kind === 'Placement')) if ((await labelOf(p, ADDON_NAME_LABEL)) === addon) placements.push(p);
  const deleted = await deleteAndWait(hub, placements, `the ${addon} Placements`, removal);
  for (const binding of objects.filter((o) => o.kind === 'ManagedClusterSetBinding')) {
    // No Placement API (OCM not installed) means nothing of ours either.
    const left = await hub
      .get<{ items: KubeObject[] }>(`/apis/${PLACEMENT_API}/namespaces/${binding.metadata.namespace}/placements`)
      .catch((err: unknown) => (isStatus(err, 404) ? { items: [] } : Promise.reject(err as Error)));
    if (left.items.length === 0 && (await labelOf(binding, 'app.kubernetes.io/managed-by')) === 'ocm-lab') {
      deleted.push(...(await deleteAndWait(hub, [binding], `the ${GLOBAL_CLUSTER_SET} cluster set binding in ${binding.metadata.namespace}`, removal)));
    }
  }
  return deleted;
}
