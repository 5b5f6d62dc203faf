import { ocmImage } from '../images/catalogue.js';
import type { KubeClient } from '../kube/client.js';
import { applyObject, conditionOf, getOrNull, objectPath, type KubeObject } from '../kube/objects.js';
import { waitUntil } from '../kube/wait.js';
import {
  BOOTSTRAP_CLUSTER_ROLE,
  BOOTSTRAP_CLUSTER_ROLE_BINDING,
  BOOTSTRAP_SERVICE_ACCOUNT,
  CLUSTER_MANAGER_NAME,
  HUB_BOOTSTRAP_NAMESPACE,
  HUB_CONTROLLER_NAMESPACE,
  HUB_DEPLOYMENTS,
} from './constants.js';
import { applyOperator, deploymentSummary, type InstallProgress } from './operator-install.js';
import { clusterRole, clusterRoleBinding, serviceAccount, serviceAccountSubject } from '../kube/builders.js';
import { clusterInventoryObjects, clusterProfileCrd, clusterProfileCrdMark } from './clusterprofile.js';
import { CLUSTER_PROFILE_GATE, componentGateList, gateComponents, type FeatureGateSettings } from '../config/feature-gates.js';

export const OPERATOR_API = 'operator.open-cluster-management.io/v1';

/** What the hub's side of a lab sets in its ClusterManager beyond the images. */
export interface ClusterManagerOptions {
  /** Registration's ClusterProfile gate on (the lab's `clusterProfile`). */
  clusterProfile?: boolean;
  /** The lab's other hub gates (`featureGates.hub`). */
  featureGates?: FeatureGateSettings;
}

/**
 * Each ClusterManager component's `featureGates` (registrationConfiguration …), with the gates of the lab that
 * component knows on its OCM line, as `clusteradm init --feature-gates` spreads one list over them.
 */
function hubGateConfigurations(ocmVersion: string, options: ClusterManagerOptions): Record<string, unknown> {
  const settings = { ...options.featureGates, ...(options.clusterProfile ? { [CLUSTER_PROFILE_GATE]: true } : {}) };
  const out: Record<string, unknown> = {};
  for (const [component, known] of gateComponents(ocmVersion, 'hub')) {
    const featureGates = componentGateList(known, settings);
    if (featureGates) out[`${component}Configuration`] = { featureGates };
  }
  return out;
}

/** The ClusterManager clusteradm init creates, with every image at the lab's OCM version and the lab's feature gates. */
export function clusterManagerObject(ocmVersion: string, options: ClusterManagerOptions = {}): KubeObject {
  return {
    apiVersion: OPERATOR_API,
    kind: 'ClusterManager',
    metadata: { name: CLUSTER_MANAGER_NAME },
    spec: {
      registrationImagePullSpec: ocmImage('registration', ocmVersion),
      workImagePullSpec: ocmImage('work', ocmVersion),
      placementImagePullSpec: ocmImage('placement', ocmVersion),
      addOnManagerImagePullSpec: ocmImage('addon-manager', ocmVersion),
      deployOption: { mode: 'Default' },
      ...hubGateConfigurations(ocmVersion, options),
    },
  };
}

/** The identity joining clusters bootstrap with (clusteradm init's ServiceAccount and what it may do). */
export function hubBootstrapObjects(): KubeObject[] {
  return [
    serviceAccount({ name: BOOTSTRAP_SERVICE_ACCOUNT, namespace: HUB_BOOTSTRAP_NAMESPACE }),
    // What a registration agent does before it is accepted: create its ManagedCluster and a CSR, watch both.
    clusterRole(BOOTSTRAP_CLUSTER_ROLE, [
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get'] },
      { apiGroups: ['certificates.k8s.io'], resources: ['certificatesigningrequests'], verbs: ['create', 'get', 'list', 'watch'] },
      { apiGroups: ['cluster.open-cluster-management.io'], resources: ['managedclusters'], verbs: ['get', 'create', 'list', 'watch'] },
      { apiGroups: ['cluster.open-cluster-management.io'], resources: ['managedclustersets/join'], verbs: ['create'] },
    ]),
    clusterRoleBinding(BOOTSTRAP_CLUSTER_ROLE_BINDING, [serviceAccountSubject(BOOTSTRAP_SERVICE_ACCOUNT, HUB_BOOTSTRAP_NAMESPACE)], BOOTSTRAP_CLUSTER_ROLE),
  ];
}

/** Up to date as the operator reports it: applied, rolled out, registration and placement functional. */
export function clusterManagerReady(cm: KubeObject | null): { ready: boolean; why: string } {
  if (!cm) return { ready: false, why: 'no ClusterManager yet' };
  const expect: [string, string][] = [
    ['Applied', 'True'],
    ['Progressing', 'False'],
    ['HubRegistrationDegraded', 'False'],
    ['HubPlacementDegraded', 'False'],
  ];
  for (const [type, status] of expect) {
    const c = conditionOf(cm, type);
    if (c?.status !== status)
      return { ready: false, why: `${type} is ${c ? `${c.status} (${c.reason}${c.message ? `: ${c.message}` : ''})` : 'not reported yet'}` };
  }
  return { ready: true, why: '' };
}

/**
 * `clusteradm init` on the hub: the cluster-manager operator (upstream's
 * kustomization of the lab's OCM version), a ClusterManager and the bootstrap
 * identity. Returns what changed; `waitForClusterManager` waits for the result.
 */
export async function applyClusterManager(
  hub: KubeClient,
  options: ClusterManagerOptions & { operatorObjects: KubeObject[]; ocmVersion: string; timeoutMs: number },
): Promise<string[]> {
  const changed = await applyOperator(hub, options.operatorObjects, 'clustermanagers.operator.open-cluster-management.io', options.timeoutMs);
  // Ours only where no ClusterProfile CRD is installed: with the gate on, OCM's operator installs its
  // own copy over any CRD that lacks its version annotation, and that one is left as it is.
  if (options.clusterProfile && !(await getOrNull<KubeObject>(hub, objectPath(clusterProfileCrd())))) {
    await applyObject(hub, clusterProfileCrdMark());
    await applyObject(hub, clusterProfileCrd());
    changed.push('CustomResourceDefinition clusterprofiles.multicluster.x-k8s.io created');
  }
  const clusterManager = clusterManagerObject(options.ocmVersion, { clusterProfile: options.clusterProfile, featureGates: options.featureGates });
  for (const obj of [clusterManager, ...hubBootstrapObjects()]) {
    const result = await applyObject(hub, obj);
    if (result !== 'unchanged') changed.push(`${obj.kind} ${obj.metadata.name} ${result}`);
  }
  return changed;
}

/** The hub gates that make the operator run `cluster-manager-work-controller` (its clustermanager_controller.go). */
const WORK_CONTROLLER_GATES = ['ManifestWorkReplicaSet', 'CleanUpCompletedManifestWork'];

/** The hub Deployments the operator runs for these gates: HUB_DEPLOYMENTS, and the work controller where a gate asks for it. */
export function hubDeployments(featureGates: FeatureGateSettings = {}): string[] {
  const workController = WORK_CONTROLLER_GATES.some((gate) => featureGates[gate] === true);
  return [...HUB_DEPLOYMENTS, ...(workController ? ['cluster-manager-work-controller'] : [])];
}

/** Waits until the operator reports the hub applied and rolled out; on timeout says which Deployment is not there and why. */
export async function waitForClusterManager(hub: KubeClient, options: InstallProgress & { featureGates?: FeatureGateSettings }): Promise<void> {
  const path = `/apis/${OPERATOR_API}/clustermanagers/${CLUSTER_MANAGER_NAME}`;
  await waitUntil(
    async () => {
      const state = clusterManagerReady(await getOrNull<KubeObject>(hub, path));
      if (!state.ready) options.progress(`ClusterManager: ${state.why}`);
      return state.ready ? true : undefined;
    },
    {
      timeoutMs: options.timeoutMs,
      what: `ClusterManager ${CLUSTER_MANAGER_NAME} to be applied and rolled out`,
      report: async () => deploymentSummary(hub, HUB_CONTROLLER_NAMESPACE, hubDeployments(options.featureGates)),
    },
  );
}

/**
 * With ClusterProfile on: the inventory namespace bound to the `global` cluster set, so OCM's controller
 * writes a ClusterProfile there for every cluster (it writes none without a bound ManagedClusterSetBinding).
 * Applied once the hub's CRDs are served.
 */
export async function applyClusterInventory(hub: KubeClient): Promise<string[]> {
  const changed: string[] = [];
  for (const obj of clusterInventoryObjects()) {
    const result = await applyObject(hub, obj);
    if (result !== 'unchanged') changed.push(`${obj.kind} ${obj.metadata.name} ${result}`);
  }
  return changed;
}
