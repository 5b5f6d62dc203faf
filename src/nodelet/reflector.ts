import { sleep } from '../kube/wait.js';
import type { KubeClient } from '../kube/client.js';
import type { Pod } from './types.js';

export interface ReflectorHandlers<T> {
  upsert(o: T): void;
  remove(o: T): void;
  /** After each full list: the store matches the server. */
  synced?(): void;
}

interface Listed {
  metadata: { name: string; namespace?: string; uid?: string; resourceVersion?: string };
}

/**
 * List+watch of one collection, like a client-go reflector: a list fills the
 * store, a watch from its resourceVersion keeps it current, a broken or
 * expired watch lists again (reporting objects that vanished meanwhile).
 */
export class Reflector<T extends Listed> {
  private readonly store = new Map<string, T>();
  private abort = new AbortController();
  private stopped = false;
  private loop: Promise<void> | undefined;
  private listedOnce = false;

  constructor(
    private readonly client: Pick<KubeClient, 'get' | 'watch'>,
    /** Collection path, e.g. /api/v1/pods. */
    private readonly path: string,
    private readonly query: { fieldSelector?: string },
    private readonly handlers: ReflectorHandlers<T>,
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

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      try {
        let rv = await this.list();
        failures = 0;
        // Watch until the server says our resourceVersion is too old (410) or the stream breaks.
        for (;;) {
          if (this.stopped) return;
          const next = await this.watchOnce(rv);
          if (next === null) break;
          rv = next;
        }
      } catch (err) {
        if (this.stopped) return;
        failures++;
        this.log(`${this.path}${this.query.fieldSelector ? ` (${this.query.fieldSelector})` : ''}: ${(err as Error).message}; listing again`);
        await sleep(Math.min(1000 * 2 ** Math.min(failures - 1, 4), 15_000), this.abort.signal);
      }
    }
  }

  private key(o: T): string {
    return o.metadata.uid ?? `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
  }

  private async list(): Promise<string> {
    const list = await this.client.get<{ metadata: { resourceVersion: string }; items: T[] }>(this.path, this.query);
    const seen = new Set<string>();
    for (const o of list.items) {
      const key = this.key(o);
      seen.add(key);
      this.store.set(key, o);
      this.handlers.upsert(o);
    }
    for (const [key, o] of [...this.store]) {
      if (!seen.has(key)) {
        this.store.delete(key);
        this.handlers.remove(o);
      }
    }
    this.listedOnce = true;
    this.handlers.synced?.();
    return list.metadata.resourceVersion;
  }

  /** One watch request; the resourceVersion to continue from, or null when a new list is needed. */
  private async watchOnce(rv: string): Promise<string | null> {
    let last: string | null = rv;
    this.abort = new AbortController();
    await this.client.watch<T>(
      this.path,
      { ...this.query, resourceVersion: rv, allowWatchBookmarks: true, timeoutSeconds: 240 + Math.floor(Math.random() * 120) },
      (event) => {
        if (event.type === 'ERROR') {
          last = null; // typically 410 Gone: our resourceVersion is too old
          return;
        }
        const o = event.object;
        if (o.metadata.resourceVersion && last !== null) last = o.metadata.resourceVersion;
        if (event.type === 'BOOKMARK') return;
        const key = this.key(o);
        if (event.type === 'DELETED') {
          this.store.delete(key);
          this.handlers.remove(o);
        } else {
          this.store.set(key, o);
          this.handlers.upsert(o);
        }
      },
      this.abort.signal,
    );
    return last;
  }
}

/** The pods bound to one node (`spec.nodeName=<node>`). */
export class PodReflector extends Reflector<Pod> {
  constructor(client: KubeClient, fieldSelector: string, handlers: ReflectorHandlers<Pod>, log: (line: string) => void) {
    super(client, '/api/v1/pods', { fieldSelector }, handlers, log);
  }

  pods(): Pod[] {
    return this.items();
  }
}
