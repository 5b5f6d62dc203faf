import { NotReadyError } from '../../errors.js';
import type { KubeClient } from '../../kube/client.js';
import { applyObject, type KubeObject } from '../../kube/objects.js';
import { ADDON_MANAGER_NAMESPACE } from '../framework/names.js';
import type { AddonBundles } from './build.js';
import { devHubObjects } from './hub-objects.js';
import { agentCodeHubConfigMapName, CODE_HASH_ANNOTATION, DEV_ADDON_LABEL, managerCodeConfigMapName } from './names.js';
import { sleep } from '../../kube/wait.js';

/**
 * Puts a build on the hub: manager identity, code ConfigMaps and Deployment (applyObject writes
 * only what changed, so an agent-only change leaves the manager alone), then drops the ConfigMaps of
 * older manager builds (all code ConfigMaps when the addon runs from its own `image`). Returns what changed.
 */
export async function applyDevAddon(hub: KubeClient, addon: string, bundles: Pick<AddonBundles, 'manager' | 'agent'>, image?: string): Promise<string[]> {
  const changed: string[] = [];
  for (const obj of devHubObjects(addon, bundles, image)) {
    const result = await applyObject(hub, obj);
    if (result !== 'unchanged') changed.push(`${obj.kind}/${obj.metadata.name} ${result}`);
  }
  const current = image ? [] : [managerCodeConfigMapName(addon, bundles.manager.hash), agentCodeHubConfigMapName(addon)];
  const old = (
    await hub.get<{ items: KubeObject[] }>(`/api/v1/namespaces/${ADDON_MANAGER_NAMESPACE}/configmaps`, { labelSelector: `${DEV_ADDON_LABEL}=${addon}` })
  ).items.filter((c) => c.metadata.name.startsWith(`${addon}-addon-`) && !current.includes(c.metadata.name));
  for (const c of old) {
    await hub.delete(`/api/v1/namespaces/${ADDON_MANAGER_NAMESPACE}/configmaps/${c.metadata.name}`).catch(() => undefined);
  }
  return changed;
}

interface Pod extends KubeObject {
  status?: { phase?: string; conditions?: { type: string; status: string }[] };
}

/** True when a pod of the addon's agent with this code hash is Ready (its container runs the new bundle). */
export function newAgentRunning(pods: Pod[], hash: string): boolean {
  return pods.some(
    (p) =>
      !p.metadata.deletionTimestamp &&
      p.metadata.annotations?.[CODE_HASH_ANNOTATION] === hash &&
      p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
  );
}

/**
 * Waits until every cluster runs a Ready pod of this build (pods matching `labelSelector` whose
 * code-hash annotation is `hash`); resolves with the time (ms since `since`) each cluster first
 * did. Reads the clusters directly, with the lab's admin kubeconfigs.
 */
export async function waitPodsRunning(
  clusters: { name: string; client: KubeClient }[],
  what: { addon: string; labelSelector: string; hash: string },
  options: { since: number; timeoutMs: number; onRunning?: (cluster: string, ms: number) => void },
): Promise<Record<string, number>> {
  const { addon, hash } = what;
  const deadline = Date.now() + options.timeoutMs;
  const times: Record<string, number> = {};
  const lastSeen: Record<string, string> = {};
  await Promise.all(
    clusters.map(async ({ name, client }) => {
      for (;;) {
        const pods = await client
          .get<{ items: Pod[] }>('/api/v1/pods', { labelSelector: what.labelSelector })
          .then((l) => l.items)
          .catch((err: Error) => ((lastSeen[name] = err.message), [] as Pod[]));
        if (newAgentRunning(pods, hash)) {
          times[name] = Date.now() - options.since;
          options.onRunning?.(name, times[name]);
          return;
        }
        lastSeen[name] =
          pods
            .map(
              (p) => `${p.metadata.namespace}/${p.metadata.name} hash=${p.metadata.annotations?.[CODE_HASH_ANNOTATION] ?? '-'} phase=${p.status?.phase ?? '-'}`,
            )
            .join(', ') ||
          lastSeen[name] ||
          `no pod matches ${what.labelSelector}`;
        if (Date.now() > deadline) {
          throw new NotReadyError(
            `no pod of ${addon} (${what.labelSelector}) with code ${hash} runs on ${name} within ${Math.round(options.timeoutMs / 1000)} s; ` +
              `its pods: ${lastSeen[name]}`,
            {
              hint:
                `see the ManifestWork: kubectl --context hub -n ${name} get manifestwork addon-${addon}-deploy-0 -o yaml, ` +
                `and the manager's log in ${ADDON_MANAGER_NAMESPACE}`,
            },
          );
        }
        await sleep(150);
      }
    }),
  );
  return times;
}
