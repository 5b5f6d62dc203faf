import { createHash } from 'node:crypto';
import { isStatus, type KubeClient } from './client.js';

/** A Kubernetes object as plain JSON. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: OwnerReference[];
    /** Set by the API server; bumped on every change of `spec`. */
    generation?: number;
    resourceVersion?: string;
    uid?: string;
    creationTimestamp?: string;
    deletionTimestamp?: string;
  };
  [field: string]: unknown;
}

interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime?: string;
  observedGeneration?: number;
}

/** A condition of an object the lab only reads: other controllers may leave out reason and message, or use other statuses. */
export type ObservedCondition = Pick<Condition, 'type'> & Partial<Omit<Condition, 'type' | 'status'>> & { status: string };

/** A Secret's `data` value from text. */
export function toBase64(text: string): string {
  return Buffer.from(text).toString('base64');
}

/** Text of a Secret's `data` value; '' when it is missing. */
export function fromBase64(value: string | undefined): string {
  return value ? Buffer.from(value, 'base64').toString('utf8') : '';
}

/** Resource names of the kinds the lab reads and writes (the lab has no discovery cache). */
const RESOURCES: Record<string, { resource: string; namespaced: boolean }> = {
  Namespace: { resource: 'namespaces', namespaced: false },
  ServiceAccount: { resource: 'serviceaccounts', namespaced: true },
  Secret: { resource: 'secrets', namespaced: true },
  ConfigMap: { resource: 'configmaps', namespaced: true },
  Service: { resource: 'services', namespaced: true },
  Pod: { resource: 'pods', namespaced: true },
  Role: { resource: 'roles', namespaced: true },
  RoleBinding: { resource: 'rolebindings', namespaced: true },
  ClusterRole: { resource: 'clusterroles', namespaced: false },
  ClusterRoleBinding: { resource: 'clusterrolebindings', namespaced: false },
  Deployment: { resource: 'deployments', namespaced: true },
  Lease: { resource: 'leases', namespaced: true },
  CustomResourceDefinition: { resource: 'customresourcedefinitions', namespaced: false },
  ManifestWork: { resource: 'manifestworks', namespaced: true },
  ManagedCluster: { resource: 'managedclusters', namespaced: false },
  ManagedClusterAddOn: { resource: 'managedclusteraddons', namespaced: true },
  ClusterManagementAddOn: { resource: 'clustermanagementaddons', namespaced: false },
  ManagedProxyConfiguration: { resource: 'managedproxyconfigurations', namespaced: false },
  ManagedServiceAccount: { resource: 'managedserviceaccounts', namespaced: true },
  // Upstream addons' charts install by Placement over a bound cluster set.
  ManagedClusterSetBinding: { resource: 'managedclustersetbindings', namespaced: true },
  Placement: { resource: 'placements', namespaced: true },
  // The SIG-Multicluster cluster inventory (multicluster.x-k8s.io), which OCM's registration hub publishes.
  ClusterProfile: { resource: 'clusterprofiles', namespaced: true },
  CertificateSigningRequest: { resource: 'certificatesigningrequests', namespaced: false },
  APIService: { resource: 'apiservices', namespaced: false },
  ClusterManager: { resource: 'clustermanagers', namespaced: false },
  Klusterlet: { resource: 'klusterlets', namespaced: false },
};

/** `/api/v1/…` or `/apis/<group>/<version>/…` for a kind, optionally in a namespace and with a name. */
export function collectionPath(apiVersion: string, kind: string, namespace?: string): string {
  const known = RESOURCES[kind];
  if (!known) throw new Error(`internal: no resource name known for kind ${kind}`);
  const prefix = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  return known.namespaced && namespace ? `${prefix}/namespaces/${namespace}/${known.resource}` : `${prefix}/${known.resource}`;
}

export function objectPath(obj: Pick<KubeObject, 'apiVersion' | 'kind'> & { metadata: { name: string; namespace?: string } }): string {
  return `${collectionPath(obj.apiVersion, obj.kind, obj.metadata.namespace)}/${encodeURIComponent(obj.metadata.name)}`;
}

const APPLIED_HASH_ANNOTATION = 'ocm-lab.io/applied-hash';

/** A stable hash of what we want an object to be (metadata we do not own left out). */
export function desiredHash(obj: KubeObject): string {
  const { metadata, ...rest } = obj;
  const owned = { labels: metadata.labels ?? {}, annotations: metadata.annotations ?? {}, ownerReferences: metadata.ownerReferences ?? [], rest };
  return createHash('sha256').update(canonicalJson(owned)).digest('hex').slice(0, 16);
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

export async function getOrNull<T extends KubeObject>(client: KubeClient, path: string): Promise<T | null> {
  try {
    return await client.get<T>(path);
  } catch (err) {
    if (isStatus(err, 404)) return null;
    throw err;
  }
}

/**
 * Create the object, or replace it when what we want changed since we last
 * wrote it (tracked by a hash annotation, so fields the API server or other
 * controllers add never cause a write). Status is never touched.
 */
export async function applyObject(client: KubeClient, desired: KubeObject): Promise<'created' | 'updated' | 'unchanged'> {
  const hash = desiredHash(desired);
  const withHash: KubeObject = {
    ...desired,
    metadata: { ...desired.metadata, annotations: { ...desired.metadata.annotations, [APPLIED_HASH_ANNOTATION]: hash } },
  };
  const existing = await getOrNull<KubeObject>(client, objectPath(desired));
  if (!existing) {
    try {
      await client.post(collectionPath(desired.apiVersion, desired.kind, desired.metadata.namespace), withHash);
      return 'created';
    } catch (err) {
      if (!isStatus(err, 409)) throw err;
      return applyObject(client, desired);
    }
  }
  if (existing.metadata.annotations?.[APPLIED_HASH_ANNOTATION] === hash) return 'unchanged';
  const replacement: KubeObject = {
    ...existing,
    ...withHash,
    metadata: {
      ...existing.metadata,
      labels: withHash.metadata.labels ?? existing.metadata.labels,
      annotations: { ...existing.metadata.annotations, ...withHash.metadata.annotations },
      ownerReferences: withHash.metadata.ownerReferences ?? existing.metadata.ownerReferences,
      resourceVersion: existing.metadata.resourceVersion,
    },
  };
  if ('status' in existing) replacement.status = existing.status;
  await client.put(objectPath(desired), replacement);
  return 'updated';
}

/** Delete if present; true when something was deleted. */
export async function deleteIfPresent(client: KubeClient, path: string, query?: Record<string, string>): Promise<boolean> {
  try {
    await client.delete(path, undefined, query);
    return true;
  } catch (err) {
    if (isStatus(err, 404)) return false;
    throw err;
  }
}

/**
 * Sets one condition in a list the way apimachinery's SetStatusCondition does:
 * the transition time changes only when the status does. Returns whether anything changed.
 */
export function setCondition(conditions: Condition[], next: Condition, now = new Date()): boolean {
  const i = conditions.findIndex((c) => c.type === next.type);
  const existing = i === -1 ? undefined : conditions[i];
  if (existing && existing.status === next.status && existing.reason === next.reason && existing.message === next.message) return false;
  const lastTransitionTime = existing && existing.status === next.status ? existing.lastTransitionTime : now.toISOString().replace(/\.\d+Z$/, 'Z');
  const merged = { ...next, lastTransitionTime };
  if (i === -1) conditions.push(merged);
  else conditions[i] = merged;
  return true;
}

export function conditionOf(obj: KubeObject | { status?: unknown } | null | undefined, type: string): Condition | undefined {
  const conditions = ((obj as { status?: unknown } | null | undefined)?.status as { conditions?: Condition[] } | undefined)?.conditions;
  return conditions?.find((c) => c.type === type);
}
