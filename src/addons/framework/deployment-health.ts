import { conditionOf, type Condition, type KubeObject } from '../../kube/objects.js';

/**
 * Health by the agent Deployment's availability, as upstream addons judge it: the deploy
 * ManifestWork asks the cluster's work agent to report each agent Deployment's well-known
 * status (ReadyReplicas, Replicas, AvailableReplicas), and the manager turns that feedback
 * into the addon's Available condition (health check mode `Customized` on the ManagedClusterAddOn).
 */

/** A Deployment among an addon's agent manifests. */
export interface AgentDeployment {
  namespace: string;
  name: string;
  /** spec.replicas as written (a Deployment without it runs one replica). */
  replicas: number;
}

/** `spec.manifestConfigs[]` of a ManifestWork (work.open-cluster-management.io/v1), the fields we use. */
export interface ManifestConfigOption {
  resourceIdentifier: { group: string; resource: string; name: string; namespace: string };
  feedbackRules: { type: 'WellKnownStatus' }[];
  feedbackScrapeType: 'Watch' | 'Poll';
}

/** One entry of a ManifestWork's `status.resourceStatus.manifests[]`, the fields we read. */
interface ManifestStatus {
  resourceMeta?: { group?: string; resource?: string; name?: string; namespace?: string };
  statusFeedback?: { values?: { name: string; fieldValue?: { type?: string; integer?: number } }[] };
}

export function agentDeployments(manifests: KubeObject[]): AgentDeployment[] {
  return manifests
    .filter((m) => m.kind === 'Deployment' && m.apiVersion === 'apps/v1')
    .map((m) => {
      const replicas = (m.spec as { replicas?: number } | undefined)?.replicas;
      return { namespace: m.metadata.namespace ?? '', name: m.metadata.name, replicas: typeof replicas === 'number' ? replicas : 1 };
    });
}

/**
 * The deploy work's manifestConfigs: WellKnownStatus feedback for every agent Deployment.
 * Scrape type Watch: the work agent (OCM ≥ 1.1) watches the Deployment and reports a change at
 * once; with the default Poll it reports only on its status resync, every 10–19 s.
 */
export function deploymentFeedbackConfigs(manifests: KubeObject[]): ManifestConfigOption[] {
  return agentDeployments(manifests).map((d) => ({
    resourceIdentifier: { group: 'apps', resource: 'deployments', name: d.name, namespace: d.namespace },
    feedbackRules: [{ type: 'WellKnownStatus' }],
    feedbackScrapeType: 'Watch',
  }));
}

/**
 * The integer feedback values the work reports for one Deployment, by name; null when the work
 * reports none yet (not applied, or the work agent has not read the Deployment's status).
 */
export function deploymentFeedback(work: KubeObject | null, d: Pick<AgentDeployment, 'namespace' | 'name'>): Record<string, number> | null {
  const manifests = ((work?.status as { resourceStatus?: { manifests?: ManifestStatus[] } } | undefined)?.resourceStatus?.manifests ?? []) as ManifestStatus[];
  const entry = manifests.find(
    (m) =>
      m.resourceMeta?.group === 'apps' &&
      m.resourceMeta.resource === 'deployments' &&
      m.resourceMeta.name === d.name &&
      (m.resourceMeta.namespace ?? '') === d.namespace,
  );
  const values = entry?.statusFeedback?.values ?? [];
  if (values.length === 0) return null;
  const byName: Record<string, number> = {};
  for (const v of values) if (typeof v.fieldValue?.integer === 'number') byName[v.name] = v.fieldValue.integer;
  return byName;
}

// Reasons as upstream's addon API names them (addon/v1alpha1 AddonAvailableReason*), so tools that read them agree.
const REASON = {
  available: 'ProbeAvailable',
  unavailable: 'ProbeUnavailable',
  noResult: 'NoProbeResult',
  notApplied: 'WorkNotApplied',
  applyFailed: 'WorkApplyFailed',
} as const;

/**
 * Available from the deploy work's feedback: True when every agent Deployment that should run
 * (spec.replicas > 0) reports ReadyReplicas ≥ 1 (or has been scaled to zero since), False naming
 * the first one that does not, Unknown while the work is not applied or a Deployment has no
 * feedback yet (False when the work failed to apply).
 * A Deployment's status leaves out zero counts, so a missing ReadyReplicas next to other values means 0.
 */
export function deploymentAvailability(addon: string, deployments: AgentDeployment[], work: KubeObject | null): Condition {
  const watched = deployments.filter((d) => d.replicas > 0);
  if (watched.length === 0) {
    return { type: 'Available', status: 'True', reason: REASON.available, message: `${addon} has no agent Deployment to wait for` };
  }
  const applied = conditionOf(work, 'Applied');
  if (applied?.status === 'False') {
    return {
      type: 'Available',
      status: 'False',
      reason: REASON.applyFailed,
      message: `the agent's ManifestWork could not be applied: ${applied.message || applied.reason}`,
    };
  }
  if (applied?.status !== 'True') {
    return {
      type: 'Available',
      status: 'Unknown',
      reason: REASON.notApplied,
      message: "waiting for the cluster's work agent to apply the agent's ManifestWork",
    };
  }
  const pending: string[] = [];
  for (const d of watched) {
    const feedback = deploymentFeedback(work, d);
    const id = `Deployment ${d.namespace}/${d.name}`;
    if (!feedback) {
      pending.push(id);
      continue;
    }
    const replicas = feedback.Replicas ?? 0;
    const ready = feedback.ReadyReplicas ?? 0;
    if (replicas > 0 && ready < 1) {
      const available = feedback.AvailableReplicas ?? 0;
      return {
        type: 'Available',
        status: 'False',
        reason: REASON.unavailable,
        message: `${id} has no ready pod: ${ready} of ${replicas} replicas ready, ${available} available`,
      };
    }
  }
  if (pending.length) {
    return {
      type: 'Available',
      status: 'Unknown',
      reason: REASON.noResult,
      message: `waiting for the cluster's work agent to report the status of ${pending.join(', ')}`,
    };
  }
  const summary = watched.map((d) => {
    const f = deploymentFeedback(work, d) ?? {};
    return `${d.name} ${f.ReadyReplicas ?? 0}/${f.Replicas ?? 0} ready`;
  });
  return { type: 'Available', status: 'True', reason: REASON.available, message: `agent Deployments are ready: ${summary.join(', ')}` };
}
