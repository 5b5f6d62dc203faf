import { gatewayFromSecret, type ClusterGateway, type GatewayTarget, type ManagedClusterLike, type SecretLike } from './gateway-object.js';
import type { Informer } from '../../kube/informer.js';

export interface GatewayEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: ClusterGateway;
  /** Numeric resourceVersion of the change (etcd revisions of Secrets and ManagedClusters share one counter). */
  rv: bigint;
}

interface Entry {
  gateway: ClusterGateway;
  target: GatewayTarget;
}

const RING = 500;

function sameContent(a: Entry, b: Entry): boolean {
  const strip = (e: Entry) => JSON.stringify({ ...e, gateway: { ...e.gateway, metadata: { ...e.gateway.metadata, resourceVersion: undefined } } });
  return strip(a) === strip(b);
}

function rvOf(x: { metadata: { resourceVersion?: string } } | undefined): bigint {
  try {
    return BigInt(x?.metadata.resourceVersion ?? '0');
  } catch {
    return 0n;
  }
}

/**
 * ClusterGateways kept current from the Secret and ManagedCluster caches: every change
 * recomputes the one gateway it touches and, when the result differs, tells the
 * watchers. A gateway's resourceVersion is the newer of its Secret's and its
 * ManagedCluster's; recent events are kept so a watch can resume from a list.
 */
export class GatewayStore {
  private readonly entries = new Map<string, Entry>();
  private readonly ring: GatewayEvent[] = [];
  private readonly watchers = new Set<(e: GatewayEvent) => void>();
  private latest = 0n;

  constructor(
    private readonly secrets: Informer<SecretLike>,
    private readonly clusters: Informer<ManagedClusterLike & { metadata: { name: string; resourceVersion?: string } }> | null,
    private readonly log: (line: string) => void = () => undefined,
  ) {
    secrets.onEvent((e) => this.recompute(e.object.metadata.name, rvOf(e.object)));
    clusters?.onEvent((e) => this.recompute(e.object.metadata.name, rvOf(e.object)));
  }

  get(name: string): Entry | undefined {
    return this.entries.get(name);
  }

  list(): ClusterGateway[] {
    return [...this.entries.values()].map((e) => e.gateway).sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  }

  /** The list's resourceVersion: the newest change either cache has seen. */
  resourceVersion(): string {
    const fromCaches = [
      rvOf({ metadata: { resourceVersion: this.secrets.lastResourceVersion() } }),
      rvOf({ metadata: { resourceVersion: this.clusters?.lastResourceVersion() } }),
    ];
    const max = [this.latest, ...fromCaches].reduce((a, b) => (b > a ? b : a), 0n);
    return String(max);
  }

  /**
   * Subscribes to changes after `since` (a resourceVersion from a list or object); events
   * still in memory are replayed first. Returns null when `since` is too old to resume.
   */
  watch(since: bigint | null, listener: (e: GatewayEvent) => void): { replay: GatewayEvent[]; stop: () => void } | null {
    let replay: GatewayEvent[] = [];
    if (since !== null) {
      const oldest = this.ring[0];
      if (oldest && since < oldest.rv - 1n && this.ring.length >= RING) return null;
      replay = this.ring.filter((e) => e.rv > since);
    }
    this.watchers.add(listener);
    return { replay, stop: () => this.watchers.delete(listener) };
  }

  /** Recomputes one gateway from the caches (also used by the health writer after it patched a Secret). */
  recompute(name: string, rv: bigint): void {
    const secret = this.secrets.get(name);
    const cluster = this.clusters?.get(name);
    const before = this.entries.get(name);
    let next: Entry | undefined;
    if (secret) {
      const converted = gatewayFromSecret(secret, cluster);
      if (converted.ok) {
        const newest = [rvOf(secret), rvOf(cluster)].reduce((a, b) => (b > a ? b : a));
        converted.gateway.metadata.resourceVersion = String(newest);
        next = { gateway: converted.gateway, target: converted.target };
      } else if (secret.metadata.labels && Object.keys(secret.metadata.labels).some((k) => k.startsWith('cluster.core.oam.dev/'))) {
        this.log(`not a ClusterGateway: ${converted.reason}`);
      }
    }
    if (rv > this.latest) this.latest = rv;
    if (!next && !before) return;
    // ManagedCluster status changes (leases, conditions) touch its resourceVersion often without
    // changing the gateway: only a different gateway is an event.
    if (next && before && sameContent(next, before)) return;
    let event: GatewayEvent;
    if (next) {
      this.entries.set(name, next);
      event = { type: before ? 'MODIFIED' : 'ADDED', object: next.gateway, rv: BigInt(next.gateway.metadata.resourceVersion ?? '0') };
    } else {
      this.entries.delete(name);
      event = { type: 'DELETED', object: { ...before!.gateway, metadata: { ...before!.gateway.metadata, resourceVersion: String(rv) } }, rv };
    }
    this.ring.push(event);
    if (this.ring.length > RING) this.ring.shift();
    for (const w of this.watchers) w(event);
  }
}
