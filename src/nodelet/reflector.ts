import type { KubeClient } from './kube-client.js';
import type { Pod } from './types.js';

export interface ReflectorHandlers {
  upsert(pod: Pod): void;
  remove(pod: Pod): void;
  /** After each full list: the store matches the server. */
  synced?(): void;
}

/**
 * List+watch of pods matching a field selector, like a client-go reflector:
 * a list fills the store, a watch from its resourceVersion keeps it current,
 * a broken or expired watch lists again (reporting pods that vanished).
 */
export class PodReflector {
  private readonly store = new Map<string, Pod>();
  private abort = new AbortController();
  private stopped = false;
  private loop: Promise<void> | undefined;

  constructor(
    private readonly client: KubeClient,
    private readonly fieldSelector: string,
    private readonly handlers: ReflectorHandlers,
    private readonly log: (line: string) => void,
  ) {}

  pods(): Pod[] {
    return [...this.store.values()];
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
        this.log(`pods (${this.fieldSelector}): ${(err as Error).message}; listing again`);
        await sleep(Math.min(1000 * 2 ** Math.min(failures - 1, 4), 15_000), this.abort.signal);
      }
    }
  }

  private key(pod: Pod): string {
    return pod.metadata.uid ?? `${pod.metadata.namespace}/${pod.metadata.name}`;
  }

  private async list(): Promise<string> {
    const list = await this.client.get<{ metadata: { resourceVersion: string }; items: Pod[] }>('/api/v1/pods', { fieldSelector: this.fieldSelector });
    const seen = new Set<string>();
    for (const pod of list.items) {
      const key = this.key(pod);
      seen.add(key);
      this.store.set(key, pod);
      this.handlers.upsert(pod);
    }
    for (const [key, pod] of [...this.store]) {
      if (!seen.has(key)) {
        this.store.delete(key);
        this.handlers.remove(pod);
      }
    }
    this.handlers.synced?.();
    return list.metadata.resourceVersion;
  }

  /** One watch request; the resourceVersion to continue from, or null when a new list is needed. */
  private async watchOnce(rv: string): Promise<string | null> {
    let last: string | null = rv;
    this.abort = new AbortController();
    await this.client.watch<Pod>(
      '/api/v1/pods',
      { fieldSelector: this.fieldSelector, resourceVersion: rv, allowWatchBookmarks: true, timeoutSeconds: 240 + Math.floor(Math.random() * 120) },
      (event) => {
        if (event.type === 'ERROR') {
          last = null; // typically 410 Gone: our resourceVersion is too old
          return;
        }
        const pod = event.object;
        if (pod.metadata.resourceVersion && last !== null) last = pod.metadata.resourceVersion;
        if (event.type === 'BOOKMARK') return;
        const key = this.key(pod);
        if (event.type === 'DELETED') {
          this.store.delete(key);
          this.handlers.remove(pod);
        } else {
          this.store.set(key, pod);
          this.handlers.upsert(pod);
        }
      },
      this.abort.signal,
    );
    return last;
  }
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done(): void {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
