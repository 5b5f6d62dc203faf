import YAML from 'yaml';
import { ConflictError, InvalidInputError, NotFoundError } from '../errors.js';
import { isStatus, type KubeClient } from '../kube/client.js';
import { collectionPath, getOrNull, objectPath, type KubeObject, type ObservedCondition } from '../kube/objects.js';
import { FIELD_MANAGER } from './constants.js';
import { managedClusterPath, type ManagedCluster } from './accept.js';

export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; [key: string]: unknown };
  [key: string]: unknown;
}

const DNS_NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/**
 * Parses the documents of a manifest file (YAML or JSON, `---`-separated;
 * a `kind: List` is unrolled) and checks each names what the work agent needs:
 * apiVersion, kind and metadata.name. Errors name the document and the field.
 */
export function parseManifests(text: string, source: string): Manifest[] {
  let docs: YAML.Document.Parsed[];
  try {
    docs = YAML.parseAllDocuments(text) as YAML.Document.Parsed[];
  } catch (err) {
    throw new InvalidInputError(`${source}: not YAML (${(err as Error).message})`);
  }
  const manifests: Manifest[] = [];
  docs.forEach((doc, index) => {
    const where = `${source}: document ${index + 1}`;
    if (doc.errors.length) throw new InvalidInputError(`${where}: ${doc.errors[0]?.message ?? 'invalid YAML'}`);
    const value = doc.toJS() as unknown;
    if (value === null || value === undefined) return; // empty document (e.g. a trailing ---)
    if (typeof value !== 'object' || Array.isArray(value))
      throw new InvalidInputError(`${where}: expected a Kubernetes object (a mapping), got ${Array.isArray(value) ? 'a list' : typeof value}`);
    const obj = value as Record<string, unknown>;
    const items = obj.kind === 'List' && Array.isArray(obj.items) ? (obj.items as unknown[]) : [obj];
    items.forEach((item, i) => manifests.push(checkManifest(item, items.length > 1 || obj.kind === 'List' ? `${where}, item ${i + 1}` : where)));
  });
  if (!manifests.length)
    throw new InvalidInputError(`${source}: no Kubernetes objects found`, { hint: 'give at least one object with apiVersion, kind and metadata.name' });
  return manifests;
}

function checkManifest(value: unknown, where: string): Manifest {
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new InvalidInputError(`${where}: expected a Kubernetes object (a mapping)`);
  const obj = value as Record<string, unknown>;
  for (const field of ['apiVersion', 'kind'] as const) {
    if (typeof obj[field] !== 'string' || !obj[field])
      throw new InvalidInputError(`${where}: missing field '${field}'`, { hint: 'every object needs apiVersion, kind and metadata.name' });
  }
  const metadata = obj.metadata as Record<string, unknown> | undefined;
  if (!metadata || typeof metadata !== 'object' || typeof metadata.name !== 'string' || !metadata.name) {
    throw new InvalidInputError(`${where} (${String(obj.kind)}): missing field 'metadata.name'`, {
      hint: 'generateName is not supported in a ManifestWork: give every object a name',
    });
  }
  return obj as unknown as Manifest;
}

export function checkWorkName(name: string): void {
  if (!name || name.length > 253 || !DNS_NAME.test(name)) {
    throw new InvalidInputError(`work name '${name}' is not a valid Kubernetes name`, {
      hint: 'use lower-case letters, digits, - and .; start and end with a letter or digit',
    });
  }
}

export interface ManifestWork extends KubeObject {
  metadata: KubeObject['metadata'] & { namespace: string };
  spec: { workload: { manifests: Manifest[] } };
  status?: { conditions?: ObservedCondition[] };
}

function buildManifestWork(name: string, cluster: string, manifests: Manifest[]): ManifestWork {
  return {
    apiVersion: 'work.open-cluster-management.io/v1',
    kind: 'ManifestWork',
    metadata: { name, namespace: cluster },
    spec: { workload: { manifests } },
  };
}

export const manifestWorkHeader = (name: string, cluster: string) => ({
  apiVersion: 'work.open-cluster-management.io/v1',
  kind: 'ManifestWork',
  metadata: { name, namespace: cluster },
});

/**
 * `clusteradm create work`: puts the manifests into a ManifestWork in the
 * cluster's namespace on the hub. The cluster must be a ManagedCluster
 * (NotFoundError otherwise); an existing work is replaced only with `overwrite`.
 */
export async function createWork(
  hub: KubeClient,
  input: { name: string; cluster: string; manifests: Manifest[]; overwrite?: boolean },
): Promise<{ work: ManifestWork; action: 'created' | 'updated' }> {
  checkWorkName(input.name);
  const mc = await getOrNull<ManagedCluster>(hub, managedClusterPath(input.cluster));
  if (!mc) {
    const known = (
      await hub
        .get<{ items: ManagedCluster[] }>(collectionPath('cluster.open-cluster-management.io/v1', 'ManagedCluster'))
        .catch(() => ({ items: [] as ManagedCluster[] }))
    ).items.map((c) => c.metadata.name);
    throw new NotFoundError(`cluster '${input.cluster}' is not a managed cluster of this hub`, {
      hint: known.length ? `managed clusters: ${known.join(', ')}` : "no cluster has joined yet; run 'ocm-lab up'",
    });
  }
  const desired = buildManifestWork(input.name, input.cluster, input.manifests);
  const existing = await getOrNull<ManifestWork>(hub, objectPath(desired));
  const asOcmLab = { fieldManager: FIELD_MANAGER };
  try {
    if (!existing) {
      const work = await hub.post<ManifestWork>(collectionPath(desired.apiVersion, desired.kind, input.cluster), desired, asOcmLab);
      return { work, action: 'created' };
    }
    if (!input.overwrite) {
      throw new ConflictError(`work '${input.name}' already exists in namespace ${input.cluster}`, { hint: 'pass --overwrite to replace its manifests' });
    }
    const updated = { ...existing, spec: desired.spec };
    return { work: await hub.request<ManifestWork>('PUT', objectPath(desired), { body: updated, query: asOcmLab }), action: 'updated' };
  } catch (err) {
    if (err instanceof ConflictError) throw err;
    // ApiError's message carries the API server's own Status message.
    if (isStatus(err, 409))
      throw new ConflictError(`work '${input.name}' in namespace ${input.cluster} changed while it was written: ${(err as Error).message}`, {
        hint: 'run the command again',
      });
    if (isStatus(err, 400) || isStatus(err, 422))
      throw new InvalidInputError(`the hub refused ManifestWork ${input.cluster}/${input.name}: ${(err as Error).message}`);
    throw err;
  }
}
