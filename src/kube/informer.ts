import type { KubeClient, WatchEvent } from './client.js';
import { sleep } from './wait.js';

interface Listed {
  metadata: { name: string; namespace?: string; uid?: string; resourceVersion?: string };
}

export type InformerEvent<T> = { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: T };

export interface InformerOptions {
  /**
   * Report every listed object after each list as MODIFIED, changed or not (client-go's
   * resync): handlers that act on what an object says get another chance after a failure.
   */
  resync?: boolean;
  /** Wait before listing again after a failure: `firstMs`, doubling up to `maxMs` (default 400 ms to 5 s). */
  retry?: { firstMs: number; maxMs: number };
}

/** For controllers that act on every object (the nodelet, the addon agents): each list reports all, failures back off to 15 s. */
export const RESYNCING: InformerOptions = { resync: true, retry: { firstMs: 1_000, maxMs: 15_000 } };

/**
 * A list+watch cache of one collection, like client-go's informer: a list fills
 * the store, a watch from its resourceVersion keeps it current, a watch that ends
 * is opened again from the last version seen, and on 410 Gone (or any failure) it
 * lists again and reports the differences, objects that vanished included. An
 * object replaced under the same name (a new uid) is reported as deleted and added.
 * Readers never call the API server.
 */
export class Informer<T extends Listed> {
  private readonly items = new Map<string, T>();
  private resourceVersion = '';
  private readonly listeners = new Set<(e: InformerEvent<T>) => void>();
  private readonly syncListeners = new Set<() => void>();
  private synced = false;
  private readonly syncWaiters: (() => void)[] = [];
  /** The namespace of a namespaced collection path (`…/namespaces/<ns>/…`): what `get(name)` looks in. */
  private readonly namespace: string | undefined;
  private running: { abort: AbortController; loop: Promise<void> } | undefined;

  constructor(
    private readonly client: Pick<KubeClient, 'get' | 'watch'>,
    /** Collection path, e.g. /api/v1/pods. */
    private readonly path: string,
    private readonly log: (line: string) => void,
    private readonly query: Record<string, string> = {},
    private readonly options: InformerOptions = {},
  ) {
    this.namespace = /\/namespaces\/([^/]+)\//.exec(path)?.[1];
  }

  get(name: string, namespace = this.namespace): T | undefined {
    return this.items.get(`${namespace ?? ''}/${name}`);
  }

  list(): T[] {
    return [...this.items.values()];
  }

  /** The resourceVersion of the last event or list seen. */
  lastResourceVersion(): string {
    return this.resourceVersion;
  }

  /** Whether a list has filled the store at least once. */
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

  /** Called after each full list, when the store matches the server. */
  onSync(listener: () => void): () => void {
    this.syncListeners.add(listener);
    return () => this.syncListeners.delete(listener);
  }

  /** Runs in the background until `stop`. */
  start(): void {
    if (this.running) return;
    const abort = new AbortController();
    this.running = { abort, loop: this.run(abort.signal) };
  }

  async stop(): Promise<void> {
    this.running?.abort.abort();
    await this.running?.loop;
  }

  /** Runs until the signal aborts. */
  async run(signal: AbortSignal): Promise<void> {
    let needList = true;
    let failures = 0;
    while (!signal.aborted) {
      try {
        if (needList) {
          this.relist(await this.client.get<{ metadata: { resourceVersion: string }; items: T[] }>(this.path, this.query));
          needList = false;
        }
        needList = await this.watchOnce(signal);
        failures = 0;
      } catch (err) {
        if (signal.aborted) return;
        failures++;
        needList = true;
        this.log(
          `list/watch ${this.path}${this.query.fieldSelector ? ` (${this.query.fieldSelector})` : ''} failed (${failures} in a row): ${(err as Error).message}`,
        );
        const { firstMs, maxMs } = this.options.retry ?? { firstMs: 400, maxMs: 5_000 };
        await sleep(Math.min(firstMs * 2 ** (failures - 1), maxMs), signal);
      }
    }
  }

  private key(o: T): string {
    return `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
  }

  private emit(e: InformerEvent<T>): void {
    for (const l of this.listeners) l(e);
  }

  /** Stores `o`; an object of another uid under the same name is reported gone first. */
  private put(o: T, listed: boolean): void {
    const key = this.key(o);
    const old = this.items.get(key);
    if (old && old.metadata.uid !== o.metadata.uid) {
      this.items.delete(key);
      this.emit({ type: 'DELETED', object: old });
    }
    const previous = this.items.get(key);
    this.items.set(key, o);
    if (!previous) this.emit({ type: 'ADDED', object: o });
    else if (!listed || this.options.resync || previous.metadata.resourceVersion !== o.metadata.resourceVersion) this.emit({ type: 'MODIFIED', object: o });
  }

  private relist(list: { metadata: { resourceVersion: string }; items: T[] }): void {
    const seen = new Set<string>();
    for (const item of list.items) {
      seen.add(this.key(item));
      this.put(item, true);
    }
    for (const [key, old] of [...this.items]) {
      if (!seen.has(key)) {
        this.items.delete(key);
        this.emit({ type: 'DELETED', object: old });
      }
    }
    this.resourceVersion = list.metadata.resourceVersion;
    if (!this.synced) {
      this.synced = true;
      this.syncWaiters.splice(0).forEach((w) => w());
    }
    for (const l of this.syncListeners) l();
  }

  /** One watch request; true when the server said our resourceVersion is too old (410 Gone), so a new list is needed. */
  private async watchOnce(signal: AbortSignal): Promise<boolean> {
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
        if (gone) return;
        const rv = e.object.metadata.resourceVersion;
        if (rv) this.resourceVersion = rv;
        if (e.type === 'BOOKMARK') return;
        if (e.type === 'DELETED') {
          this.items.delete(this.key(e.object));
          this.emit({ type: 'DELETED', object: e.object });
        } else {
          this.put(e.object, false);
        }
      },
      signal,
    );
    return gone;
  }
}
