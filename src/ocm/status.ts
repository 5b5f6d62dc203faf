import fs from 'node:fs/promises';
import { addonImplementation, clusterProfileEnabled, LOCAL_CLUSTER_NAME, localClusterEnabled, type LabConfig } from '../config/index.js';
import { hubAdminKubeconfig, spokeClusters } from '../config/defaults.js';
import { NotFoundError, NotReadyError } from '../errors.js';
import { isStatus, KubeClient } from '../kube/client.js';
import { collectionPath } from '../kube/objects.js';
import { clusterState, type ClusterState, type ManagedCluster } from './accept.js';

/** A client for the lab's hub (close it when done); NotFoundError when the lab is not up. */
export async function hubClient(config: LabConfig): Promise<KubeClient> {
  const file = hubAdminKubeconfig(config);
  try {
    await fs.access(file);
  } catch {
    throw new NotFoundError(`lab '${config.name}' is not up (no hub kubeconfig at ${file})`, { hint: "run 'ocm-lab up' first" });
  }
  return KubeClient.fromKubeconfig(file);
}

/** Runs `use` with a client for the lab's hub and closes it afterwards. */
export async function withHubClient<T>(config: LabConfig, use: (hub: KubeClient) => Promise<T>): Promise<T> {
  const hub = await hubClient(config);
  try {
    return await use(hub);
  } finally {
    hub.close();
  }
}

/** Every ManagedCluster on the hub, sorted by name. */
export async function listManagedClusters(hub: KubeClient): Promise<ClusterState[]> {
  let items: ManagedCluster[];
  try {
    items = (await hub.get<{ items: ManagedCluster[] }>(collectionPath('cluster.open-cluster-management.io/v1', 'ManagedCluster'))).items;
  } catch (err) {
    if (isStatus(err, 404)) throw new NotReadyError('OCM is not installed on the hub (no ManagedCluster API)', { hint: "run 'ocm-lab up'" });
    throw new NotReadyError(`could not list ManagedClusters on the hub at ${hub.endpoint.server}: ${(err as Error).message}`, {
      hint: "is the lab up? see 'ocm-lab status'",
    });
  }
  return items.map(clusterState).sort((a, b) => a.name.localeCompare(b.name));
}

export interface OcmStatus {
  clusters: ClusterState[];
}

/** The OCM view of a lab for `status`: one entry per ManagedCluster on the hub. */
export async function ocmStatus(config: LabConfig): Promise<OcmStatus> {
  return { clusters: await withHubClient(config, listManagedClusters) };
}

/**
 * ['ocm'] when every spoke of the lab is a ManagedCluster that is accepted,
 * joined and available; [] otherwise (including labs without OCM). Never throws.
 */
export async function ocmCapabilities(config: LabConfig): Promise<string[]> {
  try {
    const { clusters } = await ocmStatus(config);
    const ready = spokeClusters(config).every((spoke) => {
      const state = clusters.find((c) => c.name === spoke.name);
      return state?.hubAccepted && state.joined && state.available;
    });
    // `cluster-profile`: the lab publishes the cluster inventory API (its `clusterProfile:` switch) with our
    // managed-serviceaccount's token sync; upstream's runs with its ClusterProfileCredSyncer gate off.
    const profiles = clusterProfileEnabled(config) && addonImplementation(config, 'managed-serviceaccount') !== 'upstream';
    // `manifestworkreplicaset`: the hub's work controller runs ManifestWorkReplicaSets (its gate, off by default).
    const replicaSets = config.featureGates?.hub?.ManifestWorkReplicaSet === true;
    // `local-cluster`: the hub joined to itself and available as a managed cluster.
    const local = clusters.find((c) => c.name === LOCAL_CLUSTER_NAME);
    const hubJoined = localClusterEnabled(config) && !!local?.hubAccepted && local.joined && local.available;
    return ready && spokeClusters(config).length > 0
      ? ['ocm', ...(profiles ? ['cluster-profile'] : []), ...(replicaSets ? ['manifestworkreplicaset'] : []), ...(hubJoined ? ['local-cluster'] : [])]
      : [];
  } catch {
    return [];
  }
}
