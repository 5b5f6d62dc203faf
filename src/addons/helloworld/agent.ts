import { isStatus, type KubeClient } from '../../kube/client.js';
import { objectPath, type KubeObject } from '../../kube/objects.js';
import { ADDON_API } from '../framework/names.js';
import { HELLOWORLD } from './constants.js';

/** Whether the cluster's helloworld ManagedClusterAddOn exists and is not being deleted (the agent copies only then). */
export async function addonActiveOnHub(hub: Pick<KubeClient, 'get'>, cluster: string): Promise<boolean> {
  try {
    const mca = await hub.get<KubeObject>(
      objectPath({ apiVersion: ADDON_API, kind: 'ManagedClusterAddOn', metadata: { name: HELLOWORLD, namespace: cluster } }),
    );
    return !mca.metadata.deletionTimestamp;
  } catch (err) {
    if (isStatus(err, 404)) return false;
    throw err;
  }
}

/** The hub collection the agent watches: the ConfigMaps of its cluster's namespace. */
export function hubConfigMapsPath(cluster: string): string {
  return `/api/v1/namespaces/${encodeURIComponent(cluster)}/configmaps`;
}
