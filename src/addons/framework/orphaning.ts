import { collectionPath, type KubeObject } from '../../kube/objects.js';
import { AGENT_ADDON_NAMESPACE } from '../../ocm/constants.js';

/**
 * Which of an addon's agent objects its ManifestWork must never delete on a cluster: the work
 * agent deletes what a work applied when the work goes (addon removed) and when an object leaves
 * the work's manifests (agent moved by an AddOnDeploymentConfig), unless the work's
 * `spec.deleteOption` orphans it. Orphaned: every object annotated
 * `addon.open-cluster-management.io/deletion-orphan` (as upstream's addon-framework does), and every
 * Namespace the addon does not own alone — the klusterlet's addon namespace, where other addons
 * run, and any namespace other than the addon's own install namespace (one an
 * agentInstallNamespace names belongs to someone else: a user, or another addon).
 */

/** On an agent manifest: the addon's removal leaves it on the cluster (upstream's annotation). */
export const DELETION_ORPHAN_ANNOTATION = 'addon.open-cluster-management.io/deletion-orphan';

/** One entry of a ManifestWork's `spec.deleteOption.selectivelyOrphans.orphaningRules`. */
interface OrphaningRule {
  group: string;
  resource: string;
  namespace: string;
  name: string;
}

interface WorkDeleteOption {
  propagationPolicy: 'SelectivelyOrphan';
  selectivelyOrphans: { orphaningRules: OrphaningRule[] };
}

/** Whether a Namespace manifest may go with the addon: only the addon's own install namespace, and never the klusterlet's. */
function ownedNamespace(name: string, ownNamespace: string): boolean {
  return name === ownNamespace && name !== AGENT_ADDON_NAMESPACE;
}

/** The resource name the work agent keys a rule by (the API path's last segment; a guess for kinds we do not know). */
function resourceOf(obj: KubeObject): string {
  try {
    return collectionPath(obj.apiVersion, obj.kind).split('/').pop()!;
  } catch {
    const kind = obj.kind.toLowerCase();
    return kind.endsWith('s') ? `${kind}es` : kind.endsWith('y') ? `${kind.slice(0, -1)}ies` : `${kind}s`;
  }
}

/** The orphaning rules for an addon's agent manifests; `ownNamespace` is the addon's own install namespace. */
export function orphaningRules(manifests: readonly KubeObject[], ownNamespace: string): OrphaningRule[] {
  const rules: OrphaningRule[] = [];
  for (const obj of manifests) {
    const annotated = obj.metadata.annotations?.[DELETION_ORPHAN_ANNOTATION] !== undefined;
    const sharedNamespace = obj.apiVersion === 'v1' && obj.kind === 'Namespace' && !ownedNamespace(obj.metadata.name, ownNamespace);
    if (!annotated && !sharedNamespace) continue;
    const group = obj.apiVersion.includes('/') ? obj.apiVersion.split('/')[0]! : '';
    rules.push({ group, resource: resourceOf(obj), namespace: obj.metadata.namespace ?? '', name: obj.metadata.name });
  }
  return rules;
}

/** The work's deleteOption: SelectivelyOrphan with the rules, or undefined (the default, Foreground) when nothing is orphaned. */
export function workDeleteOption(manifests: readonly KubeObject[], ownNamespace: string): WorkDeleteOption | undefined {
  const rules = orphaningRules(manifests, ownNamespace);
  return rules.length ? { propagationPolicy: 'SelectivelyOrphan', selectivelyOrphans: { orphaningRules: rules } } : undefined;
}
