import { NotReadyError } from '../errors.js';
import { isStatus, type KubeClient } from '../kube/client.js';
import { collectionPath, conditionOf, getOrNull, objectPath, type KubeObject, type ObservedCondition } from '../kube/objects.js';
import { BOOTSTRAP_USERNAME, CLIENT_SIGNER, CLUSTER_NAME_LABEL, CONDITION, FIELD_MANAGER } from './constants.js';
import { sleep } from '../kube/wait.js';

export interface ManagedCluster extends KubeObject {
  spec?: { hubAcceptsClient?: boolean };
  status?: { conditions?: ObservedCondition[] };
}

/** certificates.k8s.io/v1 CertificateSigningRequest, the fields accept reads. */
export interface CertificateSigningRequest extends KubeObject {
  spec: { request: string; signerName: string; username?: string; usages?: string[] };
  status?: { conditions?: (ObservedCondition & { lastUpdateTime?: string })[]; certificate?: string };
}

const managedClusterHeader = (name: string) => ({ apiVersion: 'cluster.open-cluster-management.io/v1', kind: 'ManagedCluster', metadata: { name } });
export const managedClusterPath = (name: string): string => objectPath(managedClusterHeader(name));
const CSR_COLLECTION = collectionPath('certificates.k8s.io/v1', 'CertificateSigningRequest');

export interface ClusterState {
  name: string;
  hubAccepted: boolean;
  joined: boolean;
  available: boolean;
}

/** The `kubectl get managedclusters` view of one cluster. */
export function clusterState(mc: ManagedCluster): ClusterState {
  return {
    name: mc.metadata.name,
    hubAccepted: mc.spec?.hubAcceptsClient === true,
    joined: conditionOf(mc, CONDITION.joined)?.status === 'True',
    available: conditionOf(mc, CONDITION.available)?.status === 'True',
  };
}

export function csrState(csr: CertificateSigningRequest): 'Pending' | 'Approved' | 'Denied' | 'Failed' | 'Issued' {
  const types = (csr.status?.conditions ?? []).filter((c) => c.status === 'True').map((c) => c.type);
  if (types.includes('Denied')) return 'Denied';
  if (types.includes('Failed')) return 'Failed';
  if (types.includes('Approved')) return csr.status?.certificate ? 'Issued' : 'Approved';
  return 'Pending';
}

/**
 * Whether `accept` may approve this CSR for `cluster`: pending, for the
 * client signer, labelled for that cluster, and requested by the bootstrap
 * identity — never anyone else's, whatever it claims to be for.
 */
export function approvable(csr: CertificateSigningRequest, cluster: string): boolean {
  return (
    csrState(csr) === 'Pending' &&
    csr.spec.signerName === CLIENT_SIGNER &&
    csr.metadata.labels?.[CLUSTER_NAME_LABEL] === cluster &&
    csr.spec.username === BOOTSTRAP_USERNAME
  );
}

export async function clusterCsrs(hub: KubeClient, cluster: string): Promise<CertificateSigningRequest[]> {
  const list = await hub.get<{ items: CertificateSigningRequest[] }>(CSR_COLLECTION, { labelSelector: `${CLUSTER_NAME_LABEL}=${cluster}` });
  return list.items;
}

/** Approves the cluster's approvable CSRs; returns their names. */
export async function approveBootstrapCsrs(hub: KubeClient, cluster: string): Promise<string[]> {
  const approved: string[] = [];
  for (const csr of await clusterCsrs(hub, cluster)) {
    if (!approvable(csr, cluster)) continue;
    const name = csr.metadata.name;
    const conditions = [...(csr.status?.conditions ?? [])];
    conditions.push({
      type: 'Approved',
      status: 'True',
      reason: 'AcceptedByOcmLab',
      message: `ocm-lab accepted cluster ${cluster} (requested by the bootstrap identity ${BOOTSTRAP_USERNAME})`,
      lastUpdateTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    });
    try {
      // The approval subresource takes the whole CSR back with the new condition (as `kubectl certificate approve`).
      await hub.request('PUT', `${CSR_COLLECTION}/${encodeURIComponent(name)}/approval`, {
        body: { ...csr, status: { ...csr.status, conditions } },
        query: { fieldManager: FIELD_MANAGER },
      });
      approved.push(name);
    } catch (err) {
      // Someone else changed it meanwhile: the next round looks again.
      if (!isStatus(err, 409)) throw err;
    }
  }
  return approved;
}

async function setHubAcceptsClient(hub: KubeClient, cluster: string): Promise<void> {
  await hub.request('PATCH', managedClusterPath(cluster), {
    body: { spec: { hubAcceptsClient: true } },
    contentType: 'application/merge-patch+json',
    query: { fieldManager: FIELD_MANAGER },
  });
}

export interface AcceptDiagnostics {
  /** What may say why a cluster did not join: the agent's and the registration controller's pods and log tails. */
  report(cluster: string): Promise<string>;
}

export interface TimeoutReportInput {
  cluster: string;
  timeoutMs: number;
  managedCluster: ManagedCluster | null;
  csrs: CertificateSigningRequest[];
  /** Evidence from the clusters (pods, log tails), already in words. */
  diagnostics: string;
}

/** What is missing for one cluster, in words, with the evidence: conditions, CSRs, log tails. */
export function acceptTimeoutReport(input: TimeoutReportInput): string {
  const { cluster, managedCluster: mc } = input;
  const lines: string[] = [`cluster ${cluster} was not accepted, joined and available within ${Math.round(input.timeoutMs / 1000)} s`];
  if (!mc) {
    lines.push(
      `  missing: ManagedCluster ${cluster} does not exist on the hub — ` +
        'the klusterlet agent never registered (is it running, can it reach the hub, is its bootstrap token valid?)',
    );
  } else {
    if (mc.spec?.hubAcceptsClient !== true) lines.push('  missing: spec.hubAcceptsClient is not true');
    for (const type of [CONDITION.hubAccepted, CONDITION.joined, CONDITION.available]) {
      const c = mc.status?.conditions?.find((x) => x.type === type);
      if (c?.status === 'True') continue;
      lines.push(`  missing: condition ${type} is ${c ? `${c.status} (${c.reason ?? 'no reason'}${c.message ? `: ${c.message}` : ''})` : 'not reported yet'}`);
    }
  }
  if (input.csrs.length === 0) lines.push(`  no CSR labelled ${CLUSTER_NAME_LABEL}=${cluster} exists`);
  for (const csr of input.csrs) {
    const state = csrState(csr);
    const by =
      csr.spec.username === BOOTSTRAP_USERNAME ? 'the bootstrap identity' : `${csr.spec.username ?? 'unknown'} (not the bootstrap identity: not approved)`;
    lines.push(`  CSR ${csr.metadata.name}: ${state}, requested by ${by}`);
  }
  if (input.diagnostics) lines.push(input.diagnostics);
  return lines.join('\n');
}

export interface AcceptOptions {
  timeoutMs: number;
  intervalMs?: number;
  diagnostics?: AcceptDiagnostics;
  progress?: (line: string) => void;
}

/**
 * Our `clusteradm accept`: for each cluster whose ManagedCluster exists, approve
 * the CSRs its agent made with the bootstrap identity, set hubAcceptsClient, and wait until the hub
 * reports it accepted, joined and available. Never waits longer than
 * `timeoutMs`; on timeout the error lists what is missing per cluster.
 */
export async function acceptClusters(hub: KubeClient, clusters: readonly string[], options: AcceptOptions): Promise<ClusterState[]> {
  const deadline = Date.now() + options.timeoutMs;
  const pending = new Set(clusters);
  const states = new Map<string, ClusterState>();
  let lastError: unknown = null;
  while (pending.size) {
    for (const cluster of [...pending]) {
      try {
        // Approve only once the agent's ManagedCluster exists: the agent creates it and asks for its
        // certificate side by side with the bootstrap identity, and stops bootstrapping as soon as the
        // certificate is issued — its own identity may not create the ManagedCluster afterwards.
        const mc = await getOrNull<ManagedCluster>(hub, managedClusterPath(cluster));
        if (!mc) continue;
        const approved = await approveBootstrapCsrs(hub, cluster);
        if (approved.length) options.progress?.(`${cluster}: approved CSR ${approved.join(', ')}`);
        if (mc.spec?.hubAcceptsClient !== true) {
          await setHubAcceptsClient(hub, cluster);
          options.progress?.(`${cluster}: hubAcceptsClient set`);
          continue;
        }
        const state = clusterState(mc);
        const accepted = conditionOf(mc, CONDITION.hubAccepted)?.status === 'True';
        if (accepted && state.joined && state.available) {
          states.set(cluster, state);
          pending.delete(cluster);
          options.progress?.(`${cluster}: joined and available`);
        }
        lastError = null;
      } catch (err) {
        lastError = err;
      }
    }
    if (!pending.size) break;
    if (Date.now() >= deadline) {
      const reports = await Promise.all(
        [...pending].map(async (cluster) =>
          acceptTimeoutReport({
            cluster,
            timeoutMs: options.timeoutMs,
            managedCluster: await getOrNull<ManagedCluster>(hub, managedClusterPath(cluster)).catch(() => null),
            csrs: await clusterCsrs(hub, cluster).catch(() => []),
            diagnostics: options.diagnostics ? await options.diagnostics.report(cluster).catch((err: unknown) => `(no diagnostics: ${String(err)})`) : '',
          }),
        ),
      );
      throw new NotReadyError(
        `${reports.join('\n\n')}${lastError ? `\nlast API error: ${lastError instanceof Error ? lastError.message : String(lastError)}` : ''}`,
        {
          hint: "run 'ocm-lab up' again to keep waiting, or 'ocm-lab down' to remove the lab",
        },
      );
    }
    await sleep(options.intervalMs ?? 300);
  }
  return clusters.map((c) => states.get(c)!);
}
