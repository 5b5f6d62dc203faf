import type { KubeClient } from '../../kube/client.js';
import type { TunnelClient } from '../../tunnel/index.js';
import { hubTunnel } from '../cluster-proxy/hub-tunnel.js';

/**
 * One tunnel client to the hub's proxy-server, made on first use and kept: every
 * ClusterProxy request rides it. `invalidate` drops it (the proxy-server moved or
 * the stream broke) so the next request builds a fresh one.
 */
export class TunnelSource {
  private current: Promise<TunnelClient> | undefined;
  private readonly onReset = new Set<() => void>();

  constructor(
    private readonly hub: KubeClient,
    private readonly log: (line: string) => void = () => undefined,
  ) {}

  get(): Promise<TunnelClient> {
    if (!this.current) {
      const made = hubTunnel(this.hub).then(({ client, address }) => {
        this.log(`tunnel client to the proxy-server at ${address}`);
        return client;
      });
      made.catch(() => {
        if (this.current === made) this.current = undefined;
      });
      this.current = made;
    }
    return this.current;
  }

  /** Called when a request found the tunnel broken. */
  invalidate(): void {
    const old = this.current;
    this.current = undefined;
    old?.then(
      (c) => c.close(),
      () => undefined,
    );
    for (const f of this.onReset) f();
  }

  whenReset(f: () => void): void {
    this.onReset.add(f);
  }

  close(): void {
    this.current?.then(
      (c) => c.close(),
      () => undefined,
    );
    this.current = undefined;
  }
}
