import { OCM_RELEASES } from '../provision/versions.js';

/**
 * OCM's feature gates per component, as the api module of each line lists them (feature/feature.go; where
 * each list is, in docs/notes.md "OCM feature gates"). The ClusterManager takes its gates per component
 * (registrationConfiguration, workConfiguration, addOnManagerConfiguration, placementConfiguration), the
 * Klusterlet per agent (registrationConfiguration, workConfiguration).
 */
type HubGateComponent = 'registration' | 'work' | 'addOnManager' | 'placement';
type KlusterletGateComponent = 'registration' | 'work';

interface GateLists {
  hub: Partial<Record<HubGateComponent, readonly string[]>>;
  klusterlet: Record<KlusterletGateComponent, readonly string[]>;
}

const API_V1_2_0: GateLists = {
  hub: {
    registration: ['DefaultClusterSet', 'V1beta1CSRAPICompatibility', 'ManagedClusterAutoApproval', 'ResourceCleanup', 'ClusterProfile', 'ClusterImporter'],
    work: ['NilExecutorValidating', 'ManifestWorkReplicaSet', 'CloudEventsDrivers', 'CleanUpCompletedManifestWork'],
    addOnManager: ['AddonManagement'],
  },
  klusterlet: {
    registration: ['ClusterClaim', 'ClusterProperty', 'AddonManagement', 'V1beta1CSRAPICompatibility', 'MultipleHubs'],
    work: ['ExecutorValidatingCaches', 'RawFeedbackJsonString'],
  },
};

/** v1.3.0 adds the placement controller's gates (and the ClusterManager's placementConfiguration). */
const API_V1_3_0: GateLists = { ...API_V1_2_0, hub: { ...API_V1_2_0.hub, placement: ['PlacementDebugServer'] } };

const BY_API_VERSION: Readonly<Record<string, GateLists>> = { 'v1.2.0': API_V1_2_0, 'v1.3.0': API_V1_3_0 };

export type GateSide = 'hub' | 'klusterlet';
/** A lab's gates as written: gate name → on (Enable) or off (Disable), as `clusteradm --feature-gates Name=true`. */
export type FeatureGateSettings = Record<string, boolean>;

/** The registration gate the lab's `clusterProfile:` switch stands for: naming it under featureGates.hub is the same switch. */
export const CLUSTER_PROFILE_GATE = 'ClusterProfile';

function listsOf(ocmVersion: string): GateLists {
  const api = OCM_RELEASES.find((r) => r.ocm === ocmVersion)?.api;
  const lists = api === undefined ? undefined : BY_API_VERSION[api];
  if (!lists) throw new Error(`internal: no feature gate list for OCM ${ocmVersion}`);
  return lists;
}

/** The components of one side and their gates, for OCM `ocmVersion`. */
export function gateComponents(ocmVersion: string, side: GateSide): [string, readonly string[]][] {
  return Object.entries(listsOf(ocmVersion)[side]);
}

/** Every gate one side of `ocmVersion` accepts, sorted, each once (AddonManagement is both the hub's and the agents'). */
export function acceptedGates(ocmVersion: string, side: GateSide): string[] {
  return [...new Set(gateComponents(ocmVersion, side).flatMap(([, gates]) => gates))].sort();
}

/** The gates of `settings` one side of `ocmVersion` does not know, in the order written. */
export function unknownGates(ocmVersion: string, side: GateSide, settings: FeatureGateSettings | undefined): string[] {
  const accepted = acceptedGates(ocmVersion, side);
  return Object.keys(settings ?? {}).filter((gate) => !accepted.includes(gate));
}

/** What to say about gates a side does not know: which, on which line, and the gates it accepts. */
export function unknownGateMessage(ocmVersion: string, side: GateSide, gates: readonly string[]): string {
  const what = side === 'hub' ? 'hub (ClusterManager)' : 'klusterlet';
  const one = gates.length === 1;
  const accepted = acceptedGates(ocmVersion, side).join(', ');
  return `${gates.join(', ')} ${one ? 'is not a' : 'are not'} ${what} feature gate${one ? '' : 's'} of OCM ${ocmVersion}; accepted: ${accepted}`;
}

/**
 * One component's `featureGates` list as the operator API writes it ({feature, mode: Enable|Disable}), with
 * the gates of `settings` that component knows; clusteradm's `--feature-gates` spreads one list over the
 * components the same way. Undefined when none applies.
 */
export function componentGateList(known: readonly string[], settings: FeatureGateSettings): { feature: string; mode: 'Enable' | 'Disable' }[] | undefined {
  const list = Object.entries(settings)
    .filter(([gate]) => known.includes(gate))
    .map(([feature, on]) => ({ feature, mode: on ? ('Enable' as const) : ('Disable' as const) }));
  return list.length ? list : undefined;
}
