import type { KubeClient, WatchEvent } from '../../kube/client.js';
import { sleep } from '../../kube/wait.js';

interface Named {
  metadata: { name: string; resourceVersion?: string };
}

export type InformerEvent<T> = { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: T };

/**
 * A list+watch cache of one collection: list once, then watch from the list's
 * resourceVersion; on a broken watch, watch again from the last version seen; on 410
 * Gone (or any other failure) list again and report the differences. Readers never
 * call the API server.
 */
export class Informer<T extends Named> {
  private readonly items = new Map<string, T>();
  private resourceVersion = '';
  private readonly listeners = new Set<(e: InformerEvent<T>) => void>();
  private synced = false;
  private readonly syncWaiters: (() => void)[] = [];

  constructor(
    private readonly client: KubeClient,
    private readonly path: string,
    private readonly log: (line: string) => void,
    private readonly query: Record<string, string> = {},
  ) {}

  get(name: string): T | undefined {
    return this.items.get(name);
  }

  list(): T[] {
    return [...this.items.values()];
  }

  /** The resourceVersion of the last event or list seen. */
  lastResourceVersion(): string {
    return this.resourceVersion;
  }

  hasSynced(): boolean {
    return this.synced;
  }

  waitForSync(): Promise<void> {
    return this.synced ? Promise.resolve() : new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  onEvent(listener: (e: InformerEvent<T>) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(e: InformerEvent<T>): void {
    for (const l of this.listeners) l(e);
  }

  private async relist(): Promise<void> {
    const list = await this.client.get<{ metadata: { resourceVersion: string }; items: T[] }>(this.path, this.query);
    const seen = new Set<string>();
    for (const item of list.items) {
      seen.add(item.metadata.name);
      const old = this.items.get(item.metadata.name);
      this.items.set(item.metadata.name, item);
      if (!old) this.emit({ type: 'ADDED', object: item });
      else if (old.metadata.resourceVersion !== item.metadata.resourceVersion) this.emit({ type: 'MODIFIED', object: item });
    }
    for (const [name, old] of [...this.items]) {
      if (!seen.has(name)) {
        this.items.delete(name);
        this.emit({ type: 'DELETED', object: old });
      }
    }
    this.resourceVersion = list.metadata.resourceVersion;
    if (!this.synced) {
      this.synced = true;
      this.syncWaiters.splice(0).forEach((w) => w());
    }
  }

  /** Runs until the signal aborts. */
  async run(signal: AbortSignal): Promise<void> {
    let needList = true;
    let failures = 0;
    while (!signal.aborted) {
      try {
        if (needList) {
          await this.relist();
          needList = false;
        }
        let gone = false;
        await this.client.watch<T>(
          this.path,
          { ...this.query, resourceVersion: this.resourceVersion, allowWatchBookmarks: 'true', timeoutSeconds: String(240 + Math.floor(Math.random() * 120)) },
          (e: WatchEvent<T>) => {
            if (e.type === 'ERROR') {
              gone = true;
              if (e.object.code !== 410) this.log(`watch ${this.path}: ${e.object.message ?? 'error event'}`);
              return;
            }
            const rv = e.object.metadata.resourceVersion;
            if (rv) this.resourceVersion = rv;
            if (e.type === 'BOOKMARK') return;
            if (e.type === 'DELETED') this.items.delete(e.object.metadata.name);
            else this.items.set(e.object.metadata.name, e.object);
            this.emit({ type: e.type, object: e.object });
          },
          signal,
        );
        if (gone) needList = true;
        failures = 0;
      } catch (err) {
        if (signal.aborted) return;
        failures++;
        needList = true;
        this.log(`list/watch ${this.path} failed (${failures} in a row): ${(err as Error).message}`);
        await sleep(Math.min(200 * 2 ** failures, 5_000));
      }
    }
  }
}
