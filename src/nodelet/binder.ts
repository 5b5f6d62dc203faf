import type { EventRecorder } from './events.js';
import type { ImageCatalog } from './images.js';
import { isStatus, type KubeClient } from '../kube/client.js';
import { Informer, RESYNCING } from '../kube/informer.js';
import { rfc3339 } from './status.js';
import type { Pod } from './types.js';

/** Pods the nodelet schedules: the default scheduler's (the lab runs no kube-scheduler) and ours by name. */
const SCHEDULER_NAMES = ['default-scheduler', 'ocm-lab-nodelet'];

export type BindDecision = { bind: true } | { bind: false; ignore: true } | { bind: false; ignore: false; reason: string };

/** Whether this nodelet binds a pending pod, and if not, why (the Event text). */
export function bindDecision(pod: Pod, nodeName: string, images: Pick<ImageCatalog, 'runs' | 'describe'>): BindDecision {
  if (pod.spec.nodeName || pod.metadata.deletionTimestamp) return { bind: false, ignore: true };
  if (!SCHEDULER_NAMES.includes(pod.spec.schedulerName ?? 'default-scheduler')) return { bind: false, ignore: true };
  const foreign = [...(pod.spec.initContainers ?? []), ...pod.spec.containers].filter((c) => !images.runs(c.image));
  if (foreign.length === 0) return { bind: true };
  const list = foreign.map((c) => `${c.name} (${c.image ?? 'no image'})`).join(', ');
  return {
    bind: false,
    ignore: false,
    reason:
      `0/1 nodes are available: node ${nodeName} is an ocm-lab nodelet, which runs only the images ${images.describe()}; ` +
      `container ${list} uses another image (the image map is in docs/nodelet.md).`,
  };
}

/**
 * The lab's scheduler: binds pending pods of our image to this nodelet's node
 * (with the kube-scheduler identity: nodes may not create bindings) and marks
 * pods of other images Unschedulable with an Event saying why.
 */
export class Binder {
  private readonly pods: Informer<Pod>;
  private readonly done = new Set<string>();

  constructor(
    private readonly client: KubeClient,
    private readonly nodeName: string,
    private readonly events: EventRecorder,
    private readonly log: (line: string) => void,
    private readonly images: Pick<ImageCatalog, 'runs' | 'describe'>,
  ) {
    this.pods = new Informer<Pod>(client, '/api/v1/pods', log, { fieldSelector: 'spec.nodeName=,status.phase!=Succeeded,status.phase!=Failed' }, RESYNCING);
    this.pods.onEvent(({ type, object: pod }) => {
      if (type !== 'DELETED') return void this.consider(pod);
      this.done.delete(pod.metadata.uid ?? '');
      this.events.forget(pod.metadata.uid);
    });
  }

  start(): void {
    this.pods.start();
  }

  stop(): Promise<void> {
    return this.pods.stop();
  }

  private async consider(pod: Pod): Promise<void> {
    const uid = pod.metadata.uid ?? '';
    if (this.done.has(uid)) return;
    const decision = bindDecision(pod, this.nodeName, this.images);
    if (decision.bind === false && decision.ignore) return;
    this.done.add(uid);
    const { name, namespace } = pod.metadata;
    try {
      if (decision.bind) {
        await this.client.post(`/api/v1/namespaces/${namespace}/pods/${name}/binding`, {
          apiVersion: 'v1',
          kind: 'Binding',
          metadata: { name, namespace, uid },
          target: { apiVersion: 'v1', kind: 'Node', name: this.nodeName },
        });
        this.events.record(pod, 'Normal', 'Scheduled', `Successfully assigned ${namespace}/${name} to ${this.nodeName}`);
      } else {
        this.events.record(pod, 'Warning', 'FailedScheduling', decision.reason);
        const conditions = (pod.status?.conditions ?? []).filter((c) => c.type !== 'PodScheduled');
        await this.client.mergePatch(`/api/v1/namespaces/${namespace}/pods/${name}/status`, {
          metadata: { uid },
          status: {
            conditions: [
              ...conditions,
              {
                type: 'PodScheduled',
                status: 'False',
                reason: 'Unschedulable',
                message: decision.reason,
                lastProbeTime: null,
                lastTransitionTime: rfc3339(new Date()),
              },
            ],
          },
        });
      }
    } catch (err) {
      if (isStatus(err, 404) || isStatus(err, 409)) return; // gone, or bound meanwhile
      this.done.delete(uid);
      this.log(`scheduling ${namespace}/${name}: ${(err as Error).message}; trying again`);
      setTimeout(() => void this.consider(pod), 2_000);
    }
  }
}
