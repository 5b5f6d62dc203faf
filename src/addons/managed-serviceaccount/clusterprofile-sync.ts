import { isStatus, type KubeClient } from '../../kube/client.js';
import { collectionPath, deleteIfPresent, type KubeObject, objectPath } from '../../kube/objects.js';
import { CLUSTER_MANAGER_LABEL, CLUSTER_NAME_LABEL, CLUSTER_PROFILE_API, OCM_CLUSTER_MANAGER_NAME } from '../../ocm/clusterprofile.js';
import { MANAGED_LABEL, MSA_API } from './constants.js';
import type { ManagedServiceAccount } from './types.js';

/**
 * managed-serviceaccount's ClusterProfile credential sync (upstream's `ClusterProfileCredSyncer`,
 * v0.10.0, behind its ClusterProfileCredSyncer feature gate): the token Secret of every
 * ManagedServiceAccount labelled `sync-to-clusterprofile: "true"` is copied into the namespace of each
 * OCM ClusterProfile named like the MSA's namespace, as `<msa namespace>-<msa name>`, owned by that
 * profile. A copy whose MSA is gone (or lost the label) is deleted; one whose source Secret is missing
 * is left as it is until the source is back, as upstream does.
 */
const SYNC_LABEL = 'authentication.open-cluster-management.io/sync-to-clusterprofile';
export const SYNCED_FROM_LABEL = 'authentication.open-cluster-management.io/synced-from';

export interface Secret extends KubeObject {
  type?: string;
  data?: Record<string, string>;
}

export interface ClusterProfile extends KubeObject {
  spec?: { clusterManager?: { name?: string } };
  status?: Record<string, unknown> & { accessProviders?: AccessProvider[] };
}

export interface AccessProvider {
  name: string;
  cluster: { server?: string; 'certificate-authority-data'?: string; extensions?: { name: string; extension: Record<string, unknown> }[] };
}

/** The profiles OCM writes (upstream's filter): its cluster-manager label and a cluster name. */
function isOcmProfile(profile: ClusterProfile): boolean {
  const labels = profile.metadata.labels ?? {};
  return labels[CLUSTER_MANAGER_LABEL] === OCM_CLUSTER_MANAGER_NAME && CLUSTER_NAME_LABEL in labels;
}

const syncedSecretName = (msa: Pick<KubeObject, 'metadata'>) => `${msa.metadata.namespace}-${msa.metadata.name}`;

/** The copy of `source` for `profile`: same data, Opaque, labelled with its origin, owned (controller) by the profile. */
function syncedSecret(msa: ManagedServiceAccount, profile: ClusterProfile, source: Secret): Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: syncedSecretName(msa),
      namespace: profile.metadata.namespace,
      labels: { [SYNCED_FROM_LABEL]: syncedSecretName(msa) },
      ownerReferences: [
        { apiVersion: CLUSTER_PROFILE_API, kind: 'ClusterProfile', name: profile.metadata.name, uid: profile.metadata.uid ?? '', controller: true },
      ],
    },
    type: 'Opaque',
    data: { ...source.data },
  };
}

function sameData(a: Record<string, string> = {}, b: Record<string, string> = {}): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => b[k] === a[k]);
}

/** Upstream's rule: rewrite when the data changed or a desired label is missing or different. */
function needsUpdate(current: Secret, desired: Secret): boolean {
  if (!sameData(current.data, desired.data)) return true;
  return Object.entries(desired.metadata.labels ?? {}).some(([k, v]) => current.metadata.labels?.[k] !== v);
}

export interface ProfileSyncPlan {
  /** Copies to create (absent) or update (existing given). */
  write: { desired: Secret; existing?: Secret }[];
  /** Names of this profile's copies whose MSA is gone. */
  remove: string[];
}

/**
 * What one profile's namespace needs. `msas` are the labelled MSAs in the namespace named like the
 * profile, `sources` their namespace's Secrets by name, `synced` the Secrets carrying the synced-from
 * label in the profile's namespace. Pure, so the rules are unit-tested.
 */
export function planProfileSync(profile: ClusterProfile, msas: ManagedServiceAccount[], sources: Map<string, Secret>, synced: Secret[]): ProfileSyncPlan {
  const byName = new Map(synced.map((s) => [s.metadata.name, s]));
  const write: ProfileSyncPlan['write'] = [];
  for (const msa of msas) {
    const ref = msa.status?.tokenSecretRef?.name;
    const source = ref ? sources.get(ref) : undefined;
    if (!source) continue;
    const desired = syncedSecret(msa, profile, source);
    const existing = byName.get(desired.metadata.name);
    if (!existing || needsUpdate(existing, desired)) write.push({ desired, ...(existing ? { existing } : {}) });
  }
  const valid = new Set(msas.map(syncedSecretName));
  const remove = synced
    .filter((s) => (s.metadata.ownerReferences ?? []).some((o) => o.uid === profile.metadata.uid))
    .filter((s) => !valid.has(s.metadata.labels?.[SYNCED_FROM_LABEL] ?? ''))
    .map((s) => s.metadata.name);
  return { write, remove };
}

const list = async <T extends KubeObject>(hub: KubeClient, path: string, labelSelector?: string): Promise<T[]> =>
  (await hub.get<{ items: T[] }>(path, labelSelector ? { labelSelector } : undefined)).items;

/** Every OCM ClusterProfile on the hub; none when the hub does not serve the API (the lab's switch is off). */
export async function ocmProfiles(hub: KubeClient): Promise<ClusterProfile[]> {
  try {
    return (await list<ClusterProfile>(hub, collectionPath(CLUSTER_PROFILE_API, 'ClusterProfile'))).filter(isOcmProfile);
  } catch (err) {
    if (isStatus(err, 404)) return [];
    throw err;
  }
}

/** One pass over every OCM ClusterProfile; returns what changed. */
export async function syncClusterProfileCredentials(hub: KubeClient): Promise<string[]> {
  const profiles = await ocmProfiles(hub);
  if (!profiles.length) return [];
  const msas = await list<ManagedServiceAccount>(hub, collectionPath(MSA_API, 'ManagedServiceAccount'), `${SYNC_LABEL}=true`);
  const sources = await list<Secret>(hub, collectionPath('v1', 'Secret'), `${MANAGED_LABEL}=true`);
  const synced = await list<Secret>(hub, collectionPath('v1', 'Secret'), SYNCED_FROM_LABEL);
  const done: string[] = [];
  for (const profile of profiles) {
    const ns = profile.metadata.name;
    const plan = planProfileSync(
      profile,
      msas.filter((m) => m.metadata.namespace === ns && !m.metadata.deletionTimestamp),
      new Map(sources.filter((s) => s.metadata.namespace === ns).map((s) => [s.metadata.name, s])),
      synced.filter((s) => s.metadata.namespace === profile.metadata.namespace),
    );
    for (const { desired, existing } of plan.write) {
      const where = `${desired.metadata.namespace}/${desired.metadata.name}`;
      if (existing) {
        const body = { ...existing, data: desired.data, metadata: { ...existing.metadata, ...pick(desired.metadata) } };
        await hub.put(objectPath({ ...desired, apiVersion: 'v1', kind: 'Secret' }), { ...body, apiVersion: 'v1', kind: 'Secret' });
        done.push(`updated synced credential ${where}`);
      } else {
        await hub.post(collectionPath('v1', 'Secret', desired.metadata.namespace), desired);
        done.push(`created synced credential ${where}`);
      }
    }
    for (const name of plan.remove) {
      const path = objectPath({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: profile.metadata.namespace } });
      if (await deleteIfPresent(hub, path)) done.push(`deleted orphaned synced credential ${profile.metadata.namespace}/${name}`);
    }
  }
  return done;
}

/** Upstream's update replaces labels and owner references with the desired ones. */
const pick = (m: KubeObject['metadata']) => ({ labels: m.labels, ownerReferences: m.ownerReferences });
