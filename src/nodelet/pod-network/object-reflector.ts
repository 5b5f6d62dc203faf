import type { KubeClient } from '../kube-client.js';
import { sleep } from '../reflector.js';

interface Named {
  metadata: { name: string; namespace?: string; resourceVersion?: string };
}

/**
 * List+watch of one collection (all namespaces) into a store, as the nodelet's
 * PodReflector does for pods: a list fills the store, a watch from its
 * resourceVersion keeps it current, an expired or broken watch lists again.
 * `changed` runs after each list and after each event.
 */
export class ObjectReflector<T extends Named> {
  private readonly store = new Map<string, T>();
  private abort = new AbortController();
  private stopped = false;
  private loop: Promise<void> | undefined;
  private listedOnce = false;

  constructor(
    private readonly client: Pick<KubeClient, 'get' | 'watch'>,
    /** Collection path, e.g. /api/v1/services. */
    private readonly path: string,
    private readonly changed: () => void,
    private readonly log: (line: string) => void,
  ) {}

  items(): T[] {
    return [...this.store.values()];
  }

  /** Whether a list has filled the store at least once. */
  get synced(): boolean {
    return this.listedOnce;
  }

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    await this.loop;
  }

  private key(o: T): string {
    return `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      try {
        let rv = await this.list();
        failures = 0;
        for (;;) {
          if (this.stopped) return;
          const next = await this.watchOnce(rv);
          if (next === null) break;
          rv = next;
        }
      } catch (err) {
        if (this.stopped) return;
        failures++;
        this.log(`${this.path}: ${(err as Error).message}; listing again`);
        await sleep(Math.min(1000 * 2 ** Math.min(failures - 1, 4), 15_000), this.abort.signal);
      }
    }
  }

  private async list(): Promise<string> {
    const list = await this.client.get<{ metadata: { resourceVersion: string }; items: T[] }>(this.path);
    this.store.clear();
    for (const item of list.items) this.store.set(this.key(item), item);
    this.listedOnce = true;
    this.changed();
    return list.metadata.resourceVersion;
  }

  /** One watch request; the resourceVersion to continue from, or null when a new list is needed. */
  private async watchOnce(rv: string): Promise<string | null> {
    let last: string | null = rv;
    this.abort = new AbortController();
    await this.client.watch<T>(
      this.path,
      { resourceVersion: rv, allowWatchBookmarks: true, timeoutSeconds: 240 + Math.floor(Math.random() * 120) },
      (event) => {
        if (event.type === 'ERROR') {
          last = null; // typically 410 Gone: our resourceVersion is too old
          return;
        }
        const o = event.object;
        if (o.metadata.resourceVersion && last !== null) last = o.metadata.resourceVersion;
        if (event.type === 'BOOKMARK') return;
        if (event.type === 'DELETED') this.store.delete(this.key(o));
        else this.store.set(this.key(o), o);
        this.changed();
      },
      this.abort.signal,
    );
    return last;
  }
}
