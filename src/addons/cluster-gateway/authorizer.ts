import type { KubeClient } from '../../kube/client.js';
import type { CallerIdentity } from './identity.js';

export interface ResourceAttributes {
  group: string;
  version: string;
  resource: string;
  subresource?: string;
  name?: string;
  verb: string;
}

export type Decision = { allowed: true } | { allowed: false; reason: string };

const TTL_MS = 10_000;
const MAX_ENTRIES = 4096;

/**
 * Authorization by SubjectAccessReview on the hub, with decisions cached for ten
 * seconds (as the API server's delegating authorizer does) so a busy client costs one
 * review per ten seconds, not one per request.
 */
export class SubjectAccessReviewer {
  private readonly cache = new Map<string, { decision: Decision; until: number }>();

  constructor(private readonly hub: KubeClient) {}

  async authorize(who: CallerIdentity, attributes: ResourceAttributes): Promise<Decision> {
    const key = JSON.stringify([who.user, who.uid ?? '', [...who.groups].sort(), Object.entries(who.extra).sort(), attributes]);
    const now = Date.now();
    const hit = this.cache.get(key);
    if (hit && hit.until > now) return hit.decision;
    const review = await this.hub.post<{ status?: { allowed?: boolean; denied?: boolean; reason?: string; evaluationError?: string } }>(
      '/apis/authorization.k8s.io/v1/subjectaccessreviews',
      {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          user: who.user,
          groups: who.groups,
          ...(who.uid ? { uid: who.uid } : {}),
          ...(Object.keys(who.extra).length ? { extra: who.extra } : {}),
          resourceAttributes: { ...attributes, subresource: attributes.subresource ?? '', name: attributes.name ?? '' },
        },
      },
    );
    const decision: Decision = review.status?.allowed
      ? { allowed: true }
      : { allowed: false, reason: review.status?.reason || review.status?.evaluationError || '' };
    if (this.cache.size >= MAX_ENTRIES) this.cache.clear();
    this.cache.set(key, { decision, until: now + TTL_MS });
    return decision;
  }
}

/**
 * The API server's wording for a refusal: `clustergateways.cluster.core.oam.dev "c1" is forbidden:
 * User "u" cannot get resource "clustergateways/proxy" in API group "…" at the cluster scope`.
 */
export function forbiddenMessage(who: CallerIdentity, a: ResourceAttributes, reason: string): string {
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const target = a.name ? `${a.resource}.${a.group} "${a.name}"` : `${a.resource}.${a.group}`;
  return (
    `${target} is forbidden: User "${who.user}" cannot ${a.verb} resource "${resource}" ` +
    `in API group "${a.group}" at the cluster scope${reason ? `: ${reason}` : ''}`
  );
}
