import {
  clusterProfileEnabled,
  LOCAL_CLUSTER_LABEL,
  LOCAL_CLUSTER_NAME,
  localClusterEnabled,
  type AddonImplementation,
  type AddonName,
  type LabConfig,
} from '../../config/index.js';
import { managerObjects } from '../../addons/install.js';
import { builtinAddon, builtinAddonNames } from '../../addons/registry.js';
import { addonSteps } from '../../addons/lab-addons.js';
import { isUpstreamAddon, runsUpstream, UPSTREAM_MANAGER_DEPLOYMENT, UPSTREAM_RELEASE_NAMESPACE } from '../../addons/upstream/index.js';
import { ocmSteps } from '../../ocm/install.js';
import type { KubeObject } from '../../kube/objects.js';
import { clusterManagerObject, hubDeployments } from '../../ocm/cluster-manager.js';
import {
  AGENT_DEPLOYMENTS,
  AGENT_NAMESPACE,
  BOOTSTRAP_SERVICE_ACCOUNT,
  CLUSTER_MANAGER_NAME,
  HUB_BOOTSTRAP_NAMESPACE,
  HUB_CONTROLLER_NAMESPACE,
  KLUSTERLET_NAME,
  OPERATOR_NAMESPACE,
} from '../../ocm/constants.js';
import { klusterletObject } from '../../ocm/klusterlet.js';
import { ocmImage, upstreamAddonImage } from '../../images/catalogue.js';

interface AddonPlan {
  name: AddonName;
  implementation: AddonImplementation;
  /** The manager Deployment on the hub and its image (ours: ocm-lab's image; upstream: upstream's image at its pinned version). */
  manager: { namespace: string; name: string; image: string } | null;
  /** What else the addon puts on the hub. */
  hub: string[];
  /** The spokes `up` waits for the addon to be Available on (a ManagedClusterAddOn each). */
  spokes: string[];
}

export interface InstallsPlan {
  ocm: {
    version: string;
    hub: {
      cluster: string;
      operator: { namespace: string; name: 'cluster-manager'; image: string };
      clusterManager: { name: string; namespace: string; deployments: string[]; images: Record<string, string>; featureGates: GatePlan };
      bootstrap: { namespace: string; serviceAccount: string };
    };
    spokes: {
      cluster: string;
      operator: { namespace: string; name: 'klusterlet'; image: string };
      klusterlet: { name: string; namespace: string; deployments: string[]; images: Record<string, string>; featureGates: GatePlan };
    }[];
    /** The hub joined to itself (localCluster): its ManagedCluster's name and label; null when the lab does not. */
    localCluster: { name: string; label: string } | null;
    /** Clusters the hub accepts once they ask to join (the spokes, and local-cluster). */
    accepted: string[];
  };
  addons: AddonPlan[];
  /** Titles of the install steps `up` runs after the runtime's, in order. */
  steps: string[];
}

/** Per component configuration of the spec (`registrationConfiguration` → `registration`), its gates as `Name=Enable|Disable`. */
type GatePlan = Record<string, string[]>;

function gatesOf(spec: Record<string, unknown>): GatePlan {
  return Object.fromEntries(
    Object.entries(spec).flatMap(([key, value]) => {
      const gates = (value as { featureGates?: { feature: string; mode: string }[] } | undefined)?.featureGates;
      return key.endsWith('Configuration') && gates ? [[key.replace(/Configuration$/, ''), gates.map((g) => `${g.feature}=${g.mode}`)]] : [];
    }),
  );
}

function renderGates(gates: GatePlan): string {
  const parts = Object.entries(gates).map(([component, list]) => `${component} ${list.join(', ')}`);
  return parts.length ? parts.join('; ') : "none (each component's defaults)";
}

function imagesOf(spec: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(spec).filter((e): e is [string, string] => e[0].endsWith('ImagePullSpec') && typeof e[1] === 'string'));
}

function managerDeployment(addon: AddonName, implementation: AddonImplementation): AddonPlan['manager'] {
  if (implementation === 'upstream' && isUpstreamAddon(addon)) {
    return { namespace: UPSTREAM_RELEASE_NAMESPACE, name: UPSTREAM_MANAGER_DEPLOYMENT[addon], image: upstreamAddonImage(addon) };
  }
  // The hub address only goes into the manager's flags, which the plan does not show.
  const deployment = managerObjects(addon, '<hub>').find((o: KubeObject) => o.kind === 'Deployment');
  const containers = (deployment?.spec as { template?: { spec?: { containers?: { image?: string }[] } } } | undefined)?.template?.spec?.containers ?? [];
  if (!deployment) return null;
  return { namespace: deployment.metadata.namespace ?? '', name: deployment.metadata.name, image: containers[0]?.image ?? '' };
}

/**
 * What `up` installs on the clusters, whatever the runtime: OCM (operators,
 * ClusterManager, Klusterlets, accept) and each addon with its implementation.
 * From the config alone, with the objects the install steps apply.
 */
export function planInstalls(config: LabConfig): InstallsPlan {
  const hub = config.clusters.find((c) => c.hub);
  const spokes = config.clusters.filter((c) => !c.hub).map((c) => c.name);
  const operatorImage = ocmImage('registration-operator', config.ocmVersion);
  const clusterManager = clusterManagerObject(config.ocmVersion, { clusterProfile: clusterProfileEnabled(config), featureGates: config.featureGates?.hub });
  return {
    ocm: {
      version: config.ocmVersion,
      hub: {
        cluster: hub?.name ?? '',
        operator: { namespace: OPERATOR_NAMESPACE, name: 'cluster-manager', image: operatorImage },
        clusterManager: {
          name: CLUSTER_MANAGER_NAME,
          namespace: HUB_CONTROLLER_NAMESPACE,
          deployments: hubDeployments(config.featureGates?.hub),
          images: imagesOf(clusterManager.spec as Record<string, unknown>),
          featureGates: gatesOf(clusterManager.spec as Record<string, unknown>),
        },
        bootstrap: { namespace: HUB_BOOTSTRAP_NAMESPACE, serviceAccount: BOOTSTRAP_SERVICE_ACCOUNT },
      },
      spokes: spokes.map((name) => {
        const spec = klusterletObject(name, '', config.ocmVersion, config.featureGates?.klusterlet).spec as Record<string, unknown>;
        return {
          cluster: name,
          operator: { namespace: OPERATOR_NAMESPACE, name: 'klusterlet', image: operatorImage },
          klusterlet: {
            name: KLUSTERLET_NAME,
            namespace: AGENT_NAMESPACE,
            deployments: [...AGENT_DEPLOYMENTS],
            images: imagesOf(spec),
            featureGates: gatesOf(spec),
          },
        };
      }),
      localCluster: localClusterEnabled(config) ? { name: LOCAL_CLUSTER_NAME, label: `${LOCAL_CLUSTER_LABEL}=true` } : null,
      accepted: localClusterEnabled(config) ? [...spokes, LOCAL_CLUSTER_NAME] : spokes,
    },
    addons: builtinAddonNames()
      .filter((a) => config.addons.includes(a))
      .map((name) => {
        const implementation: AddonImplementation = runsUpstream(config, name) ? 'upstream' : 'ocm-lab';
        // What else our build puts on the hub (cluster-gateway's aggregated API server), as its definition lists it.
        const hubObjects = implementation === 'ocm-lab' ? [...(builtinAddon(name).hub?.plan ?? [])] : [];
        return { name, implementation, manager: managerDeployment(name, implementation), hub: hubObjects, spokes };
      }),
    steps: [...ocmSteps(), ...addonSteps()].map((s) => s.title),
  };
}

/** The installs part of `up --dry-run` (and of `down --dry-run`, where it says what goes with them). */
export function renderInstalls(plan: InstallsPlan, action: 'up' | 'down', clustersStay: boolean): string {
  const out: string[] = [];
  if (action === 'down') {
    out.push(
      clustersStay
        ? `Installs taken off the clusters first: the addons (${plan.addons.map((a) => a.name).join(', ') || 'none'}), ` +
            `then each spoke's registration and klusterlet (${plan.ocm.accepted.join(', ')}), then OCM ${plan.ocm.version} on the hub (${plan.ocm.hub.cluster})`
        : `Installs (OCM ${plan.ocm.version}, addons ${plan.addons.map((a) => a.name).join(', ') || 'none'}) go with the clusters`,
    );
    return out.join('\n');
  }
  const o = plan.ocm;
  out.push(`OCM ${o.version}:`);
  out.push(`  ${o.hub.cluster} (hub): operator ${o.hub.operator.name} in ${o.hub.operator.namespace} (${o.hub.operator.image})`);
  out.push(`    ClusterManager ${o.hub.clusterManager.name} -> ${o.hub.clusterManager.deployments.join(', ')} in ${o.hub.clusterManager.namespace}`);
  out.push(`    images: ${Object.values(o.hub.clusterManager.images).join(', ')}`);
  out.push(`    feature gates: ${renderGates(o.hub.clusterManager.featureGates)}`);
  out.push(`    bootstrap identity: ServiceAccount ${o.hub.bootstrap.namespace}/${o.hub.bootstrap.serviceAccount}`);
  for (const s of o.spokes) {
    out.push(
      `  ${s.cluster}: operator ${s.operator.name} in ${s.operator.namespace}; ` +
        `Klusterlet ${s.klusterlet.name} -> ${s.klusterlet.deployments.join(', ')} in ${s.klusterlet.namespace}`,
    );
  }
  if (o.spokes.length) {
    out.push(`    images: ${[...new Set(o.spokes.flatMap((s) => Object.values(s.klusterlet.images)))].join(', ')}`);
    out.push(`    feature gates: ${renderGates(o.spokes[0]!.klusterlet.featureGates)}`);
  }
  out.push(
    o.localCluster
      ? `  ${o.hub.cluster} joined to itself: Klusterlet ${KLUSTERLET_NAME} on the hub ` +
          `as ManagedCluster ${o.localCluster.name}, labelled ${o.localCluster.label}`
      : '  the hub is not a managed cluster (localCluster off)',
  );
  out.push(`  accepted on the hub: ${o.accepted.join(', ') || '(no spokes)'}`);
  out.push('');
  out.push('Addons:');
  if (!plan.addons.length) out.push('  (none)');
  for (const a of plan.addons) {
    const manager = a.manager ? `manager ${a.manager.namespace}/${a.manager.name} (${a.manager.image})` : 'no manager';
    out.push(
      `  ${a.name}  implementation=${a.implementation}  ${manager}${a.hub.length ? `, ${a.hub.join(', ')}` : ''}; ` +
        `Available on ${a.spokes.join(', ') || '(no spokes)'}`,
    );
  }
  return out.join('\n');
}
