import type { KubeClient } from '../kube/client.js';
import type { Pod } from './types.js';

interface CachedToken {
  token: string;
  refreshAt: number;
}

/** When a token of `lifetimeSeconds` issued at `issuedAtMs` is renewed: after 80 % of its life, as the kubelet does. */
export function tokenRefreshAt(issuedAtMs: number, lifetimeSeconds: number): number {
  return issuedAtMs + Math.floor(lifetimeSeconds * 1000 * 0.8);
}

/**
 * ServiceAccount tokens for one pod, from the TokenRequest API, bound to the
 * pod object (they stop working when the pod is deleted), cached per
 * audience and lifetime until 80 % of their life has passed.
 */
export class PodTokens {
  private readonly cache = new Map<string, CachedToken>();

  constructor(
    private readonly client: KubeClient,
    private readonly pod: Pod,
    private readonly now: () => number = Date.now,
  ) {}

  serviceAccount(): string {
    return this.pod.spec.serviceAccountName || 'default';
  }

  async token(audience: string | undefined, expirationSeconds: number): Promise<string> {
    const key = `${audience ?? ''}|${expirationSeconds}`;
    const cached = this.cache.get(key);
    if (cached && cached.refreshAt > this.now()) return cached.token;
    const ns = this.pod.metadata.namespace ?? 'default';
    const issuedAt = this.now();
    const res = await this.client.post<{ status: { token: string; expirationTimestamp: string } }>(
      `/api/v1/namespaces/${ns}/serviceaccounts/${this.serviceAccount()}/token`,
      {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: {
          audiences: audience ? [audience] : null,
          expirationSeconds,
          boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: this.pod.metadata.name, uid: this.pod.metadata.uid },
        },
      },
    );
    this.cache.set(key, { token: res.status.token, refreshAt: tokenRefreshAt(issuedAt, expirationSeconds) });
    return res.status.token;
  }

  /** The earliest time a cached token must be renewed (Infinity with no tokens). */
  nextRefresh(): number {
    return Math.min(Infinity, ...[...this.cache.values()].map((t) => t.refreshAt));
  }
}
