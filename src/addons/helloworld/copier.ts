import { isStatus, type KubeClient } from '../../kube/client.js';
import type { KubeObject } from '../../kube/objects.js';
import { SYNCED_FROM_HUB_LABEL } from './constants.js';
import { sleep } from '../../kube/wait.js';

export interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
  binaryData?: Record<string, string>;
}

/**
 * ConfigMaps Kubernetes itself keeps in every namespace: the hub's would overwrite the cluster's
 * own (kube-root-ca.crt is the API server CA that every pod in the namespace trusts), and the
 * cluster's controller would write its own back. Upstream's example copies them too; we do not.
 */
const PER_NAMESPACE_CONFIGMAPS = new Set(['kube-root-ca.crt']);

/** Whether the agent copies a hub ConfigMap of this name. */
export function copiesConfigMap(name: string): boolean {
  return !PER_NAMESPACE_CONFIGMAPS.has(name);
}

/** The copy of a hub ConfigMap on the cluster: same name and data, in the agent's namespace, labelled as synced. */
export function spokeCopy(hub: ConfigMap, namespace: string): ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: hub.metadata.name, namespace, labels: { [SYNCED_FROM_HUB_LABEL]: '' } },
    ...(hub.data ? { data: hub.data } : {}),
    ...(hub.binaryData ? { binaryData: hub.binaryData } : {}),
  };
}

const sameMap = (a: Record<string, string> | undefined, b: Record<string, string> | undefined) => {
  const ka = Object.keys(a ?? {});
  return ka.length === Object.keys(b ?? {}).length && ka.every((k) => b?.[k] === a?.[k]);
};

/** Whether the cluster's ConfigMap differs from the copy we want (data, binaryData or the synced label). */
export function copyDiffers(existing: ConfigMap, wanted: ConfigMap): boolean {
  return (
    !sameMap(existing.data, wanted.data) || !sameMap(existing.binaryData, wanted.binaryData) || existing.metadata.labels?.[SYNCED_FROM_HUB_LABEL] === undefined
  );
}

export interface CopierOptions {
  spoke: Pick<KubeClient, 'get' | 'post' | 'put'>;
  /** Where the copies go on the cluster. */
  namespace: string;
  /** False while the addon is being removed from the cluster: nothing is copied then (as upstream's agent). */
  addonActive: () => Promise<boolean>;
  log: (line: string) => void;
  /** Wait before retrying a copy that failed. */
  retryMs?: number;
}

/**
 * Copies hub ConfigMaps to the cluster as they arrive from a watch: one write at a time, the
 * newest version of each ConfigMap wins (versions that arrive while a write runs are folded into
 * the next one), a failed copy is retried. A ConfigMap deleted on the hub keeps its copy, as with
 * upstream's example agent.
 */
export class ConfigMapCopier {
  private readonly pending = new Map<string, ConfigMap>();
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly options: CopierOptions) {}

  /** A ConfigMap as the hub has it now (added or changed). */
  offer(hubConfigMap: ConfigMap): void {
    if (!copiesConfigMap(hubConfigMap.metadata.name)) return;
    this.pending.set(hubConfigMap.metadata.name, hubConfigMap);
    this.running ??= this.drain().finally(() => (this.running = undefined));
  }

  /** Resolves when everything offered so far has been written (or given up on because the copier stopped). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  stop(): void {
    this.stopped = true;
  }

  private async drain(): Promise<void> {
    while (!this.stopped && this.pending.size) {
      const [name, cm] = this.pending.entries().next().value as [string, ConfigMap];
      this.pending.delete(name);
      try {
        const result = await this.copy(cm);
        if (result !== 'unchanged')
          this.options.log(
            `ConfigMap ${this.options.namespace}/${name} ${result} ` +
              `(hub ${cm.metadata.namespace}/${name} resourceVersion ${cm.metadata.resourceVersion ?? '?'})`,
          );
      } catch (err) {
        this.options.log(`copying ConfigMap ${cm.metadata.namespace}/${name}: ${(err as Error).message}; retrying`);
        await sleep(this.options.retryMs ?? 1000);
        if (!this.pending.has(name)) this.pending.set(name, cm);
      }
    }
  }

  /** Writes one copy: created, updated, unchanged, or skipped while the addon is being removed. */
  async copy(hubConfigMap: ConfigMap): Promise<'created' | 'updated' | 'unchanged' | 'skipped'> {
    if (!copiesConfigMap(hubConfigMap.metadata.name) || !(await this.options.addonActive())) return 'skipped';
    const wanted = spokeCopy(hubConfigMap, this.options.namespace);
    const collection = `/api/v1/namespaces/${this.options.namespace}/configmaps`;
    const path = `${collection}/${encodeURIComponent(wanted.metadata.name)}`;
    let existing: ConfigMap | null = null;
    try {
      existing = await this.options.spoke.get<ConfigMap>(path);
    } catch (err) {
      if (!isStatus(err, 404)) throw err;
    }
    if (!existing) {
      await this.options.spoke.post(collection, wanted);
      return 'created';
    }
    if (!copyDiffers(existing, wanted)) return 'unchanged';
    const labels = { ...existing.metadata.labels, ...wanted.metadata.labels };
    await this.options.spoke.put(path, { ...wanted, metadata: { ...existing.metadata, labels } });
    return 'updated';
  }
}
