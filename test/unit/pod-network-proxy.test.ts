import { describe, expect, it } from 'vitest';
import type { WatchEvent } from '../../src/kube/client.js';
import { ServiceProxy } from '../../src/nodelet/pod-network/index.js';

/** A tiny in-memory stand-in for the API server's list and watch of two collections. */
class FakeApi {
  readonly lists = new Map<string, unknown[]>();
  private readonly watchers = new Map<string, (e: WatchEvent<unknown>) => void>();
  private ended = new Map<string, () => void>();

  get = async <T>(path: string): Promise<T> => ({ metadata: { resourceVersion: '1' }, items: this.lists.get(path) ?? [] }) as T;

  watch = async <T>(path: string, _q: unknown, onEvent: (e: WatchEvent<T>) => void, signal: AbortSignal): Promise<void> => {
    this.watchers.set(path, onEvent as (e: WatchEvent<unknown>) => void);
    await new Promise<void>((resolve) => {
      this.ended.set(path, resolve);
      signal.addEventListener('abort', () => resolve(), { once: true });
    });
  };

  send(path: string, event: WatchEvent<unknown>): void {
    this.watchers.get(path)!(event);
  }

  watching(path: string): boolean {
    return this.watchers.has(path);
  }
}

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(cond()).toBe(true);
}

const SERVICES = '/api/v1/services';
const SLICES = '/apis/discovery.k8s.io/v1/endpointslices';

describe('the nodelet’s service proxy', () => {
  it('writes rules after both collections are listed, and again on every change', async () => {
    const api = new FakeApi();
    api.lists.set(SERVICES, [{ metadata: { namespace: 'demo', name: 'web', resourceVersion: '1' }, spec: { clusterIP: '10.96.0.50', ports: [{ port: 80 }] } }]);
    const written: string[] = [];
    const proxy = new ServiceProxy({ client: api, sink: { setServiceRules: async (r) => void written.push(r) }, log: () => undefined, settleMs: 1 });
    proxy.start();
    await until(() => api.watching(SERVICES) && api.watching(SLICES));
    await proxy.flush();
    await until(() => written.length === 1);
    await proxy.firstWrite;
    expect(written[0]).toContain('demo/web::TCP has no endpoints');

    api.send(SLICES, {
      type: 'ADDED',
      object: {
        metadata: { namespace: 'demo', name: 'web-1', resourceVersion: '2', labels: { 'kubernetes.io/service-name': 'web' } },
        endpoints: [{ addresses: ['10.213.33.4'] }],
        ports: [{ port: 8080 }],
      },
    });
    await until(() => written.length === 2);
    expect(written[1]).toContain('--to-destination 10.213.33.4:8080');

    // A bookmark changes nothing, so nothing is written.
    api.send(SLICES, { type: 'BOOKMARK', object: { metadata: { name: '', resourceVersion: '3' } } });
    api.send(SERVICES, { type: 'DELETED', object: { metadata: { namespace: 'demo', name: 'web', resourceVersion: '4' } } });
    await until(() => written.length === 3);
    expect(written[2]).not.toContain('10.96.0.50');
    expect(proxy.rules()).toBe(written[2]);
    await proxy.stop();
  });
});
