import fs from 'node:fs/promises';
import { ADDON_NAMES, type AddonName, type LabConfig } from '../config/index.js';
import { InvalidInputError } from '../errors.js';
import { KubeClient } from '../kube/client.js';
import { clusterKubeconfigFile } from '../paths.js';
import { collectionPath, getOrNull, objectPath, type KubeObject } from '../kube/objects.js';
import { deleteAndWait, labelledObjects, waitGone, type RemovalOptions } from '../ocm/removal.js';
import { ADDON_API, ADDON_MANAGER_NAMESPACE, ADDON_NAME_LABEL, deployWorkName, hubKubeconfigSecretName, WORK_API } from './framework/names.js';
import { hubPermissionObjects } from './framework/manager.js';
import { helloworldAddon } from './helloworld/addon.js';
import { copiesConfigMap } from './helloworld/copier.js';
import { HELLOWORLD_NAMESPACE, SYNCED_FROM_HUB_LABEL } from './helloworld/constants.js';
import { installAddonManager, managerName, managerObjects, waitForAddonAvailable, type AddonClusterState } from './install.js';

/**
 * `ocm-lab addon enable|disable`, like `clusteradm addon enable --names … --clusters …`.
 * helloworld is enabled per cluster: its manager serves exactly the clusters that have its
 * ManagedClusterAddOn, so enable creates them and disable deletes them. The default addons'
 * managers install them on every accepted cluster, so for those enable only checks the lab runs
 * them and waits, and disable is refused (they come and go with the lab file's `addons:`).
 */

/** Addons enabled cluster by cluster: those whose definition says `install: 'Manual'`, by name. */
const PER_CLUSTER_ADDONS = new Map([helloworldAddon()].filter((d) => d.install === 'Manual').map((d) => [d.name as AddonName, d]));

export function enabledPerCluster(addon: AddonName): boolean {
  return PER_CLUSTER_ADDONS.has(addon);
}

/** The addon named on the command line, or exit 2 listing the addons ocm-lab knows. */
export function knownAddon(name: string): AddonName {
  if ((ADDON_NAMES as readonly string[]).includes(name)) return name as AddonName;
  throw new InvalidInputError(`addon ${JSON.stringify(name)} is not an addon ocm-lab knows; known addons: ${ADDON_NAMES.join(', ')}`);
}

/** The clusters to act on: those named (each must be a managed cluster of the lab), else every managed cluster. */
export function chosenClusters(named: readonly string[] | undefined, spokes: readonly string[]): string[] {
  if (!named?.length) return [...spokes];
  const unknown = named.filter((c) => !spokes.includes(c));
  if (unknown.length) {
    throw new InvalidInputError(`--cluster ${unknown.join(', ')}: not a managed cluster of this lab; managed clusters: ${spokes.join(', ') || 'none'}`);
  }
  return [...new Set(named)];
}

const mcaRef = (addon: string, cluster: string) => ({ apiVersion: ADDON_API, kind: 'ManagedClusterAddOn', metadata: { name: addon, namespace: cluster } });

/** Creates the addon's ManagedClusterAddOn in each cluster's namespace that has none; returns the clusters where it was created. */
export async function ensureManagedClusterAddOns(hub: KubeClient, addon: AddonName, clusters: readonly string[]): Promise<string[]> {
  const installNamespace = PER_CLUSTER_ADDONS.get(addon)?.installNamespace;
  const created: string[] = [];
  for (const cluster of clusters) {
    const ref = mcaRef(addon, cluster);
    const current = await getOrNull<KubeObject>(hub, objectPath(ref));
    if (current?.metadata.deletionTimestamp) {
      throw new InvalidInputError(`ManagedClusterAddOn ${cluster}/${addon} is being deleted`, {
        hint: 'wait until it is gone (a disable is still running), then enable again',
      });
    }
    if (current) continue;
    await hub.post(collectionPath(ADDON_API, 'ManagedClusterAddOn', cluster), { ...ref, spec: installNamespace ? { installNamespace } : {} });
    created.push(cluster);
  }
  return created;
}

export interface EnableOptions {
  addon: AddonName;
  /** Every managed cluster of the lab. */
  spokes: readonly string[];
  /** The clusters asked for (--cluster); all spokes when empty. */
  clusters?: readonly string[];
  timeoutMs: number;
  progress?: (line: string) => void;
}

export interface EnableResult {
  addon: AddonName;
  managerInstalled: boolean;
  createdOn: string[];
  states: AddonClusterState[];
}

/** Enables the addon on the chosen clusters and waits until it is Available there. */
export async function enableAddon(hub: KubeClient, options: EnableOptions): Promise<EnableResult> {
  const { addon, progress } = options;
  const clusters = chosenClusters(options.clusters, options.spokes);
  const wait = () => waitForAddonAvailable(hub, addon, clusters, { timeoutMs: options.timeoutMs, progress, diagnostics: () => managerDiagnostics(hub, addon) });
  if (!enabledPerCluster(addon)) {
    if (options.clusters?.length && clusters.length !== options.spokes.length) {
      throw new InvalidInputError(`${addon} cannot be enabled on some clusters only: its manager installs it on every managed cluster`, {
        hint: `run 'ocm-lab addon enable ${addon}' without --cluster`,
      });
    }
    if (!(await managerRunning(hub, addon))) {
      throw new InvalidInputError(`${addon} is not installed on this lab`, { hint: `add it to 'addons:' in the lab file and run 'ocm-lab up'` });
    }
    return { addon, managerInstalled: false, createdOn: [], states: await wait() };
  }
  const changed = await installAddonManager(hub, addon, '');
  progress?.(changed.length ? `${addon} manager: ${changed.join(', ')}` : `${addon} manager in place`);
  const createdOn = await ensureManagedClusterAddOns(hub, addon, clusters);
  if (createdOn.length) progress?.(`ManagedClusterAddOn ${addon} created in ${createdOn.join(', ')}`);
  return { addon, managerInstalled: changed.length > 0, createdOn, states: await wait() };
}

async function managerRunning(hub: KubeClient, addon: AddonName): Promise<boolean> {
  const deployment = managerObjects(addon, '').find((o) => o.kind === 'Deployment')!;
  return (await getOrNull(hub, objectPath(deployment))) !== null;
}

async function managerDiagnostics(hub: KubeClient, addon: AddonName): Promise<string> {
  const deployment = await getOrNull<KubeObject & { status?: { readyReplicas?: number } }>(
    hub,
    objectPath({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: managerName(addon), namespace: ADDON_MANAGER_NAMESPACE } }),
  );
  return deployment
    ? `manager Deployment ${ADDON_MANAGER_NAMESPACE}/${deployment.metadata.name}: ${deployment.status?.readyReplicas ?? 0} ready`
    : `manager Deployment ${ADDON_MANAGER_NAMESPACE}/${managerName(addon)} is missing`;
}

export interface DisableOptions {
  addon: AddonName;
  spokes: readonly string[];
  clusters?: readonly string[];
  /** An admin client of a managed cluster, to remove what the agent wrote there (the copies); null when there is none. */
  spokeClient: (cluster: string) => Promise<KubeClient | null>;
  timeoutMs: number;
  progress?: (line: string) => void;
}

export interface DisableResult {
  addon: AddonName;
  disabledOn: string[];
  /** Whether no cluster has the addon left, so its manager and ClusterManagementAddOn were removed too. */
  managerRemoved: boolean;
  deleted: string[];
}

/**
 * Disables the addon on the chosen clusters: the ManagedClusterAddOns go (their ManifestWorks
 * with them, so the work agent removes the agent), then the agent's hub permissions and, on the
 * cluster, the ConfigMaps the agent copied (upstream's example removes them in a pre-delete
 * job). When no cluster has the addon left, its manager, ClusterManagementAddOn and CSRs go too.
 */
export async function disableAddon(hub: KubeClient, options: DisableOptions): Promise<DisableResult> {
  const { addon } = options;
  if (!enabledPerCluster(addon)) {
    throw new InvalidInputError(`${addon} cannot be disabled: its manager installs it on every managed cluster of the lab`, {
      hint: `remove it from the lab file's addons: list (ocm-lab down, then up), or disable one of: ${[...PER_CLUSTER_ADDONS.keys()].join(', ')}`,
    });
  }
  const clusters = chosenClusters(options.clusters, options.spokes);
  const removal: RemovalOptions = { timeoutMs: options.timeoutMs, progress: options.progress };
  const deleted: string[] = [];
  deleted.push(
    ...(await deleteAndWait(
      hub,
      clusters.map((c) => mcaRef(addon, c)),
      `removing ${addon} from ${clusters.join(', ')}`,
      removal,
    )),
  );
  await waitGone(
    hub,
    clusters.map((c) => ({ apiVersion: WORK_API, kind: 'ManifestWork', metadata: { name: deployWorkName(addon), namespace: c } })),
    `the ${addon} agents leaving (their ManifestWorks)`,
    removal,
  );
  const definition = PER_CLUSTER_ADDONS.get(addon)!;
  deleted.push(
    ...(await deleteAndWait(
      hub,
      clusters.flatMap((c) => hubPermissionObjects(definition, c)),
      `the ${addon} agents' hub permissions`,
      removal,
    )),
  );
  for (const cluster of clusters) deleted.push(...(await removeAgentLeftovers(cluster, options, removal)));

  const left = (await hub.get<{ items: KubeObject[] }>(collectionPath(ADDON_API, 'ManagedClusterAddOn'), { fieldSelector: `metadata.name=${addon}` })).items;
  const managerRemoved = left.length === 0;
  if (managerRemoved) deleted.push(...(await removeManager(hub, addon, removal)));
  return { addon, disabledOn: clusters, managerRemoved, deleted };
}

/** On the cluster: the copies the agent wrote, and the hub kubeconfig Secret if the registration agent left it. */
async function removeAgentLeftovers(cluster: string, options: DisableOptions, removal: RemovalOptions): Promise<string[]> {
  const spoke = await options.spokeClient(cluster);
  if (!spoke) {
    removal.progress?.(`${cluster}: no admin kubeconfig, the ConfigMaps labelled ${SYNCED_FROM_HUB_LABEL} in ${HELLOWORLD_NAMESPACE} stay`);
    return [];
  }
  try {
    // kube-root-ca.crt is never a copy (an older agent may have labelled it; the cluster would recreate it at once).
    const copies = (await labelledObjects(spoke, 'v1', 'ConfigMap', `/api/v1/namespaces/${HELLOWORLD_NAMESPACE}/configmaps`, SYNCED_FROM_HUB_LABEL)).filter(
      (c) => copiesConfigMap(c.metadata.name),
    );
    const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: hubKubeconfigSecretName(options.addon), namespace: HELLOWORLD_NAMESPACE } };
    return (await deleteAndWait(spoke, [...copies, secret], `${cluster}: the ${options.addon} agent's ConfigMap copies`, removal)).map(
      (d) => `${cluster}: ${d}`,
    );
  } finally {
    spoke.close();
  }
}

/** The manager first (so nothing recreates what follows), then the ClusterManagementAddOn, the manager's identity and the addon's CSRs. */
async function removeManager(hub: KubeClient, addon: AddonName, removal: RemovalOptions): Promise<string[]> {
  const objects = managerObjects(addon, '').filter((o) => o.kind !== 'Namespace');
  const deleted = await deleteAndWait(
    hub,
    objects.filter((o) => o.kind === 'Deployment'),
    `stopping the ${addon} manager`,
    removal,
  );
  const pods = await labelledObjects(hub, 'v1', 'Pod', `/api/v1/namespaces/${ADDON_MANAGER_NAMESPACE}/pods`, `app=${managerName(addon)}`);
  await waitGone(hub, pods, `the ${addon} manager pods`, removal);
  const csrs = await labelledObjects(
    hub,
    'certificates.k8s.io/v1',
    'CertificateSigningRequest',
    '/apis/certificates.k8s.io/v1/certificatesigningrequests',
    `${ADDON_NAME_LABEL}=${addon}`,
  );
  const cma = { apiVersion: ADDON_API, kind: 'ClusterManagementAddOn', metadata: { name: addon } };
  deleted.push(...(await deleteAndWait(hub, [cma, ...objects.filter((o) => o.kind !== 'Deployment'), ...csrs], `the ${addon} hub objects`, removal)));
  return deleted;
}

/** The lab's admin client of a managed cluster, or null when the lab has no kubeconfig for it. */
export async function spokeAdminClient(config: LabConfig, cluster: string): Promise<KubeClient | null> {
  const file = clusterKubeconfigFile(config.name, cluster);
  try {
    await fs.access(file);
  } catch {
    return null;
  }
  return KubeClient.fromKubeconfig(file);
}

/** The addons `addon list` shows: those of the lab file, and any addon enabled per cluster that has its ClusterManagementAddOn on the hub. */
export async function listedAddons(hub: KubeClient, labFileAddons: readonly AddonName[]): Promise<AddonName[]> {
  const enabled: AddonName[] = [];
  for (const addon of PER_CLUSTER_ADDONS.keys()) {
    if (labFileAddons.includes(addon)) continue;
    if (await getOrNull(hub, objectPath({ apiVersion: ADDON_API, kind: 'ClusterManagementAddOn', metadata: { name: addon } }))) enabled.push(addon);
  }
  return [...ADDON_NAMES.filter((a) => labFileAddons.includes(a)), ...enabled];
}
