import crypto from 'node:crypto';
import type { KubeClient } from './kube-client.js';
import { rfc3339 } from './status.js';
import type { Pod } from './types.js';

export type EventType = 'Normal' | 'Warning';

/**
 * Writes core/v1 Events about pods, as `kubectl describe pod` shows them.
 * The same (pod, reason, message) is written once: a crash loop or a pod that
 * keeps being skipped does not flood the API server.
 */
export class EventRecorder {
  private readonly written = new Set<string>();

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
    this.client.post(`/api/v1/namespaces/${ns}/events`, body).catch((err: Error) => this.log(`event ${reason} for ${ns}/${pod.metadata.name}: ${err.message}`));
  }

  /** Forget a pod (it is gone): its uid never comes back. */
  forget(uid: string | undefined): void {
    for (const key of [...this.written]) if (key.startsWith(`${uid}|`)) this.written.delete(key);
  }
}
