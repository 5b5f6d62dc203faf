import type { KubeClient } from '../../kube/client.js';
import { decideAddonCsr, type CertificateSigningRequest } from './csr.js';
import { agentDeployments, deploymentAvailability, deploymentFeedbackConfigs } from './deployment-health.js';
import { agentInstallNamespace, agentValues, applyDeploymentConfig, containerIdProblem } from './agent-config.js';
import {
  AddonConfigError,
  ADC_API,
  ADC_GROUP,
  ADC_RESOURCE,
  configSpecHashes,
  configStatus,
  desiredDeploymentConfig,
  specHash,
  WORK_CONFIG_SPEC_HASH_ANNOTATION,
  withDesiredConfig,
  type AddOnConfig,
  type AddOnDeploymentConfig,
  type ConfigReference,
  type ConfigReferent,
  type ConfigState,
  type EffectiveDeploymentConfig,
} from './deployment-config.js';
import {
  ADDON_API,
  ADDON_NAME_LABEL,
  agentGroup,
  agentSubject,
  CLUSTER_API,
  deployWorkName,
  KUBE_CLIENT_SIGNER,
  LIFECYCLE_ANNOTATION,
  LIFECYCLE_SELF,
  WORK_API,
} from './names.js';
import {
  applyObject,
  collectionPath,
  conditionOf,
  deleteIfPresent,
  getOrNull,
  objectPath,
  setCondition,
  type Condition,
  type KubeObject,
} from '../../kube/objects.js';
import type { AddonDefinition, HealthCheck } from './types.js';
import { workDeleteOption } from './orphaning.js';
import { clusterImageRegistries, overrideAgentImages } from './image-registries.js';
import { RBAC_GROUP, role, roleBinding } from '../../kube/builders.js';
import {
  clusterManagementInstallStrategy,
  decidedClusters,
  describeInstallStrategy,
  installChanges,
  installStrategyOf,
  placementDecisions,
  placementPath,
  type InstallStrategy,
  type PlacementDecision,
  type PlacementRef,
} from './install-strategy.js';

interface ManagedCluster extends KubeObject {
  spec?: { hubAcceptsClient?: boolean };
  status?: { conditions?: Condition[] };
}

export interface ManagedClusterAddOn extends KubeObject {
  spec?: { installNamespace?: string; configs?: AddOnConfig[] };
  status?: {
    namespace?: string;
    configReferences?: ConfigReference[];
    supportedConfigs?: { group: string; resource: string }[];
    conditions?: Condition[];
    registrations?: { signerName: string; subject?: { user?: string; groups?: string[] } }[];
    healthCheck?: { mode?: string };
    [field: string]: unknown;
  };
}

const mcaRef = (addon: string, cluster: string) => ({ apiVersion: ADDON_API, kind: 'ManagedClusterAddOn', metadata: { name: addon, namespace: cluster } });

export interface ReconcileSummary {
  clusters: string[];
  changed: string[];
  approvedCsrs: string[];
}

interface SupportedConfig {
  group: string;
  resource: string;
  defaultConfig?: ConfigReferent;
}

export interface ClusterManagementAddOn extends KubeObject {
  spec?: { supportedConfigs?: SupportedConfig[]; [field: string]: unknown };
}

/**
 * The ClusterManagementAddOn an addon's manager keeps. Every addon on the framework supports
 * AddOnDeploymentConfig; its default is the addon's own, else the one already on the object
 * (a user's `kubectl edit` is kept).
 */
export function clusterManagementAddOn(addon: AddonDefinition, existing?: ClusterManagementAddOn | null): ClusterManagementAddOn {
  const userDefault = existing?.spec?.supportedConfigs?.find((c) => c.group === ADC_GROUP && c.resource === ADC_RESOURCE)?.defaultConfig;
  const defaultConfig = addon.defaultDeploymentConfig ?? (userDefault?.name ? userDefault : undefined);
  return {
    apiVersion: ADDON_API,
    kind: 'ClusterManagementAddOn',
    metadata: { name: addon.name, annotations: { [LIFECYCLE_ANNOTATION]: LIFECYCLE_SELF } },
    spec: {
      addOnMeta: { displayName: addon.displayName, description: addon.description },
      supportedConfigs: [{ group: ADC_GROUP, resource: ADC_RESOURCE, ...(defaultConfig ? { defaultConfig: { ...defaultConfig } } : {}) }],
      installStrategy: clusterManagementInstallStrategy(addon.install ?? 'AllClusters', installStrategyOf(existing)),
    },
  };
}

/**
 * Reads the AddOnDeploymentConfig a cluster's addon names; a problem (missing, no namespace,
 * a malformed containerID) instead when it cannot be used.
 */
async function readDeploymentConfig(hub: KubeClient, referent: ConfigReferent): Promise<{ config?: EffectiveDeploymentConfig; problem?: string }> {
  if (!referent.namespace)
    return {
      problem: `AddOnDeploymentConfig ${referent.name} has no namespace: name it as {namespace, name} in spec.configs or supportedConfigs[].defaultConfig`,
    };
  const id = `AddOnDeploymentConfig ${referent.namespace}/${referent.name}`;
  const adc = await getOrNull<AddOnDeploymentConfig>(
    hub,
    `/apis/${ADC_API}/namespaces/${encodeURIComponent(referent.namespace)}/${ADC_RESOURCE}/${encodeURIComponent(referent.name)}`,
  );
  if (!adc) return { problem: `${id} does not exist: create it, or remove it from spec.configs / supportedConfigs[].defaultConfig` };
  const problem = containerIdProblem(adc.spec?.resourceRequirements);
  if (problem) return { problem: `${id}: ${problem}` };
  return {
    config: {
      referent,
      specHash: specHash(adc as unknown as Record<string, unknown>),
      generation: (adc.metadata as { generation?: number }).generation,
      spec: adc.spec ?? {},
    },
  };
}

/** The hub Role and RoleBinding in the cluster's namespace that the agent's hub identity gets. */
export function hubPermissionObjects(addon: AddonDefinition, cluster: string): KubeObject[] {
  if (!addon.hubPermissions) return [];
  const name = `open-cluster-management:addon:${addon.name}:agent`;
  const labels = { [ADDON_NAME_LABEL]: addon.name };
  return [
    role({ name, namespace: cluster, labels }, addon.hubPermissions),
    roleBinding({ name, namespace: cluster, labels }, [{ apiGroup: RBAC_GROUP, kind: 'Group', name: agentGroup(cluster, addon.name) }]),
  ];
}

/**
 * The ManifestWork that delivers the agent, owned by the ManagedClusterAddOn (deleted with it);
 * under DeploymentAvailability health it asks for the agent Deployments' status feedback. Its
 * deleteOption orphans what the agent shares (orphaning.ts), so neither the addon's removal nor a
 * move of its agent deletes a namespace another addon or a user still uses.
 */
export function deployWork(addon: AddonDefinition, mca: ManagedClusterAddOn, manifests: KubeObject[], configReferences: ConfigReference[] = []): KubeObject {
  const manifestConfigs = healthCheckOf(addon) === 'DeploymentAvailability' ? deploymentFeedbackConfigs(manifests) : [];
  const hashes = configSpecHashes(configReferences);
  const deleteOption = workDeleteOption(manifests, addon.installNamespace);
  return {
    apiVersion: WORK_API,
    kind: 'ManifestWork',
    metadata: {
      name: deployWorkName(addon.name),
      namespace: mca.metadata.namespace,
      labels: { [ADDON_NAME_LABEL]: addon.name },
      // Which configs the work was rendered from: lastAppliedConfig follows once it is applied.
      ...(Object.keys(hashes).length ? { annotations: { [WORK_CONFIG_SPEC_HASH_ANNOTATION]: JSON.stringify(hashes) } } : {}),
      ownerReferences: [
        {
          apiVersion: ADDON_API,
          kind: 'ManagedClusterAddOn',
          name: mca.metadata.name,
          uid: mca.metadata.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: { workload: { manifests }, ...(deleteOption ? { deleteOption } : {}), ...(manifestConfigs.length ? { manifestConfigs } : {}) },
  };
}

function healthCheckOf(addon: AddonDefinition): HealthCheck {
  return addon.healthCheck ?? 'DeploymentAvailability';
}

/**
 * The Available condition the manager sets for one cluster on this pass, or null to leave it:
 * while the cluster itself is Unknown (its klusterlet stopped reporting) the hub's registration
 * controller owns the addons' Available, as with upstream's addon-framework.
 */
export function managerAvailability(
  addon: AddonDefinition,
  cluster: { status?: { conditions?: Condition[] } } | undefined,
  manifests: KubeObject[],
  work: KubeObject | null,
): Condition | null {
  if (conditionOf(cluster, 'ManagedClusterConditionAvailable')?.status === 'Unknown') return null;
  return deploymentAvailability(addon.name, agentDeployments(manifests), work);
}

/**
 * The status the manager owns on a ManagedClusterAddOn: install namespace, health check mode
 * `Customized`, the registration (signer + subject) the spoke's registration agent acts on, and the
 * RegistrationApplied / ManifestApplied conditions, and Available when opts.available says so.
 * Conditions set by others (ClusterCertificateRotated) are kept. Returns null when nothing changes.
 */
export function desiredAddonStatus(
  addon: AddonDefinition,
  mca: ManagedClusterAddOn,
  work: KubeObject | null,
  opts: { noManifests?: boolean; available?: Condition | null; config?: ConfigState; installNamespace?: string } = {},
): ManagedClusterAddOn['status'] | null {
  const cluster = mca.metadata.namespace ?? '';
  const current = mca.status ?? {};
  const registrations = addon.hubPermissions ? [{ signerName: KUBE_CLIENT_SIGNER, subject: agentSubject(cluster, addon.name) }] : [];
  const conditions = [...(current.conditions ?? [])];
  let changed = setCondition(conditions, {
    type: 'RegistrationApplied',
    status: 'True',
    reason: 'SetPermissionApplied',
    message: addon.hubPermissions ? `hub permissions granted to group ${agentGroup(cluster, addon.name)}` : 'the agent needs no hub credentials',
  });
  const applied = conditionOf(work, 'Applied');
  changed =
    setCondition(
      conditions,
      opts.noManifests
        ? { type: 'ManifestApplied', status: 'True', reason: 'NoManifests', message: 'the addon runs on the hub only: nothing to apply on the cluster' }
        : applied?.status === 'True'
          ? { type: 'ManifestApplied', status: 'True', reason: 'AddonManifestApplied', message: `manifests of ${deployWorkName(addon.name)} are applied` }
          : applied?.status === 'False'
            ? {
                type: 'ManifestApplied',
                status: 'False',
                reason: 'ManifestWorkApplyFailed',
                message: applied.message || `${deployWorkName(addon.name)} could not be applied`,
              }
            : {
                type: 'ManifestApplied',
                status: 'Unknown',
                reason: 'ManifestWorkPending',
                message: `waiting for the cluster to apply ${deployWorkName(addon.name)}`,
              },
    ) || changed;
  // Customized mode: the manager judges Available (upstream's registration agent then leaves it alone).
  if (opts.available) changed = setCondition(conditions, opts.available) || changed;
  const mode = 'Customized';
  // status.namespace is where the registration agent writes the agent's hub kubeconfig: the agent's namespace.
  const next: NonNullable<ManagedClusterAddOn['status']> = {
    ...current,
    namespace: opts.installNamespace ?? addon.installNamespace,
    healthCheck: { mode },
    registrations,
    conditions,
  };
  let sameConfigs = true;
  if (opts.config) {
    const configs = configStatus({ ...opts.config, noManifests: opts.config.noManifests ?? opts.noManifests }, work);
    for (const c of configs.conditions) changed = setCondition(conditions, c) || changed;
    next.configReferences = configs.references;
    next.supportedConfigs = [{ group: ADC_GROUP, resource: ADC_RESOURCE }];
    sameConfigs =
      JSON.stringify(current.configReferences ?? []) === JSON.stringify(next.configReferences) &&
      JSON.stringify(current.supportedConfigs ?? []) === JSON.stringify(next.supportedConfigs);
  }
  const sameShape =
    current.namespace === next.namespace &&
    current.healthCheck?.mode === mode &&
    JSON.stringify(current.registrations ?? []) === JSON.stringify(registrations) &&
    sameConfigs;
  return changed || !sameShape ? next : null;
}

/**
 * One addon's hub manager, as the addon-framework's: keeps the ClusterManagementAddOn,
 * installs the addon on every accepted cluster (a ManagedClusterAddOn each), renders
 * the agent into a ManifestWork, grants hub permissions, approves the agents' CSRs and
 * reports status. A polling reconcile: a few objects per cluster, so a pass is cheap.
 */
export class AddonManager {
  constructor(
    private readonly hub: KubeClient,
    readonly addon: AddonDefinition,
    private readonly log: (line: string) => void = () => undefined,
  ) {}

  async reconcileOnce(): Promise<ReconcileSummary> {
    const summary: ReconcileSummary = { clusters: [], changed: [], approvedCsrs: [] };
    const note = (what: string, result: string) => {
      if (result !== 'unchanged') summary.changed.push(`${what} ${result}`);
    };
    const existingCma = await getOrNull<ClusterManagementAddOn>(
      this.hub,
      objectPath({ apiVersion: ADDON_API, kind: 'ClusterManagementAddOn', metadata: { name: this.addon.name } }),
    );
    const cma = clusterManagementAddOn(this.addon, existingCma);
    note(`ClusterManagementAddOn/${this.addon.name}`, await applyObject(this.hub, cma));
    if (this.addon.reconcileHub) await this.addon.reconcileHub(this.hub);

    const clusters = (await this.hub.get<{ items: ManagedCluster[] }>(collectionPath(CLUSTER_API, 'ManagedCluster'))).items.filter(
      (c) => c.spec?.hubAcceptsClient && !c.metadata.deletionTimestamp,
    );
    const clusterNames = new Set(clusters.map((c) => c.metadata.name));
    const clusterByName = new Map(clusters.map((c) => [c.metadata.name, c]));
    const listed = async () =>
      (
        await this.hub.get<{ items: ManagedClusterAddOn[] }>(collectionPath(ADDON_API, 'ManagedClusterAddOn'), {
          fieldSelector: `metadata.name=${this.addon.name}`,
        })
      ).items.map((m) => ({ ...m, apiVersion: ADDON_API, kind: 'ManagedClusterAddOn' }));
    let mcas = await listed();
    const strategy =
      this.addon.install === undefined || this.addon.install === 'AllClusters' ? 'AllClusters' : (installStrategyOf(cma) ?? { type: 'Manual' as const });
    const decided = strategy !== 'AllClusters' && strategy.type === 'Placements' ? await this.decidedClusters(strategy.placements) : undefined;
    // A Placement that could not be read leaves the ManagedClusterAddOns as they are this pass.
    if (decided !== null) {
      const changes = installChanges(strategy, { existing: mcas.map((m) => m.metadata.namespace ?? ''), accepted: clusterNames, decided });
      const owner = strategy === 'AllClusters' ? undefined : await this.ownerOf(existingCma);
      for (const cluster of changes.create) await this.createAddon(cluster, strategy, owner, summary);
      for (const cluster of changes.remove) {
        if (await deleteIfPresent(this.hub, objectPath(mcaRef(this.addon.name, cluster))))
          summary.changed.push(
            `ManagedClusterAddOn ${cluster}/${this.addon.name} deleted (installStrategy ${describeInstallStrategy(strategy)}: no decision lists ${cluster})`,
          );
      }
      if (changes.create.length || changes.remove.length) mcas = await listed();
    }
    for (const mca of mcas) {
      const cluster = mca.metadata.namespace ?? '';
      if (mca.metadata.deletionTimestamp || !clusterNames.has(cluster)) continue;
      summary.clusters.push(cluster);
      try {
        await this.reconcileCluster(mca, clusterByName.get(cluster), cma, note);
      } catch (err) {
        this.log(`${cluster}: ${(err as Error).message}`);
      }
    }
    summary.approvedCsrs = await this.approveCsrs();
    return summary;
  }

  private async reconcileCluster(
    mca: ManagedClusterAddOn,
    managedCluster: ManagedCluster | undefined,
    cma: ClusterManagementAddOn,
    note: (what: string, result: string) => void,
  ): Promise<void> {
    const cluster = mca.metadata.namespace ?? '';
    for (const obj of hubPermissionObjects(this.addon, cluster)) note(`${obj.kind} ${cluster}/${obj.metadata.name}`, await applyObject(this.hub, obj));
    const referent = desiredDeploymentConfig(cma.spec?.supportedConfigs, mca.spec?.configs);
    const read: { config?: EffectiveDeploymentConfig; problem?: string; problemReason?: string } = referent
      ? await readDeploymentConfig(this.hub, referent)
      : {};
    const use = this.addon.deploymentConfigUse;
    let rendered: KubeObject[] = [];
    if (!read.problem) {
      try {
        rendered = await this.addon.agentManifests(cluster, this.hub, agentValues(read.config?.spec, this.addon.installNamespace, use));
      } catch (err) {
        if (!(err instanceof AddonConfigError)) throw err;
        read.problemReason = err.reason;
        read.problem =
          referent && err.reason === 'ConfigurationsNotValid' ? `AddOnDeploymentConfig ${referent.namespace}/${referent.name}: ${err.message}` : err.message;
      }
    }
    const clusterRegistries = clusterImageRegistries(managedCluster?.metadata.annotations);
    if ('problem' in clusterRegistries) read.problem ??= `ManagedCluster ${cluster}: ${clusterRegistries.problem}`;
    const references = withDesiredConfig(mca.status?.configReferences, read.config ?? (referent ? { referent, specHash: '' } : null));
    const installNamespace = agentInstallNamespace(read.config?.spec, this.addon.installNamespace, use);
    if (read.problem) {
      // As upstream: an unusable config leaves the agent as it was; the MCA's Configured condition says why.
      const current = await getOrNull<KubeObject>(this.hub, objectPath(deployWork(this.addon, mca, [])));
      const status = desiredAddonStatus(this.addon, mca, current, {
        config: { references, problem: read.problem, ...(read.problemReason ? { problemReason: read.problemReason } : {}) },
        installNamespace: mca.status?.namespace,
      });
      if (status) {
        await this.hub.put(`${objectPath(mca)}/status`, { ...mca, status });
        note(`ManagedClusterAddOn ${cluster}/${this.addon.name} status`, `updated (${read.problem})`);
      }
      return;
    }
    const configured = applyDeploymentConfig(rendered, read.config ?? null, { addonName: this.addon.name, defaultNamespace: this.addon.installNamespace, use });
    const manifests = overrideAgentImages(configured, read.config?.spec.registries, 'registries' in clusterRegistries ? clusterRegistries.registries : []);
    const work = deployWork(this.addon, mca, manifests, references);
    if (manifests.length) note(`ManifestWork ${cluster}/${work.metadata.name}`, await applyObject(this.hub, work));
    else if (await deleteIfPresent(this.hub, objectPath(work))) note(`ManifestWork ${cluster}/${work.metadata.name}`, 'deleted');
    const current = manifests.length ? await getOrNull<KubeObject>(this.hub, objectPath(work)) : null;
    const available =
      healthCheckOf(this.addon) === 'Customized'
        ? this.addon.clusterAvailability
          ? await this.addon.clusterAvailability(cluster, this.hub)
          : null
        : managerAvailability(this.addon, managedCluster, manifests, current);
    const status = desiredAddonStatus(this.addon, mca, current, { noManifests: manifests.length === 0, available, config: { references }, installNamespace });
    if (status) {
      // A PUT with the resourceVersion we read: a concurrent status change (the registration
      // agent's Available) makes it fail with 409 and the next pass tries again.
      await this.hub.put(`${objectPath(mca)}/status`, { ...mca, status });
      note(`ManagedClusterAddOn ${cluster}/${this.addon.name} status`, 'updated');
    }
  }

  /** The clusters the Placements decide, or null when one could not be read (a missing Placement decides none, as upstream). */
  private async decidedClusters(placements: readonly PlacementRef[]): Promise<Set<string> | null> {
    const decisions: PlacementDecision[] = [];
    try {
      for (const placement of placements) {
        if (!(await getOrNull(this.hub, placementPath(placement)))) continue;
        decisions.push(...(await placementDecisions(this.hub, placement)));
      }
    } catch (err) {
      this.log(`cannot read the decisions of ${placements.map((p) => `${p.namespace}/${p.name}`).join(', ')}: ${(err as Error).message}`);
      return null;
    }
    return decidedClusters(decisions);
  }

  /** The ClusterManagementAddOn as owner of the ManagedClusterAddOns it installs (upstream's controller reference). */
  private async ownerOf(cma: ClusterManagementAddOn | null): Promise<KubeObject['metadata']['ownerReferences']> {
    const current = cma?.metadata.uid ? cma : await getOrNull<ClusterManagementAddOn>(this.hub, objectPath(clusterManagementAddOn(this.addon)));
    if (!current?.metadata.uid) return undefined;
    return [
      { apiVersion: ADDON_API, kind: 'ClusterManagementAddOn', name: this.addon.name, uid: current.metadata.uid, controller: true, blockOwnerDeletion: true },
    ];
  }

  private async createAddon(
    cluster: string,
    strategy: InstallStrategy | 'AllClusters',
    ownerReferences: KubeObject['metadata']['ownerReferences'],
    summary: ReconcileSummary,
  ): Promise<void> {
    try {
      await this.hub.post(collectionPath(ADDON_API, 'ManagedClusterAddOn', cluster), {
        ...mcaRef(this.addon.name, cluster),
        metadata: { name: this.addon.name, namespace: cluster, ...(ownerReferences ? { ownerReferences } : {}) },
        spec: { installNamespace: this.addon.installNamespace },
      });
      const why = strategy === 'AllClusters' ? '' : ` (installStrategy ${describeInstallStrategy(strategy)})`;
      summary.changed.push(`ManagedClusterAddOn ${cluster}/${this.addon.name} created${why}`);
    } catch (err) {
      this.log(`cannot create ManagedClusterAddOn ${cluster}/${this.addon.name}: ${(err as Error).message}`);
    }
  }

  private async approveCsrs(): Promise<string[]> {
    const approved: string[] = [];
    const csrs = (
      await this.hub.get<{ items: CertificateSigningRequest[] }>('/apis/certificates.k8s.io/v1/certificatesigningrequests', {
        labelSelector: `${ADDON_NAME_LABEL}=${this.addon.name}`,
      })
    ).items;
    for (const csr of csrs) {
      const decision = decideAddonCsr(csr, this.addon.name);
      if (!decision.approve) {
        if (decision.why !== 'already decided') this.log(`leaving CSR ${csr.metadata.name} alone: ${decision.why}`);
        continue;
      }
      const conditions = [
        ...(csr.status?.conditions ?? []),
        {
          type: 'Approved',
          status: 'True',
          reason: 'AutoApprovedByAddonManager',
          message: `approved by the ${this.addon.name} addon manager`,
          lastUpdateTime: new Date().toISOString(),
        },
      ];
      await this.hub.put(`/apis/certificates.k8s.io/v1/certificatesigningrequests/${csr.metadata.name}/approval`, {
        ...csr,
        status: { ...csr.status, conditions },
      });
      approved.push(csr.metadata.name);
    }
    return approved;
  }

  /** One pass that logs what it changed. */
  async reconcileAndLog(): Promise<void> {
    const s = await this.reconcileOnce();
    for (const c of s.changed) this.log(c);
    for (const c of s.approvedCsrs) this.log(`approved CSR ${c}`);
  }
}
