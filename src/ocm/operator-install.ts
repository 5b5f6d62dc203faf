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
    async () =>
      conditionOf(await getOrNull<KubeObject>(client, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crdName}`), 'Established')?.status === 'True'
        ? true
        : undefined,
    { timeoutMs, what: `CRD ${crdName} to be Established` },
  );
  return changed;
}

interface Deployment extends KubeObject {
  spec?: { replicas?: number };
  status?: { availableReplicas?: number; readyReplicas?: number };
}
interface Pod extends KubeObject {
  status?: {
    phase?: string;
    containerStatuses?: { name: string; ready: boolean; restartCount: number; state?: Record<string, { reason?: string; message?: string }> }[];
  };
}

/** One line per Deployment (available/desired), and for each of their pods its phase, restarts and the end of its log. */
export interface SummaryOptions {
  logLines?: number;
  /** Log tails of every pod, ready or not, and the previous container's after a restart: where a pod looks fine but its work is not done. */
  allLogs?: boolean;
}

async function logTail(client: KubeClient, namespace: string, pod: string, lines: number, previous: boolean): Promise<string> {
  const log = await client
    .getText(`/api/v1/namespaces/${namespace}/pods/${pod}/log`, { tailLines: lines, ...(previous ? { previous: true } : {}) })
    .catch((err: unknown) => `(no log: ${(err as Error).message})`);
  return `    --- last lines of its ${previous ? "previous container's " : ''}log ---\n${String(log).trimEnd().replace(/^/gm, '    ')}`;
}

export async function deploymentSummary(client: KubeClient, namespace: string, names: readonly string[], options: SummaryOptions = {}): Promise<string> {
  const logLines = options.logLines ?? 10;
  const lines: string[] = [];
  const pods = (await client.get<{ items: Pod[] }>(`/api/v1/namespaces/${namespace}/pods`).catch(() => ({ items: [] as Pod[] }))).items;
  for (const name of names) {
    const d = await getOrNull<Deployment>(client, `/apis/apps/v1/namespaces/${namespace}/deployments/${name}`).catch(() => null);
    lines.push(
      d
        ? `  Deployment ${namespace}/${name}: ${d.status?.availableReplicas ?? 0}/${d.spec?.replicas ?? 1} available`
        : `  Deployment ${namespace}/${name}: not created`,
    );
    for (const pod of pods.filter((p) => p.metadata.name.startsWith(`${name}-`))) {
      const containers = pod.status?.containerStatuses ?? [];
      const state = containers
        .map(
          (c) =>
            `${c.name} ${c.ready ? 'ready' : 'not ready'}, ${c.restartCount} restarts${Object.entries(c.state ?? {})
              .map(([k, v]) => ` (${k}${v.reason ? `: ${v.reason}` : ''})`)
              .join('')}`,
        )
        .join('; ');
      lines.push(`    pod ${pod.metadata.name}: ${pod.status?.phase ?? 'unknown'}${state ? `; ${state}` : ''}`);
      if (options.allLogs && containers.some((c) => c.restartCount > 0)) lines.push(await logTail(client, namespace, pod.metadata.name, logLines, true));
      if (options.allLogs || containers.some((c) => !c.ready)) lines.push(await logTail(client, namespace, pod.metadata.name, logLines, false));
    }
  }
  return lines.join('\n');
}
