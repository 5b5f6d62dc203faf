import type { KubeClient } from '../../kube/client.js';
import type { KubeObject } from '../../kube/objects.js';

/**
 * Which clusters get an addon, as OCM's ClusterManagementAddOn says it (`spec.installStrategy`):
 * `Manual` — only the clusters someone gave a ManagedClusterAddOn; `Placements` — every cluster
 * the PlacementDecisions of the named Placements list (OCM v1.2.1's addon-manager rule, which
 * skips our `lifecycle: self` addons, so our manager applies it itself).
 */
export interface PlacementRef {
  name: string;
  namespace: string;
}

/** One entry of `installStrategy.placements`; configs and rolloutStrategy are kept as written, not acted on. */
interface PlacementStrategy extends PlacementRef {
  configs?: unknown[];
  rolloutStrategy?: unknown;
}

export type InstallStrategy = { type: 'Manual' } | { type: 'Placements'; placements: PlacementStrategy[] };

/**
 * What an addon definition asks for: `AllClusters` — its manager puts it on every accepted cluster
 * whatever the ClusterManagementAddOn says (upstream's framework `InstallAllStrategy`; the CMA says
 * Manual) — or the install strategy a new ClusterManagementAddOn gets. Once the CMA exists, its
 * strategy is the user's to change (`kubectl patch clustermanagementaddon`).
 */
export type AddonInstall = 'AllClusters' | InstallStrategy;

/** The label OCM's placement controller puts on each PlacementDecision: the Placement's name. */
const PLACEMENT_LABEL = 'cluster.open-cluster-management.io/placement';
export const PLACEMENT_API = 'cluster.open-cluster-management.io/v1beta1';

export interface PlacementDecision extends KubeObject {
  status?: { decisions?: { clusterName: string }[] };
}

/**
 * The install strategy written on a ClusterManagementAddOn, or null when there is none or it is not
 * one OCM knows. An empty type means Manual (the API's default); a Placements entry without a name
 * or namespace is left out.
 */
export function installStrategyOf(cma: { spec?: Record<string, unknown> } | null | undefined): InstallStrategy | null {
  const raw = cma?.spec?.installStrategy as { type?: unknown; placements?: unknown } | undefined;
  if (!raw || typeof raw !== 'object') return null;
  if (raw.type === undefined || raw.type === '' || raw.type === 'Manual') return { type: 'Manual' };
  if (raw.type !== 'Placements') return null;
  const placements = (Array.isArray(raw.placements) ? raw.placements : []).filter(
    (p): p is PlacementStrategy => !!p && typeof p === 'object' && typeof p.name === 'string' && !!p.name && typeof p.namespace === 'string' && !!p.namespace,
  );
  return { type: 'Placements', placements };
}

/** The strategy the manager writes on the ClusterManagementAddOn: the one already there (a user's choice), else the addon's. */
export function clusterManagementInstallStrategy(install: AddonInstall, existing: InstallStrategy | null): InstallStrategy {
  if (install === 'AllClusters') return { type: 'Manual' };
  return existing ?? install;
}

/** The clusters the decisions list (every decision object of every Placement, duplicates once). */
export function decidedClusters(decisions: readonly PlacementDecision[]): Set<string> {
  return new Set(decisions.flatMap((d) => (d.status?.decisions ?? []).map((x) => x.clusterName)).filter(Boolean));
}

export interface InstallChanges {
  /** Clusters to give a ManagedClusterAddOn. */
  create: string[];
  /** Clusters whose ManagedClusterAddOn goes. */
  remove: string[];
}

/**
 * What the manager does to the ManagedClusterAddOns this pass. `existing`: clusters that have one;
 * `accepted`: the accepted clusters (only they get one); `decided`: the Placements' clusters.
 * Under Placements, as OCM's addon-manager: one on every decided cluster, and every one on a
 * cluster no decision lists is deleted, whoever made it. Manual: nothing. AllClusters: every
 * accepted cluster, none deleted.
 */
export function installChanges(
  strategy: InstallStrategy | 'AllClusters',
  clusters: { existing: Iterable<string>; accepted: ReadonlySet<string>; decided?: ReadonlySet<string> },
): InstallChanges {
  const existing = new Set(clusters.existing);
  if (strategy === 'AllClusters') return { create: [...clusters.accepted].filter((c) => !existing.has(c)).sort(), remove: [] };
  if (strategy.type === 'Manual') return { create: [], remove: [] };
  const decided = clusters.decided ?? new Set<string>();
  return {
    create: [...decided].filter((c) => clusters.accepted.has(c) && !existing.has(c)).sort(),
    remove: [...existing].filter((c) => !decided.has(c)).sort(),
  };
}

/** The PlacementDecisions of one Placement (OCM splits a large decision over several objects). */
export async function placementDecisions(hub: KubeClient, placement: PlacementRef): Promise<PlacementDecision[]> {
  const path = `/apis/${PLACEMENT_API}/namespaces/${encodeURIComponent(placement.namespace)}/placementdecisions`;
  return (await hub.get<{ items: PlacementDecision[] }>(path, { labelSelector: `${PLACEMENT_LABEL}=${placement.name}` })).items;
}

export function placementPath(placement: PlacementRef): string {
  return `/apis/${PLACEMENT_API}/namespaces/${encodeURIComponent(placement.namespace)}/placements/${encodeURIComponent(placement.name)}`;
}

/** How a strategy reads in a message: `Placements (open-cluster-management/global)` or `Manual`. */
export function describeInstallStrategy(strategy: InstallStrategy | 'AllClusters'): string {
  if (strategy === 'AllClusters') return 'AllClusters';
  if (strategy.type === 'Manual') return 'Manual';
  return `Placements (${strategy.placements.map((p) => `${p.namespace}/${p.name}`).join(', ') || 'none'})`;
}
