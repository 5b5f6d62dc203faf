import type { ContainerState, ContainerStatus, Pod, PodCondition, PodStatus } from './types.js';

/** What the nodelet knows about one container right now. */
export interface ContainerRuntimeState {
  name: string;
  image: string;
  restartCount: number;
  state: ContainerState;
  lastState: ContainerState;
  /** Running and (if it has a readiness probe) passing it. */
  ready: boolean;
  /** The host pid of the container's init process while it runs. */
  pid?: number;
}

export interface StatusInputs {
  /** The node's address: hostIP, and podIP of pods without a network of their own (hostNetwork, loopback labs). */
  address: string;
  /** The pod's own address, once its network namespace exists. */
  podIP?: string;
  now: Date;
  /** What the pod's status was before (from the API server or our last update): transition times and startTime carry over. */
  previous?: PodStatus;
  containers: ContainerRuntimeState[];
  initContainers?: ContainerRuntimeState[];
  /** Set while the pod cannot run at all (e.g. init container failed for good). */
  podMessage?: string;
}

function phaseOf(states: ContainerRuntimeState[], inits: ContainerRuntimeState[]): NonNullable<PodStatus['phase']> {
  if (inits.some((c) => c.state.terminated && c.state.terminated.exitCode !== 0)) return 'Failed';
  if (states.length > 0 && states.every((c) => c.state.terminated)) {
    return states.every((c) => c.state.terminated?.exitCode === 0) ? 'Succeeded' : 'Failed';
  }
  const everStarted = (c: ContainerRuntimeState) => !!c.state.running || !!c.state.terminated || c.restartCount > 0 || !!c.lastState.terminated;
  return states.some(everStarted) ? 'Running' : 'Pending';
}

function condition(type: string, ok: boolean, previous: PodCondition[] | undefined, now: Date, reason?: string, message?: string): PodCondition {
  const status = ok ? 'True' : 'False';
  const before = previous?.find((c) => c.type === type);
  const lastTransitionTime = before && before.status === status && before.lastTransitionTime ? before.lastTransitionTime : rfc3339(now);
  return {
    type,
    status,
    lastProbeTime: null,
    lastTransitionTime,
    ...(ok || !reason ? {} : { reason }),
    ...(ok || !message ? {} : { message }),
  };
}

/** RFC 3339 with second precision, as the API server stores metav1.Time. */
export function rfc3339(d: Date): string {
  return `${d.toISOString().slice(0, 19)}Z`;
}

function toStatus(c: ContainerRuntimeState): ContainerStatus {
  return {
    name: c.name,
    image: c.image,
    imageID: c.image,
    ...(c.pid !== undefined ? { containerID: `ocm-lab://${c.pid}` } : {}),
    ready: c.ready,
    started: !!c.state.running,
    restartCount: c.restartCount,
    state: c.state,
    lastState: c.lastState,
  };
}

/** The pod status the nodelet reports: phase, conditions, IPs and container statuses. */
export function computePodStatus(pod: Pod, inputs: StatusInputs): PodStatus {
  const { now, previous, address } = inputs;
  const podIP = inputs.podIP ?? address;
  const inits = inputs.initContainers ?? [];
  const phase = phaseOf(inputs.containers, inits);
  const initialized = inits.every((c) => c.state.terminated?.exitCode === 0);
  const notReady = inputs.containers.filter((c) => !c.ready).map((c) => c.name);
  const completed = phase === 'Succeeded' || phase === 'Failed';
  const readyReason = completed ? 'PodCompleted' : 'ContainersNotReady';
  const readyMessage = completed ? undefined : `containers with unready status: [${notReady.join(' ')}]`;
  const uninitialized = inits.filter((c) => c.state.terminated?.exitCode !== 0).map((c) => c.name);
  const prev = previous?.conditions;
  const allReady = notReady.length === 0 && !completed;
  const conditions: PodCondition[] = [
    condition('PodReadyToStartContainers', true, prev, now),
    condition('Initialized', initialized, prev, now, 'ContainersNotInitialized', `containers with incomplete status: [${uninitialized.join(' ')}]`),
    condition('Ready', allReady, prev, now, readyReason, readyMessage),
    condition('ContainersReady', allReady, prev, now, readyReason, readyMessage),
    condition('PodScheduled', true, prev, now),
  ];
  const byOrder = (spec: { name: string }[], states: ContainerRuntimeState[]) =>
    spec
      .map((s) => states.find((c) => c.name === s.name))
      .filter((c): c is ContainerRuntimeState => !!c)
      .map(toStatus);
  const status: PodStatus = {
    phase,
    conditions,
    hostIP: address,
    hostIPs: [{ ip: address }],
    podIP,
    podIPs: [{ ip: podIP }],
    startTime: previous?.startTime ?? rfc3339(now),
    containerStatuses: byOrder(pod.spec.containers, inputs.containers),
  };
  if (inits.length) status.initContainerStatuses = byOrder(pod.spec.initContainers ?? [], inits);
  if (inputs.podMessage) status.message = inputs.podMessage;
  return status;
}

/** JSON with sorted keys: equal statuses give equal text, whoever built them. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}
