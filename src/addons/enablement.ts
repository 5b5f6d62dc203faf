import fs from 'node:fs/promises';
import type { AddonName, LabConfig } from '../config/index.js';
import { InvalidInputError, NotReadyError } from '../errors.js';
import { isStatus, KubeClient } from '../kube/client.js';
import { clusterKubeconfigFile } from '../paths.js';
import { applyObject, collectionPath, conditionOf, getOrNull, objectPath, type KubeObject } from '../kube/objects.js';
import { sleep } from '../kube/wait.js';
import { namespace } from '../kube/builders.js';
import { deleteAndWait, labelledObjects, waitGone, type RemovalOptions } from '../ocm/removal.js';
import { ADDON_API, ADDON_MANAGER_NAMESPACE, ADDON_NAME_LABEL, deployWorkName, hubKubeconfigSecretName, WORK_API } from './framework/names.js';
import { clusterManagementAddOn, hubPermissionObjects, type ClusterManagementAddOn } from './framework/manager.js';
import {
  decidedClusters,
  describeInstallStrategy,
  installStrategyOf,
  placementDecisions,
  placementPath,
  type InstallStrategy,
} from './framework/install-strategy.js';
import type { AddonDefinition } from './framework/types.js';
import { addonInstall, placementObjects, removePlacementObjects } from './placements.js';

type PlacementsStrategy = InstallStrategy & { type: 'Placements' };
interface PlacementObject extends KubeObject {
  status?: { numberOfSelectedClusters?: number; conditions?: { type: string; status: string }[] };
}
import { builtinAddon, builtinAddonNames, builtinAddons, isBuiltinAddon } from './registry.js';
import { installAddonManager, managerName, managerObjects, waitForAddonAvailable, type AddonClusterState } from './install.js';

/** Applies the Placements (and cluster set bindings) a Placements strategy names; what changed. */
async function applyPlacements(hub: KubeClient, addon: AddonName, strategy: InstallStrategy | 'AllClusters'): Promise<string[]> {
  const changed: string[] = [];
  if (strategy === 'AllClusters' || strategy.type !== 'Placements') return changed;
  const objects = placementObjects(addon, strategy);
  // A Placement may live in the addon managers' namespace, which the first manager's install would only create after it.
  const namespaces = [...new Set(objects.map((o) => o.metadata.namespace).filter((ns): ns is string => !!ns))].map((ns) => namespace(ns));
  for (const obj of [...namespaces, ...objects]) {
    const result = await applyObject(hub, obj);
    if (result !== 'unchanged') changed.push(`${obj.kind} ${obj.metadata.namespace}/${obj.metadata.name} ${result}`);
  }
  return changed;
}

/**
 * `ocm-lab addon enable|disable`, like `clusteradm addon enable --names … --clusters …`, under the
 * addon's install strategy (its ClusterManagementAddOn's `installStrategy`, docs/addons.md):
 * - Manual: enable creates each chosen cluster's ManagedClusterAddOn, disable deletes it;
 * - Placements: the Placement chooses the clusters (a ManagedClusterAddOn deleted by hand comes
 *   back), so enable waits for the clusters it decides and a --cluster it does not decide, or a
 *   disable of some clusters only, is refused, naming the Placement and how to change it;
 * - AllClusters (cluster-gateway): on every managed cluster.
 * An addon enabled per cluster (its definition's enabledPerCluster: helloworld) comes and goes with
 * enable/disable (its manager is installed by the first enable, removed by the last disable); an
 * enable --cluster that installs it picks Manual, one without, upstream's default (Placements).
 * The others come and go with the lab file's `addons:`.
 */

/** Whether enable/disable install and remove the addon's manager (helloworld). */
export function enabledPerCluster(addon: AddonName): boolean {
  return builtinAddon(addon).enabledPerCluster === true;
}

/** The addons enabled cluster by cluster, in registry order. */
function perClusterAddons(): AddonName[] {
  return builtinAddons()
    .filter((a) => a.enabledPerCluster)
    .map((a) => a.name);
}

/** The framework definition of an addon enabled per cluster (what its ClusterManagementAddOn and agents' hub permissions are made from). */
function perClusterDefinition(addon: AddonName): Promise<AddonDefinition> {
  return builtinAddon(addon).definition({}, () => undefined);
}

/** The addon named on the command line, or exit 2 listing the addons ocm-lab knows. */
export function knownAddon(name: string): AddonName {
  if (isBuiltinAddon(name)) return name;
  throw new InvalidInputError(`addon ${JSON.stringify(name)} is not an addon ocm-lab knows; known addons: ${builtinAddonNames().join(', ')}`);
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
  const installNamespace = enabledPerCluster(addon) ? (await perClusterDefinition(addon)).installNamespace : undefined;
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
  /** The image the lab's managers run (the hub's `LabCluster.ocmLabImage`: a registry's copy under `--image-registry`); default ours. */
  image?: string;
}

export interface EnableResult {
  addon: AddonName;
  managerInstalled: boolean;
  createdOn: string[];
  states: AddonClusterState[];
}

const cmaRef = (addon: string) => ({ apiVersion: ADDON_API, kind: 'ClusterManagementAddOn', metadata: { name: addon } });

/** The addon's install strategy on this lab: AllClusters, its ClusterManagementAddOn's, or null when it has none (not installed). */
async function currentInstallStrategy(hub: KubeClient, addon: AddonName): Promise<InstallStrategy | 'AllClusters' | null> {
  if (addonInstall(addon) === 'AllClusters') return 'AllClusters';
  const cma = await getOrNull<ClusterManagementAddOn>(hub, objectPath(cmaRef(addon)));
  return cma ? (installStrategyOf(cma) ?? { type: 'Manual' }) : null;
}

/** The strategy an enable installs a per-cluster addon (helloworld) with: Manual for some clusters named, else the addon's default. */
export function strategyForNewInstall(addon: AddonName, named: readonly string[] | undefined): InstallStrategy {
  const install = addonInstall(addon);
  return named?.length || install === 'AllClusters' ? { type: 'Manual' } : install;
}

/** The refusal of a per-cluster enable/disable under Placements: what the Placement does, and how to change it. */
export function placementRefusal(addon: AddonName, strategy: PlacementsStrategy, action: 'enable' | 'disable', clusters: readonly string[]): InvalidInputError {
  const where = `installStrategy Placements: ${strategy.placements.map((p) => `${p.namespace}/${p.name}`).join(', ') || 'none'}`;
  const first = strategy.placements[0] ?? { name: 'NAME', namespace: 'NAMESPACE' };
  const them = clusters.length > 1 ? 'them' : 'it';
  const what =
    action === 'enable'
      ? `${addon} cannot be enabled on ${clusters.join(', ')}: it is installed by Placement (${where}), which does not decide ${them}`
      : `${addon} cannot be disabled on ${clusters.join(', ')} only: it is installed by Placement (${where}); ` +
        `its manager re-creates a ManagedClusterAddOn on every cluster the Placement decides`;
  const manual = `kubectl --context hub patch clustermanagementaddon ${addon} --type=merge -p '{"spec":{"installStrategy":{"type":"Manual"}}}'`;
  return new InvalidInputError(what, {
    hint:
      `change which clusters the Placement selects (kubectl --context hub -n ${first.namespace} edit placement ${first.name}, ` +
      `e.g. a labelSelector predicate), or switch ${addon} to Manual: ${manual}` +
      (enabledPerCluster(addon) ? ` (or 'ocm-lab addon disable ${addon}', then 'ocm-lab addon enable ${addon} --cluster …', which installs it Manual)` : ''),
  });
}

/**
 * The clusters a Placements strategy decides, once OCM's placement controller has decided: every
 * Placement has the PlacementSatisfied condition and as many decisions as it counts selected.
 */
export async function waitForDecisions(hub: KubeClient, strategy: PlacementsStrategy, timeoutMs: number): Promise<Set<string>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const decided = new Set<string>();
    let settled = true;
    for (const ref of strategy.placements) {
      const placement = await getOrNull<PlacementObject>(hub, placementPath(ref));
      const clusters = decidedClusters(await placementDecisions(hub, ref));
      if (!conditionOf(placement, 'PlacementSatisfied') || (placement?.status?.numberOfSelectedClusters ?? -1) !== clusters.size) settled = false;
      for (const c of clusters) decided.add(c);
    }
    if (settled) return decided;
    if (Date.now() > deadline) {
      throw new NotReadyError(
        `Placement ${strategy.placements.map((p) => `${p.namespace}/${p.name}`).join(', ')} has not decided within ${Math.round(timeoutMs / 1000)} s`,
        { hint: `see its status: kubectl --context hub -n ${strategy.placements[0]?.namespace} get placement -o yaml` },
      );
    }
    await sleep(250);
  }
}

/** Writes the ClusterManagementAddOn with the strategy asked for before the manager starts (the manager keeps a strategy it finds). */
async function createClusterManagementAddOn(hub: KubeClient, definition: AddonDefinition, strategy: InstallStrategy): Promise<void> {
  try {
    await hub.post(collectionPath(ADDON_API, 'ClusterManagementAddOn'), clusterManagementAddOn({ ...definition, install: strategy }));
  } catch (err) {
    if (!isStatus(err, 409)) throw err;
  }
}

/** Installs a per-cluster addon's manager (and the Placements and ClusterManagementAddOn of the strategy) when it is not installed. */
async function installPerClusterAddon(hub: KubeClient, addon: AddonName, options: EnableOptions): Promise<{ strategy: InstallStrategy; changed: string[] }> {
  const current = await currentInstallStrategy(hub, addon);
  const strategy = current && current !== 'AllClusters' ? current : strategyForNewInstall(addon, options.clusters);
  const changed = await applyPlacements(hub, addon, strategy);
  if (!current) {
    await createClusterManagementAddOn(hub, await perClusterDefinition(addon), strategy);
    changed.push(`ClusterManagementAddOn/${addon} created (installStrategy ${describeInstallStrategy(strategy)})`);
  }
  changed.push(...(await installAddonManager(hub, addon, '', options.image)));
  return { strategy, changed };
}

/**
 * At `up`: the Placements of the addon's install strategy (its ClusterManagementAddOn's, else its
 * default), created as upstream's charts create them. Returns the strategy and what changed.
 */
export async function ensureLabAddonPlacements(hub: KubeClient, addon: AddonName): Promise<{ strategy: InstallStrategy | 'AllClusters'; changed: string[] }> {
  const strategy = (await currentInstallStrategy(hub, addon)) ?? addonInstall(addon);
  return { strategy, changed: await applyPlacements(hub, addon, strategy) };
}

/** Enables the addon on the chosen clusters (under Placements: those the Placement decides) and waits until it is Available there. */
export async function enableAddon(hub: KubeClient, options: EnableOptions): Promise<EnableResult> {
  const { addon, progress } = options;
  let clusters = chosenClusters(options.clusters, options.spokes);
  const wait = () => waitForAddonAvailable(hub, addon, clusters, { timeoutMs: options.timeoutMs, progress, diagnostics: () => managerDiagnostics(hub, addon) });
  let strategy: InstallStrategy | 'AllClusters' | null;
  let managerInstalled = false;
  if (enabledPerCluster(addon)) {
    const installed = await installPerClusterAddon(hub, addon, options);
    strategy = installed.strategy;
    managerInstalled = installed.changed.some((c) => c.startsWith('Deployment/'));
    progress?.(installed.changed.length ? `${addon}: ${installed.changed.join(', ')}` : `${addon} manager in place`);
  } else {
    if (!(await managerRunning(hub, addon))) {
      throw new InvalidInputError(`${addon} is not installed on this lab`, { hint: `add it to 'addons:' in the lab file and run 'ocm-lab up'` });
    }
    strategy = await currentInstallStrategy(hub, addon);
    if (strategy === 'AllClusters' && options.clusters?.length && clusters.length !== options.spokes.length) {
      throw new InvalidInputError(`${addon} cannot be enabled on some clusters only: its manager installs it on every managed cluster`, {
        hint: `run 'ocm-lab addon enable ${addon}' without --cluster`,
      });
    }
  }
  if (strategy && strategy !== 'AllClusters' && strategy.type === 'Placements') {
    const decided = await waitForDecisions(hub, strategy, options.timeoutMs);
    const undecided = clusters.filter((c) => !decided.has(c));
    if (options.clusters?.length && undecided.length) throw placementRefusal(addon, strategy, 'enable', undecided);
    clusters = clusters.filter((c) => decided.has(c));
    progress?.(`${addon}: Placement decides ${clusters.join(', ') || 'no cluster of this lab'}`);
    return { addon, managerInstalled, createdOn: [], states: await wait() };
  }
  const createdOn = strategy && strategy !== 'AllClusters' ? await ensureManagedClusterAddOns(hub, addon, clusters) : [];
  if (createdOn.length) progress?.(`ManagedClusterAddOn ${addon} created in ${createdOn.join(', ')}`);
  return { addon, managerInstalled, createdOn, states: await wait() };
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
  const strategy = await currentInstallStrategy(hub, addon);
  const placements = strategy && strategy !== 'AllClusters' && strategy.type === 'Placements' ? strategy : null;
  if (!enabledPerCluster(addon)) {
    const decides = placements ? ` its Placement decides (installStrategy ${describeInstallStrategy(placements)})` : '';
    throw new InvalidInputError(`${addon} cannot be disabled: its manager installs it on every managed cluster${decides} of the lab`, {
      hint: `remove it from the lab file's addons: list (ocm-lab down, then up), or disable one of: ${perClusterAddons().join(', ')}`,
    });
  }
  const clusters = chosenClusters(options.clusters, options.spokes);
  if (placements && clusters.length !== options.spokes.length) throw placementRefusal(addon, placements, 'disable', clusters);
  const removal: RemovalOptions = { timeoutMs: options.timeoutMs, progress: options.progress };
  const deleted: string[] = [];
  // Under Placements the manager would re-create what follows: it stops first, and the Placements go.
  if (placements) deleted.push(...(await stopManager(hub, addon, removal)), ...(await removePlacementObjects(hub, addon, removal)));
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
  const definition = await perClusterDefinition(addon);
  deleted.push(
    ...(await deleteAndWait(
      hub,
      clusters.flatMap((c) => hubPermissionObjects(definition, c)),
      `the ${addon} agents' hub permissions`,
      removal,
    )),
  );
  for (const cluster of clusters) deleted.push(...(await removeAgentLeftovers(cluster, definition, options, removal)));

  const left = (await hub.get<{ items: KubeObject[] }>(collectionPath(ADDON_API, 'ManagedClusterAddOn'), { fieldSelector: `metadata.name=${addon}` })).items;
  const managerRemoved = left.length === 0;
  if (managerRemoved) deleted.push(...(await removeManager(hub, addon, removal)));
  return { addon, disabledOn: clusters, managerRemoved, deleted };
}

/**
 * On the cluster: what the agent left (its definition's clusterLeftovers: helloworld's copies),
 * and the hub kubeconfig Secret if the registration agent left it.
 */
async function removeAgentLeftovers(cluster: string, definition: AddonDefinition, options: DisableOptions, removal: RemovalOptions): Promise<string[]> {
  const leftovers = builtinAddon(options.addon).clusterLeftovers;
  const spoke = await options.spokeClient(cluster);
  if (!spoke) {
    removal.progress?.(`${cluster}: no admin kubeconfig, ${leftovers?.stays ?? `the ${options.addon} agent's hub kubeconfig Secret`} stay`);
    return [];
  }
  try {
    const found = leftovers ? await leftovers.find(spoke) : [];
    const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: hubKubeconfigSecretName(options.addon), namespace: definition.installNamespace } };
    const title = `${cluster}: the ${options.addon} agent's ${leftovers?.title ?? 'hub kubeconfig Secret'}`;
    return (await deleteAndWait(spoke, [...found, secret], title, removal)).map((d) => `${cluster}: ${d}`);
  } finally {
    spoke.close();
  }
}

/** Stops the addon's manager: its Deployment and pods gone. */
async function stopManager(hub: KubeClient, addon: AddonName, removal: RemovalOptions): Promise<string[]> {
  const deployments = managerObjects(addon, '').filter((o) => o.kind === 'Deployment');
  const deleted = await deleteAndWait(hub, deployments, `stopping the ${addon} manager`, removal);
  const pods = await labelledObjects(hub, 'v1', 'Pod', `/api/v1/namespaces/${ADDON_MANAGER_NAMESPACE}/pods`, `app=${managerName(addon)}`);
  await waitGone(hub, pods, `the ${addon} manager pods`, removal);
  return deleted;
}

/** The manager first (so nothing recreates what follows), then the ClusterManagementAddOn, the manager's identity and the addon's CSRs. */
async function removeManager(hub: KubeClient, addon: AddonName, removal: RemovalOptions): Promise<string[]> {
  const objects = managerObjects(addon, '').filter((o) => o.kind !== 'Namespace' && o.kind !== 'Deployment');
  const deleted = await stopManager(hub, addon, removal);
  const csrs = await labelledObjects(
    hub,
    'certificates.k8s.io/v1',
    'CertificateSigningRequest',
    '/apis/certificates.k8s.io/v1/certificatesigningrequests',
    `${ADDON_NAME_LABEL}=${addon}`,
  );
  const cma = { apiVersion: ADDON_API, kind: 'ClusterManagementAddOn', metadata: { name: addon } };
  deleted.push(...(await deleteAndWait(hub, [cma, ...objects, ...csrs], `the ${addon} hub objects`, removal)));
  deleted.push(...(await removePlacementObjects(hub, addon, removal)));
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
  for (const addon of perClusterAddons()) {
    if (labFileAddons.includes(addon)) continue;
    if (await getOrNull(hub, objectPath({ apiVersion: ADDON_API, kind: 'ClusterManagementAddOn', metadata: { name: addon } }))) enabled.push(addon);
  }
  return [...builtinAddonNames().filter((a) => labFileAddons.includes(a)), ...enabled];
}
