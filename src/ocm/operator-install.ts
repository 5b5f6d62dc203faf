import type { KubeClient } from '../kube/client.js';
import { applyObject, conditionOf, getOrNull, type KubeObject } from '../kube/objects.js';
import { waitUntil } from '../kube/wait.js';

export interface InstallProgress {
  timeoutMs: number;
  progress: (line: string) => void;
}

/** Applies an operator's objects in upstream's order and waits until its CRD is Established. */
export async function applyOperator(client: KubeClient, objects: KubeObject[], crdName: string, timeoutMs: number): Promise<string[]> {
  const changed: string[] = [];
  for (const obj of objects) {
    const result = await applyObject(client, obj);
    if (result !== 'unchanged') changed.push(`${obj.kind} ${obj.metadata.name} ${result}`);
  }
  await waitUntil(
    async () => (conditionOf(await getOrNull<KubeObject>(client, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crdName}`), 'Established')?.status === 'True' ? true : undefined),
    { timeoutMs, what: `CRD ${crdName} to be Established` },
  );
  return changed;
}

interface Deployment extends KubeObject {
  spec?: { replicas?: number };
  status?: { availableReplicas?: number; readyReplicas?: number };
}
interface Pod extends KubeObject {
  status?: { phase?: string; containerStatuses?: { name: string; ready: boolean; restartCount: number; state?: Record<string, { reason?: string; message?: string }> }[] };
}

/** One line per Deployment (available/desired), and for each of their pods its phase, restarts and the end of its log. */
export async function deploymentSummary(client: KubeClient, namespace: string, names: readonly string[], logLines = 10): Promise<string> {
  const lines: string[] = [];
  const pods = (await client.get<{ items: Pod[] }>(`/api/v1/namespaces/${namespace}/pods`).catch(() => ({ items: [] as Pod[] }))).items;
  for (const name of names) {
    const d = await getOrNull<Deployment>(client, `/apis/apps/v1/namespaces/${namespace}/deployments/${name}`).catch(() => null);
    lines.push(d ? `  Deployment ${namespace}/${name}: ${d.status?.availableReplicas ?? 0}/${d.spec?.replicas ?? 1} available` : `  Deployment ${namespace}/${name}: not created`);
    for (const pod of pods.filter((p) => p.metadata.name.startsWith(`${name}-`))) {
      const containers = pod.status?.containerStatuses ?? [];
      const state = containers.map((c) => `${c.name} ${c.ready ? 'ready' : 'not ready'}, ${c.restartCount} restarts${Object.entries(c.state ?? {}).map(([k, v]) => ` (${k}${v.reason ? `: ${v.reason}` : ''})`).join('')}`).join('; ');
      lines.push(`    pod ${pod.metadata.name}: ${pod.status?.phase ?? 'unknown'}${state ? `; ${state}` : ''}`);
      if (containers.some((c) => !c.ready)) {
        const log = await client.getText(`/api/v1/namespaces/${namespace}/pods/${pod.metadata.name}/log`, { tailLines: logLines }).catch((err: unknown) => `(no log: ${(err as Error).message})`);
        lines.push(`    --- last lines of its log ---\n${String(log).trimEnd().replace(/^/gm, '    ')}`);
      }
    }
  }
  return lines.join('\n');
}
