import { describe, expect, it } from 'vitest';
import type { KubeClient, WatchEvent } from '../../src/kube/client.js';
import { Informer, type InformerEvent } from '../../src/kube/informer.js';

interface Obj {
  metadata: { name: string; namespace?: string; uid?: string; resourceVersion?: string };
}

const obj = (name: string, uid: string, rv: string): Obj => ({ metadata: { name, namespace: 'ns', uid, resourceVersion: rv } });

/** Answers lists from `lists` in turn and plays `watches` in turn; after the last watch it waits for the abort. */
function fakeClient(lists: Obj[][], watches: WatchEvent<Obj>[][]): Pick<KubeClient, 'get' | 'watch'> {
  let listed = 0;
  let watched = 0;
  return {
    get: <T>() => Promise.resolve({ metadata: { resourceVersion: String(++listed * 100) }, items: lists[Math.min(listed - 1, lists.length - 1)] } as T),
    watch: async <T>(_p: string, _q: unknown, onEvent: (e: WatchEvent<T>) => void, signal: AbortSignal) => {
      const events = watches[watched++];
      if (!events) return new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      for (const e of events) onEvent(e as WatchEvent<T>);
    },
  };
}

async function run(informer: Informer<Obj>, until: () => boolean): Promise<void> {
  informer.start();
  for (let i = 0; i < 100 && !until(); i++) await new Promise((r) => setImmediate(r));
  await informer.stop();
}

describe('Informer', () => {
  it('lists, follows the watch, and lists again after 410 Gone reporting what vanished or was replaced', async () => {
    const client = fakeClient(
      [[obj('a', 'u1', '1'), obj('b', 'u2', '1')], [obj('a', 'u9', '7')]],
      [
        [
          { type: 'MODIFIED', object: obj('b', 'u2', '5') },
          { type: 'ERROR', object: { code: 410 } },
        ],
      ],
    );
    const events: string[] = [];
    let syncs = 0;
    const informer = new Informer<Obj>(client, '/api/v1/namespaces/ns/things', () => undefined);
    informer.onEvent((e: InformerEvent<Obj>) => events.push(`${e.type} ${e.object.metadata.name} ${e.object.metadata.uid}`));
    informer.onSync(() => syncs++);
    await run(informer, () => syncs === 2);
    expect(events).toEqual(['ADDED a u1', 'ADDED b u2', 'MODIFIED b u2', 'DELETED a u1', 'ADDED a u9', 'DELETED b u2']);
    expect(informer.get('a')?.metadata.uid).toBe('u9');
    expect(informer.list()).toHaveLength(1);
    expect(informer.lastResourceVersion()).toBe('200');
  });

  it('with resync, reports every listed object again even when unchanged', async () => {
    const client = fakeClient([[obj('a', 'u1', '1')]], [[{ type: 'ERROR', object: { code: 410 } }]]);
    const events: string[] = [];
    let syncs = 0;
    const informer = new Informer<Obj>(client, '/api/v1/things', () => undefined, {}, { resync: true });
    informer.onEvent((e) => events.push(`${e.type} ${e.object.metadata.name}`));
    informer.onSync(() => syncs++);
    await run(informer, () => syncs === 2);
    expect(events).toEqual(['ADDED a', 'MODIFIED a']);
    expect(informer.get('a', 'ns')).toBeDefined();
  });
});
