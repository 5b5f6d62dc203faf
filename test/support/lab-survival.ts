import { expect } from 'vitest';
import { waitUntil } from './wait.js';

/**
 * What a lab must keep across a reboot or a Docker restart (issue 32, item 3), made before the fault and
 * checked after `up`, the same for every runtime: a ManagedServiceAccount on cluster1 with its token, a
 * ManifestWork applied there, the ManagedClusters and their CSRs.
 */

/** kubectl against one context of the lab: stdout, or a thrown error with its stderr. */
export type LabKubectl = (context: string, args: string[], input?: string) => Promise<string>;

interface Conditions {
  status?: { conditions?: { type: string; status: string }[] };
}

interface ManagedClusterMeta {
  metadata: { name: string; uid: string; resourceVersion: string; generation?: number; creationTimestamp: string };
}

export interface StateBefore {
  /** Names the objects: MSA `<tag>`, ManifestWorks `before-<tag>` and (made after) `after-<tag>`, each a ConfigMap of that name. */
  tag: string;
  token: string;
  managedClusters: ManagedClusterMeta[];
  csrs: string[];
}

export interface StateAfter {
  managedClusters: ManagedClusterMeta[];
  /** Since `t0`: the hub accepted a new ManifestWork, cluster1 applied it, and every check passed. */
  workAcceptedMs: number;
  workAppliedMs: number;
  readyMs: number;
  /** Why the hub refused the new ManifestWork before accepting it (its work webhook still starting). */
  refusals: string[];
  addons: string[];
}

const TIMEOUT_MS = 180_000;

const manifestWork = (name: string) => `apiVersion: work.open-cluster-management.io/v1
kind: ManifestWork
metadata: {name: ${name}, namespace: cluster1}
spec:
  workload:
    manifests:
    - {apiVersion: v1, kind: ConfigMap, metadata: {name: ${name}, namespace: default}, data: {at: ${name.split('-')[0]}}}
`;

async function condition(k: LabKubectl, context: string, args: string[], type: string): Promise<string | undefined> {
  const object = JSON.parse(await k(context, [...args, '-o', 'json'])) as Conditions;
  return object.status?.conditions?.find((c) => c.type === type)?.status;
}

async function managedClusters(k: LabKubectl): Promise<ManagedClusterMeta[]> {
  return (JSON.parse(await k('hub', ['get', 'managedcluster', '-o', 'json'])) as { items: ManagedClusterMeta[] }).items;
}

/** The CSRs of the managed clusters (registration and addon client certificates). */
async function csrNames(k: LabKubectl, clusters: string[]): Promise<string[]> {
  const csrs = JSON.parse(await k('hub', ['get', 'csr', '-o', 'json'])) as { items: { metadata: { name: string; labels?: Record<string, string> } }[] };
  return csrs.items
    .filter((c) => clusters.includes(c.metadata.labels?.['open-cluster-management.io/cluster-name'] ?? ''))
    .map((c) => c.metadata.name)
    .sort();
}

async function tokenAuthenticates(k: LabKubectl, token: string): Promise<boolean> {
  const review = await k(
    'cluster1',
    ['create', '-f', '-', '-o', 'json'],
    JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } }),
  );
  return (JSON.parse(review) as { status?: { authenticated?: boolean } }).status?.authenticated === true;
}

/** Every ManagedClusterAddOn's name when all are Available (and there is one), else undefined. */
async function addonsAvailable(k: LabKubectl): Promise<string[] | undefined> {
  const addons = JSON.parse(await k('hub', ['get', 'managedclusteraddon', '-A', '-o', 'json'])) as {
    items: ({ metadata: { namespace: string; name: string } } & Conditions)[];
  };
  const down = addons.items.filter((a) => a.status?.conditions?.find((c) => c.type === 'Available')?.status !== 'True');
  return addons.items.length > 0 && down.length === 0 ? addons.items.map((a) => `${a.metadata.namespace}/${a.metadata.name}`) : undefined;
}

/** Makes the state (an MSA and a ManifestWork on cluster1), waits until both took effect, and records what must stay. */
export async function makeStateBefore(k: LabKubectl, tag: string): Promise<StateBefore> {
  await k(
    'hub',
    ['apply', '-f', '-'],
    `apiVersion: authentication.open-cluster-management.io/v1beta1
kind: ManagedServiceAccount
metadata: {name: ${tag}, namespace: cluster1}
spec: {rotation: {enabled: true}}
---
${manifestWork(`before-${tag}`)}`,
  );
  const token = await waitUntil(
    async () => {
      const t = await k('hub', ['-n', 'cluster1', 'get', 'secret', tag, '-o', 'jsonpath={.data.token}']).catch(() => '');
      return t ? Buffer.from(t, 'base64').toString('utf8') : undefined;
    },
    `the token Secret of MSA ${tag}`,
    TIMEOUT_MS,
  );
  await waitUntil(
    async () => ((await condition(k, 'hub', ['-n', 'cluster1', 'get', 'manifestwork', `before-${tag}`], 'Applied')) === 'True' ? true : undefined),
    `before-${tag} Applied`,
    TIMEOUT_MS,
  );
  expect(await tokenAuthenticates(k, token), `the token of MSA ${tag}`).toBe(true);
  await waitUntil(() => addonsAvailable(k), 'every addon Available before the fault', 300_000);
  const clusters = await managedClusters(k);
  return {
    tag,
    token,
    managedClusters: clusters,
    csrs: await csrNames(
      k,
      clusters.map((c) => c.metadata.name),
    ),
  };
}

/**
 * After `up` (begun at `t0`): the same ManagedClusters (uid, creation), Available, with no new CSR; the
 * ManifestWork of before applied and a new one applied too; the MSA token of before valid; every addon Available.
 */
export async function checkStateAfter(k: LabKubectl, before: StateBefore, t0: number): Promise<StateAfter> {
  const clusters = await managedClusters(k);
  for (const was of before.managedClusters) {
    const now = clusters.find((m) => m.metadata.name === was.metadata.name);
    expect(now?.metadata.uid, `ManagedCluster ${was.metadata.name}: the same`).toBe(was.metadata.uid);
    expect(now?.metadata.creationTimestamp).toBe(was.metadata.creationTimestamp);
    await waitUntil(
      async () => ((await condition(k, 'hub', ['get', 'managedcluster', was.metadata.name], 'ManagedClusterConditionAvailable')) === 'True' ? true : undefined),
      `${was.metadata.name} Available`,
      TIMEOUT_MS,
    );
  }
  expect(
    await csrNames(
      k,
      before.managedClusters.map((c) => c.metadata.name),
    ),
    'no new CSR: the spokes kept their hub credentials',
  ).toEqual(before.csrs);
  const { tag } = before;
  expect(await condition(k, 'hub', ['-n', 'cluster1', 'get', 'manifestwork', `before-${tag}`], 'Applied')).toBe('True');
  expect(await k('cluster1', ['-n', 'default', 'get', 'configmap', `before-${tag}`, '-o', 'jsonpath={.data.at}'])).toBe('before');
  // The hub's work webhook is a pod: right after `up` its Deployment may still read Ready from before the fault
  // while its container starts again, so the hub refuses ManifestWorks until it is back (a clear error).
  const refusals: string[] = [];
  await waitUntil(
    () =>
      k('hub', ['apply', '-f', '-'], manifestWork(`after-${tag}`)).then(
        () => true,
        (err: Error) => void refusals.push(err.message.split('\n')[0] ?? ''),
      ),
    'the hub to accept a ManifestWork after the fault',
    TIMEOUT_MS,
    1_000,
  );
  const workAcceptedMs = Date.now() - t0;
  await waitUntil(
    async () => ((await k('cluster1', ['-n', 'default', 'get', 'configmap', `after-${tag}`, '-o', 'name']).catch(() => '')) ? true : undefined),
    'a ManifestWork created after the fault applied on cluster1',
    240_000,
  );
  const workAppliedMs = Date.now() - t0;
  expect(await tokenAuthenticates(k, before.token), `the token of MSA ${tag} from before the fault`).toBe(true);
  const addons = await waitUntil(() => addonsAvailable(k), 'every addon Available after the fault', 300_000);
  return { managedClusters: clusters, workAcceptedMs, workAppliedMs, readyMs: Date.now() - t0, refusals, addons };
}
