import { describe, expect, it } from 'vitest';
import { DEFAULT_BACKOFF, nextCrashCount, restartDelayMs, shouldRestart } from '../../src/nodelet/backoff.js';
import { bindDecision } from '../../src/nodelet/binder.js';
import { OCM_LAB_IMAGE } from '../../src/images/catalogue.js';
import { ImageCatalog, isOcmLabImage } from '../../src/nodelet/images.js';
import { microTime } from '../../src/nodelet/node-agent.js';
import { canonicalJson, computePodStatus, type ContainerRuntimeState } from '../../src/nodelet/status.js';
import { tokenRefreshAt } from '../../src/nodelet/tokens.js';
import type { Pod } from '../../src/nodelet/types.js';

const pod: Pod = {
  metadata: { name: 'web', namespace: 'team', uid: 'u' },
  spec: {
    containers: [
      { name: 'a', image: OCM_LAB_IMAGE },
      { name: 'b', image: OCM_LAB_IMAGE },
    ],
  },
};
const t0 = new Date('2026-01-01T00:00:00.123Z');
const t1 = new Date('2026-01-01T00:05:00Z');

function c(name: string, over: Partial<ContainerRuntimeState>): ContainerRuntimeState {
  return { name, image: OCM_LAB_IMAGE, restartCount: 0, state: { waiting: { reason: 'ContainerCreating' } }, lastState: {}, ready: false, ...over };
}
const running = (name: string, pid: number) => c(name, { state: { running: { startedAt: '2026-01-01T00:00:00Z' } }, ready: true, pid });
const cond = (s: ReturnType<typeof computePodStatus>, type: string) => s.conditions?.find((x) => x.type === type);

describe('pod status', () => {
  it('is Pending and not Ready while containers are being created; podIP is the cluster address', () => {
    const s = computePodStatus(pod, { address: '10.0.2.10', now: t0, containers: [c('a', {}), c('b', {})] });
    expect(s.phase).toBe('Pending');
    expect(s.podIP).toBe('10.0.2.10');
    expect(s.podIPs).toEqual([{ ip: '10.0.2.10' }]);
    expect(s.hostIP).toBe('10.0.2.10');
    expect(s.startTime).toBe('2026-01-01T00:00:00Z');
    expect(cond(s, 'Ready')).toMatchObject({ status: 'False', reason: 'ContainersNotReady', message: 'containers with unready status: [a b]' });
    expect(cond(s, 'PodScheduled')?.status).toBe('True');
  });

  it('is Running and Ready with every container running, container statuses in spec order', () => {
    const s = computePodStatus(pod, { address: 'x', now: t0, containers: [running('b', 2), running('a', 1)] });
    expect(s.phase).toBe('Running');
    expect(cond(s, 'Ready')?.status).toBe('True');
    expect(cond(s, 'ContainersReady')?.status).toBe('True');
    expect(s.containerStatuses?.map((x) => [x.name, x.containerID, x.started, x.ready])).toEqual([
      ['a', 'ocm-lab://1', true, true],
      ['b', 'ocm-lab://2', true, true],
    ]);
  });

  it('is Running but not Ready in CrashLoopBackOff, with restartCount and lastState', () => {
    const crashed = c('a', {
      restartCount: 1,
      state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 10s' } },
      lastState: { terminated: { exitCode: 137, signal: 9, reason: 'Error', finishedAt: '2026-01-01T00:00:01Z' } },
    });
    const s = computePodStatus(pod, { address: 'x', now: t0, containers: [crashed, running('b', 2)] });
    expect(s.phase).toBe('Running');
    expect(cond(s, 'Ready')).toMatchObject({ status: 'False', message: 'containers with unready status: [a]' });
    expect(s.containerStatuses?.[0]).toMatchObject({ restartCount: 1, ready: false, started: false, lastState: { terminated: { exitCode: 137 } } });
  });

  it('is Succeeded when all containers exited 0 for good, Failed when one failed', () => {
    const done = (name: string, exitCode: number) =>
      c(name, { state: { terminated: { exitCode, reason: exitCode ? 'Error' : 'Completed', finishedAt: 'x' } } });
    expect(computePodStatus(pod, { address: 'x', now: t0, containers: [done('a', 0), done('b', 0)] }).phase).toBe('Succeeded');
    const failed = computePodStatus(pod, { address: 'x', now: t0, containers: [done('a', 0), done('b', 2)] });
    expect(failed.phase).toBe('Failed');
    expect(cond(failed, 'Ready')?.reason).toBe('PodCompleted');
  });

  it('keeps transition times and startTime of conditions that did not change', () => {
    const first = computePodStatus(pod, { address: 'x', now: t0, containers: [running('a', 1), running('b', 2)] });
    const again = computePodStatus(pod, { address: 'x', now: t1, previous: first, containers: [running('a', 1), running('b', 2)] });
    expect(canonicalJson(again)).toBe(canonicalJson(first));
    const notReady = computePodStatus(pod, { address: 'x', now: t1, previous: first, containers: [running('a', 1), c('b', { restartCount: 1 })] });
    expect(cond(notReady, 'Ready')?.lastTransitionTime).toBe('2026-01-01T00:05:00Z');
    expect(cond(notReady, 'PodScheduled')?.lastTransitionTime).toBe('2026-01-01T00:00:00Z');
    expect(notReady.startTime).toBe(first.startTime);
  });

  it('reports init containers and stays uninitialized until they succeed', () => {
    const withInit: Pod = { ...pod, spec: { ...pod.spec, initContainers: [{ name: 'setup', image: OCM_LAB_IMAGE }] } };
    const s = computePodStatus(withInit, { address: 'x', now: t0, containers: [c('a', {}), c('b', {})], initContainers: [running('setup', 3)] });
    expect(cond(s, 'Initialized')).toMatchObject({ status: 'False', message: 'containers with incomplete status: [setup]' });
    expect(s.initContainerStatuses?.map((x) => x.name)).toEqual(['setup']);
  });

  it('canonical JSON does not depend on key order', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { z: 1, y: 2 }], c: 3 } })).toBe(canonicalJson({ a: { c: 3, d: [2, { y: 2, z: 1 }] }, b: 1 }));
  });
});

describe('restart back-off', () => {
  it('follows the kubelet schedule: the first restart at once, then 10 s doubling, capped at 5 min', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 50].map((n) => restartDelayMs(n) / 1000)).toEqual([0, 10, 20, 40, 80, 160, 300, 300, 300]);
    expect(restartDelayMs(0)).toBe(0);
  });

  it('backs off only a container that crashes again before the reset period; a long run starts over with a restart at once', () => {
    // First crash of a container three minutes old: at once. A second one a minute later: 10 s.
    const first = nextCrashCount(0, 180_000);
    expect(restartDelayMs(first)).toBe(0);
    const second = nextCrashCount(first, 60_000);
    expect(restartDelayMs(second)).toBe(DEFAULT_BACKOFF.initialMs);
    expect(nextCrashCount(4, 1_000)).toBe(5);
    expect(nextCrashCount(4, DEFAULT_BACKOFF.resetAfterMs)).toBe(1);
    expect(restartDelayMs(nextCrashCount(6, DEFAULT_BACKOFF.resetAfterMs))).toBe(0);
    expect(restartDelayMs(3, { initialMs: 100, maxMs: 150, resetAfterMs: 1 })).toBe(150);
  });

  it('restarts per restartPolicy', () => {
    expect([shouldRestart('Always', 0), shouldRestart('Always', 1), shouldRestart(undefined, 0)]).toEqual([true, true, true]);
    expect([shouldRestart('OnFailure', 0), shouldRestart('OnFailure', 137)]).toEqual([false, true]);
    expect([shouldRestart('Never', 0), shouldRestart('Never', 1)]).toEqual([false, false]);
  });
});

describe('binding decisions', () => {
  const images = new ImageCatalog({
    ocmVersion: 'v1.2.1',
    binaries: { work: '/cache/bin/ocm-v1.2.1/work' },
    cli: { nodeBinary: '/usr/bin/node', cliMain: '/opt/ocm-lab/dist/cli/main.js', packageRoot: '/opt/ocm-lab' },
  });
  const pending = (image: string, over: Partial<Pod['spec']> = {}): Pod => ({
    metadata: { name: 'p', namespace: 'ns', uid: 'u' },
    spec: { containers: [{ name: 'main', image }], ...over },
  });

  it('binds pending pods of our image (with or without the docker.io/library prefix) for the default scheduler', () => {
    expect(bindDecision(pending(OCM_LAB_IMAGE), 'n', images)).toEqual({ bind: true });
    expect(bindDecision(pending(`docker.io/library/${OCM_LAB_IMAGE}`, { schedulerName: 'ocm-lab-nodelet' }), 'n', images)).toEqual({ bind: true });
    expect(bindDecision(pending('quay.io/open-cluster-management/work:v1.2.1'), 'n', images)).toEqual({ bind: true });
  });

  it('explains why a pod of another image stays Pending', () => {
    const d = bindDecision(pending('nginx:1.27'), 'cluster1-nodelet', images);
    expect(d.bind).toBe(false);
    expect(d.bind === false && !d.ignore && d.reason).toContain(
      `node cluster1-nodelet is an ocm-lab nodelet, which runs only the images ${OCM_LAB_IMAGE}, quay.io/open-cluster-management/work:v1.2.1; container main (nginx:1.27)`,
    );
    // An upstream image at another tag, or one whose binary the nodelet was not given, stays Pending too.
    expect(bindDecision(pending('quay.io/open-cluster-management/work:v0.9.0'), 'n', images).bind).toBe(false);
    expect(bindDecision(pending('quay.io/open-cluster-management/placement:v1.2.1'), 'n', images).bind).toBe(false);
  });

  it('leaves bound pods, terminating pods and other schedulers alone', () => {
    expect(bindDecision(pending(OCM_LAB_IMAGE, { nodeName: 'x' }), 'n', images)).toEqual({ bind: false, ignore: true });
    expect(bindDecision(pending(OCM_LAB_IMAGE, { schedulerName: 'volcano' }), 'n', images)).toEqual({ bind: false, ignore: true });
    expect(bindDecision({ ...pending(OCM_LAB_IMAGE), metadata: { name: 'p', deletionTimestamp: 'x' } }, 'n', images)).toEqual({ bind: false, ignore: true });
  });

  it('accepts exactly the image names of ocm-lab', () => {
    expect([OCM_LAB_IMAGE, `docker.io/library/${OCM_LAB_IMAGE}`, `library/${OCM_LAB_IMAGE}`].map(isOcmLabImage)).toEqual([true, true, true]);
    // Every spelling Docker reads as the same image (the parser's canonical name), as the kubelet matches them.
    expect([`docker.io/${OCM_LAB_IMAGE}`, `index.docker.io/library/${OCM_LAB_IMAGE}`, ` ${OCM_LAB_IMAGE} `].map(isOcmLabImage)).toEqual([true, true, true]);
    expect(['ocm-lab:dev', 'ocm-lab:latest', 'ocm-lab', `ghcr.io/x/${OCM_LAB_IMAGE}`, undefined].map(isOcmLabImage)).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
  });
});

describe('time formats and token refresh', () => {
  it('writes Lease MicroTime with six fractional digits', () => {
    expect(microTime(t0)).toBe('2026-01-01T00:00:00.123000Z');
  });

  it('renews a token after 80 % of its requested life', () => {
    expect(tokenRefreshAt(0, 3607)).toBe(2_885_600);
    expect(tokenRefreshAt(1000, 600)).toBe(481_000);
  });
});
