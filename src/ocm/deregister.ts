import type { LabConfig } from '../config/index.js';
import { KubeClient } from '../kube/client.js';
import { labOperators } from './operators.js';
import { deregisterCluster } from './uninstall.js';
import type { LabCluster, UpOptions } from '../runtime/types.js';
import { DEFAULT_INSTALL_TIMEOUT_MS } from './install-context.js';

/**
 * Lets spokes go before their runtime deletes them (`cluster remove`, or a
 * lab file without them): each ManagedCluster deleted and gone — the hub's
 * controllers first clear its ManifestWorks and addons, which the spoke's
 * agents can still act on — its namespace and CSRs gone, and the klusterlet
 * taken off the spoke.
 */
export async function deregisterSpokes(
  config: LabConfig,
  options: UpOptions,
  removed: LabCluster[],
  all: LabCluster[],
  progress: (line: string) => void,
): Promise<void> {
  const hub = all.find((c) => c.hub);
  if (!hub || !removed.length) return;
  const operatorObjects = (
    await labOperators({ ...config, binDir: options.binDir, artifacts: options.artifacts, mirrors: options.mirrors, onProgress: progress })
  ).klusterlet;
  const hubClient = await KubeClient.fromKubeconfig(hub.kubeconfig);
  try {
    for (const spoke of removed) {
      progress(`deregistering ${spoke.name}`);
      const spokeClient = await KubeClient.fromKubeconfig(spoke.kubeconfig);
      try {
        await deregisterCluster(hubClient, spokeClient, spoke.name, {
          operatorObjects,
          timeoutMs: options.readyTimeoutMs ?? DEFAULT_INSTALL_TIMEOUT_MS,
          progress,
        });
      } finally {
        spokeClient.close();
      }
    }
  } finally {
    hubClient.close();
  }
}
