import type { KubeClient } from '../../kube/client.js';
import { type KubeObject, objectPath } from '../../kube/objects.js';
import { CLUSTER_NAME_LABEL, CLUSTER_PROFILE_API, OCM_CLUSTER_MANAGER_NAME } from '../../ocm/clusterprofile.js';
import { type AccessProvider, ocmProfiles } from './clusterprofile-sync.js';

/** The kubeconfig extension client-go hands a credential plugin as ExecCredential.spec.cluster.config. */
const EXEC_EXTENSION = 'client.authentication.k8s.io/exec';

interface ManagedCluster extends KubeObject {
  spec?: { managedClusterClientConfigs?: { url?: string; caBundle?: string }[] };
}

/**
 * ocm-lab's own: upstream writes `status.accessProviders` only from cluster-proxy v0.10.0 behind its
 * `ClusterProfileAccessProvider` gate (off by default), pointing at its in-cluster user server, a name a
 * consumer on the host cannot resolve. The lab writes the provider of the same name,
 * `open-cluster-management`, from the ManagedCluster's `spec.managedClusterClientConfigs[0]` (the
 * cluster's own API server), with the `clusterName` extension upstream's plugin reads. Undefined when
 * the cluster publishes no URL.
 */
export function accessProviderOf(cluster: ManagedCluster): AccessProvider | undefined {
  const config = cluster.spec?.managedClusterClientConfigs?.[0];
  if (!config?.url) return undefined;
  return {
    name: OCM_CLUSTER_MANAGER_NAME,
    cluster: {
      server: config.url,
      ...(config.caBundle ? { 'certificate-authority-data': config.caBundle } : {}),
      extensions: [{ name: EXEC_EXTENSION, extension: { clusterName: cluster.metadata.name } }],
    },
  };
}

/** The profile's providers with ours in place of any of the same name; undefined when nothing changes. */
export function withAccessProvider(current: AccessProvider[] | undefined, ours: AccessProvider): AccessProvider[] | undefined {
  const others = (current ?? []).filter((p) => p.name !== ours.name);
  const mine = (current ?? []).find((p) => p.name === ours.name);
  if (mine && JSON.stringify(mine) === JSON.stringify(ours)) return undefined;
  return [...others, ours];
}

/** One pass: every OCM ClusterProfile gets its cluster's access provider. Returns what changed. */
export async function writeClusterProfileAccess(hub: KubeClient): Promise<string[]> {
  const profiles = await ocmProfiles(hub);
  if (!profiles.length) return [];
  const clusters = new Map(
    (await hub.get<{ items: ManagedCluster[] }>('/apis/cluster.open-cluster-management.io/v1/managedclusters')).items.map((c) => [c.metadata.name, c]),
  );
  const done: string[] = [];
  for (const profile of profiles) {
    const cluster = clusters.get(profile.metadata.labels?.[CLUSTER_NAME_LABEL] ?? '');
    const ours = cluster && accessProviderOf(cluster);
    if (!ours) continue;
    const providers = withAccessProvider(profile.status?.accessProviders, ours);
    if (!providers) continue;
    const path = `${objectPath({ ...profile, apiVersion: CLUSTER_PROFILE_API, kind: 'ClusterProfile' })}/status`;
    await hub.mergePatch(path, { status: { accessProviders: providers } });
    done.push(`ClusterProfile ${profile.metadata.namespace}/${profile.metadata.name}: access provider ${ours.name} → ${ours.cluster.server}`);
  }
  return done;
}
