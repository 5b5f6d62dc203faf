import crypto from 'node:crypto';
import type { KubeClient } from '../kube/client.js';
import { rfc3339 } from './status.js';
import type { Pod } from './types.js';

export type EventType = 'Normal' | 'Warning';

/**
 * Writes core/v1 Events about pods, as `kubectl describe pod` shows them.
 * The same (pod, reason, message) is written once: a crash loop or a pod that
 * keeps being skipped does not flood the API server. Events that recur by
 * nature (a failing probe) are counted instead, as the kubelet does: one Event
 * whose `count` and `lastTimestamp` go up.
 */
export class EventRecorder {
  private readonly written = new Set<string>();
  private readonly counted = new Map<string, { name: string; count: number; created: Promise<boolean> }>();

  constructor(
    private readonly client: KubeClient,
    private readonly component: string,
    private readonly host: string,
    private readonly log: (line: string) => void,
  ) {}

  record(pod: Pod, type: EventType, reason: string, message: string, fieldPath?: string, once = true): void {
    const key = `${pod.metadata.uid}|${reason}|${message}`;
    if (once && this.written.has(key)) return;
    this.written.add(key);
    const ns = pod.metadata.namespace ?? 'default';
    const now = rfc3339(new Date());
    const seen = once ? undefined : this.counted.get(key);
    if (seen) {
      const count = ++seen.count;
      void seen.created.then((ok) => {
        if (!ok) return;
        this.client
          .mergePatch(`/api/v1/namespaces/${ns}/events/${seen.name}`, { count, lastTimestamp: now })
          .catch((err: Error) => this.log(`event ${reason} for ${ns}/${pod.metadata.name}: ${err.message}`));
      });
      return;
    }
    const body = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `${pod.metadata.name}.${crypto.randomBytes(8).toString('hex')}`, namespace: ns },
      involvedObject: { apiVersion: 'v1', kind: 'Pod', namespace: ns, name: pod.metadata.name, uid: pod.metadata.uid, ...(fieldPath ? { fieldPath } : {}) },
      reason,
      message,
      type,
      source: { component: this.component, host: this.host },
      reportingComponent: this.component,
      reportingInstance: this.host,
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    };
    const created = this.client.post(`/api/v1/namespaces/${ns}/events`, body).then(
      () => true,
      (err: Error) => {
        this.log(`event ${reason} for ${ns}/${pod.metadata.name}: ${err.message}`);
        return false;
      },
    );
    if (!once) this.counted.set(key, { name: body.metadata.name, count: 1, created });
  }

  /** Forget a pod (it is gone): its uid never comes back. */
  forget(uid: string | undefined): void {
    for (const key of [...this.written]) if (key.startsWith(`${uid}|`)) this.written.delete(key);
    for (const key of [...this.counted.keys()]) if (key.startsWith(`${uid}|`)) this.counted.delete(key);
  }
}
