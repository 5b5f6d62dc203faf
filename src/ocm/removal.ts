import { NotReadyError } from '../errors.js';
import { isStatus, type KubeClient } from '../kube/client.js';
import { collectionPath, deleteIfPresent, getOrNull, objectPath, type KubeObject, type ObservedCondition } from '../kube/objects.js';
import { sleep } from '../kube/wait.js';

export interface RemovalOptions {
  /** How long to wait for everything asked to go away to be gone. */
  timeoutMs: number;
  progress?: (line: string) => void;
  /** Run between polls while waiting (`down --force`: releasing what an unreachable cluster's agents would have released). */
  whileWaiting?: () => Promise<unknown>;
}

/** What a kind and name look like in messages: `Namespace open-cluster-management`, `Role kube-system/x`. */
function describeObject(obj: Pick<KubeObject, 'kind'> & { metadata: { name: string; namespace?: string } }): string {
  return `${obj.kind} ${obj.metadata.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata.name}`;
}

type Removable = Pick<KubeObject, 'apiVersion' | 'kind'> & { metadata: { name: string; namespace?: string } };

interface Terminating extends KubeObject {
  metadata: KubeObject['metadata'] & { finalizers?: string[] };
  spec?: { finalizers?: string[] };
  status?: { conditions?: ObservedCondition[] };
}

/** Why an object is still there: its deletion state, finalizers and (namespaces, ManagedClusters) the conditions that say what blocks it. */
export function whyStillThere(obj: Terminating, label: string): string {
  const finalizers = [...(obj.metadata.finalizers ?? []), ...(obj.kind === 'Namespace' ? (obj.spec?.finalizers ?? []) : [])];
  const blocking = (obj.status?.conditions ?? []).filter(
    (c) => (c.type.startsWith('Namespace') && c.status === 'True') || c.type === 'ManagedClusterConditionDeleting' || c.type === 'Deleting',
  );
  const parts = [
    obj.metadata.deletionTimestamp ? `terminating since ${obj.metadata.deletionTimestamp}` : 'not being deleted',
    finalizers.length ? `finalizers: ${finalizers.join(', ')}` : 'no finalizers',
    ...blocking.map((c) => `${c.type}=${c.status}${c.reason ? ` (${c.reason}${c.message ? `: ${c.message}` : ''})` : ''}`),
  ];
  return `  ${label}: ${parts.join('; ')}`;
}

/**
 * Deletes every object that is there (in order, background propagation) and
 * waits until all of them are gone. Nothing there: nothing to do. On timeout
 * throws NotReadyError listing what is left and what holds it (finalizers,
 * namespace conditions). Returns what it deleted.
 */
export async function deleteAndWait(client: KubeClient, all: readonly Removable[], what: string, options: RemovalOptions): Promise<string[]> {
  const objects = all.filter((obj, i) => all.findIndex((o) => objectPath(o) === objectPath(obj)) === i);
  const deleted: string[] = [];
  for (const obj of objects) {
    if (await deleteIfPresent(client, objectPath(obj), { propagationPolicy: 'Background' })) deleted.push(describeObject(obj));
  }
  if (deleted.length) options.progress?.(`${what}: deleted ${deleted.join(', ')}`);
  await waitGone(client, objects, what, options);
  return deleted;
}

/** Waits until none of `objects` exists; on timeout says which are left and why. */
export async function waitGone(client: KubeClient, objects: readonly Removable[], what: string, options: RemovalOptions): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  let left: { obj: Removable; current: Terminating }[] = [];
  let said = '';
  for (;;) {
    left = [];
    for (const obj of objects) {
      const current = await getOrNull<Terminating>(client, objectPath(obj));
      if (current) left.push({ obj, current: { ...current, kind: obj.kind } });
    }
    if (!left.length) return;
    if (Date.now() >= deadline) break;
    const line = `${what}: waiting for ${left.map((l) => describeObject(l.obj)).join(', ')} to be gone`;
    if (line !== said) options.progress?.((said = line));
    await options.whileWaiting?.();
    await sleep(500);
  }
  throw new NotReadyError(
    `${what}: not gone within ${Math.round(options.timeoutMs / 1000)} s:\n${left.map((l) => whyStillThere(l.current, describeObject(l.obj))).join('\n')}`,
    {
      hint:
        'a finalizer is removed by the controller that set it; if that controller no longer runs, ' +
        'remove the finalizer by hand (kubectl patch … --type=merge -p \'{"metadata":{"finalizers":null}}\') and run down again',
    },
  );
}

/** Names of objects of a kind that carry a label (e.g. the CSRs of a cluster), for deletion. */
export async function labelledObjects(client: KubeClient, apiVersion: string, kind: string, collection: string, labelSelector: string): Promise<Removable[]> {
  const list = await client.get<{ items: KubeObject[] }>(collection, { labelSelector });
  return list.items.map((o) => ({ apiVersion, kind, metadata: { name: o.metadata.name, namespace: o.metadata.namespace } }));
}

/** Runs removals side by side and waits for every one; when some fail, throws one error with all their messages. */
export async function allSettledOrThrow<T>(tasks: readonly Promise<T>[]): Promise<T[]> {
  const results = await Promise.allSettled(tasks);
  const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason as unknown);
  if (failed.length === 1) throw failed[0];
  if (failed.length) throw new NotReadyError(failed.map((e) => (e instanceof Error ? e.message : String(e))).join('\n'));
  return results.map((r) => (r as PromiseFulfilledResult<T>).value);
}

/**
 * For a cluster that cannot be reached (`down --force`): deletes the objects of `kinds` in its hub
 * namespace and removes their finalizers, which only its own agents would have removed (the work
 * agent's on ManifestWorks, for instance). Returns what it released.
 */
export async function releaseOnHub(
  hub: KubeClient,
  cluster: string,
  kinds: readonly { apiVersion: string; kind: string }[],
  progress?: (line: string) => void,
): Promise<string[]> {
  const released: string[] = [];
  for (const { apiVersion, kind } of kinds) {
    const items = await labelledObjects(hub, apiVersion, kind, collectionPath(apiVersion, kind, cluster), '').catch(() => [] as Removable[]);
    for (const obj of items) {
      const p = objectPath(obj);
      await deleteIfPresent(hub, p, { propagationPolicy: 'Background' });
      await hub.mergePatch(p, { metadata: { finalizers: null } }).catch((err: unknown) => {
        if (!isStatus(err, 404)) throw err;
      });
      released.push(describeObject(obj));
    }
  }
  if (released.length) progress?.(`${cluster} cannot be reached: released ${released.join(', ')} (finalizers removed)`);
  return released;
}
