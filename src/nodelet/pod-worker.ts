import fs from 'node:fs/promises';
import path from 'node:path';
import { restartDelayMs, nextCrashCount, shouldRestart, type BackoffPolicy } from './backoff.js';
import { cliArgs } from './command.js';
import { ContainerProcess, killLeftovers, type ContainerExit } from './container-process.js';
import { resolveEnv } from './env.js';
import { ContainerStartError } from './errors.js';
import type { EventRecorder } from './events.js';
import { isStatus, type KubeClient } from './kube-client.js';
import { materialiseVolumes, podDirName, writePodKubeconfig } from './pod-files.js';
import { canonicalJson, computePodStatus, rfc3339, type ContainerRuntimeState } from './status.js';
import { PodTokens } from './tokens.js';
import type { Container, ContainerStateTerminated, NodeFacts, ObjectSource, Pod } from './types.js';
import { podRoot } from './volumes.js';

/** What every pod worker of one nodelet shares. */
export interface NodeletContext {
  client: KubeClient;
  objects: ObjectSource;
  events: EventRecorder;
  node: NodeFacts;
  clusterName: string;
  apiServer: { url: string; caPem: string };
  /** Pod directories live in `<podsDir>/<namespace>_<pod>_<uid>`. */
  podsDir: string;
  /** The program and script a container runs: `node <dist>/cli/main.js`. */
  nodeBinary: string;
  cliMain: string;
  backoff: BackoffPolicy;
  /** How often volumes are written again (renewed tokens, changed Secrets and ConfigMaps). */
  resyncMs: number;
  log(line: string): void;
}

/** Token lifetime the kubelet asks for; the API server extends such pod-bound tokens for old clients. */
const KUBECONFIG_TOKEN_SECONDS = 3607;
const CONFIG_RETRY_MS = { initial: 2_000, max: 60_000 };
/** Quick, silent retries (200 ms doubling) of a 403 right after binding. */
const GRAPH_LAG_RETRIES = 4;

interface Slot {
  spec: Container;
  init: boolean;
  proc?: ContainerProcess;
  state: ContainerRuntimeState;
  /** Crashes counting towards the restart back-off. */
  crashes: number;
  runs: number;
  timer?: NodeJS.Timeout;
  /** Exited and will not run again. */
  final: boolean;
  configFailures: number;
}

function fresh(spec: Container, init: boolean, previous: Pod['status']): Slot {
  const list = init ? previous?.initContainerStatuses : previous?.containerStatuses;
  const before = list?.find((s) => s.name === spec.name);
  // A run the previous nodelet started counts: after a nodelet restart the container restarts, like after a crash.
  const ranBefore = !!before && (!!before.state.running || !!before.state.terminated || !!before.lastState.terminated);
  return {
    spec,
    init,
    crashes: 0,
    runs: ranBefore ? 1 : 0,
    final: false,
    configFailures: 0,
    state: {
      name: spec.name,
      image: spec.image ?? '',
      restartCount: before?.restartCount ?? 0,
      state: { waiting: { reason: 'ContainerCreating' } },
      lastState: before?.state.terminated ? { terminated: before.state.terminated } : (before?.lastState ?? {}),
      ready: false,
    },
  };
}

function terminatedOf(exit: ContainerExit, startedAt: Date, pid: number): ContainerStateTerminated {
  return {
    exitCode: exit.exitCode,
    ...(exit.signal !== undefined ? { signal: exit.signal } : {}),
    reason: exit.exitCode === 0 ? 'Completed' : 'Error',
    startedAt: rfc3339(startedAt),
    finishedAt: rfc3339(exit.finishedAt),
    containerID: `ocm-lab://${pid}`,
  };
}

/**
 * Runs one pod bound to this node: its volumes and kubeconfig, one process
 * per container (init containers first, one after the other), restarts with
 * back-off, status reports, and the graceful end when the pod is deleted.
 * All changes go through `kick()`, which runs one reconcile at a time.
 */
export class PodWorker {
  readonly dir: string;
  private pod: Pod;
  private readonly slots: Slot[];
  private readonly tokens: PodTokens;
  private prepared = false;
  private prepareError: ContainerStartError | undefined;
  private prepareFailures = 0;
  private graphLagRetries = 0;
  private prepareTimer: NodeJS.Timeout | undefined;
  private resyncTimer: NodeJS.Timeout | undefined;
  private statusTimer: NodeJS.Timeout | undefined;
  private lastSent: string | undefined;
  private terminating = false;
  private finished = false;
  private firstSync = true;
  private chain: Promise<void> = Promise.resolve();
  private pending = false;
  /** The pod had already finished (Succeeded/Failed) before this nodelet saw it: nothing runs again. */
  private readonly alreadyDone: boolean;

  constructor(
    private readonly ctx: NodeletContext,
    pod: Pod,
  ) {
    this.pod = pod;
    this.dir = path.join(ctx.podsDir, podDirName(pod));
    this.slots = [
      ...(pod.spec.initContainers ?? []).map((c) => fresh(c, true, pod.status)),
      ...pod.spec.containers.map((c) => fresh(c, false, pod.status)),
    ];
    this.tokens = new PodTokens(ctx.client, pod);
    this.alreadyDone = pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
  }

  get key(): string {
    return `${this.pod.metadata.namespace}/${this.pod.metadata.name}`;
  }

  /** Pids of the running containers (for tests and `status`). */
  pids(): Record<string, number> {
    return Object.fromEntries(this.slots.filter((s) => s.proc).map((s) => [s.spec.name, (s.proc as ContainerProcess).pid]));
  }

  update(pod: Pod): void {
    this.pod = pod;
    this.kick();
  }

  /** Runs reconcile soon, once, after any reconcile already running. */
  kick(): void {
    if (this.pending || this.finished) return;
    this.pending = true;
    this.chain = this.chain.then(async () => {
      this.pending = false;
      try {
        await this.reconcile();
      } catch (err) {
        this.ctx.log(`${this.key}: ${(err as Error).stack ?? String(err)}`);
      }
    });
  }

  private async reconcile(): Promise<void> {
    if (this.finished || this.terminating) return;
    if (this.firstSync) {
      this.firstSync = false;
      const killed = await killLeftovers(this.dir, this.pod.metadata.uid ?? '');
      if (killed.length) this.ctx.log(`${this.key}: stopped leftover container processes ${killed.join(', ')} of an earlier nodelet`);
    }
    if (this.pod.metadata.deletionTimestamp) {
      await this.terminate();
      return;
    }
    if (this.alreadyDone) return;
    if (!this.prepared) {
      if (this.prepareTimer) return;
      try {
        await this.prepare();
        this.prepared = true;
        this.prepareError = undefined;
        this.scheduleResync();
      } catch (err) {
        // Right after binding, the Node authorizer's graph may not link this node to the pod yet: 403 for a moment.
        if (isStatus(err, 403) && this.graphLagRetries < GRAPH_LAG_RETRIES) {
          this.prepareTimer = setTimeout(() => {
            this.prepareTimer = undefined;
            this.kick();
          }, 200 * 2 ** this.graphLagRetries++);
          return;
        }
        const e = err instanceof ContainerStartError ? err : new ContainerStartError('CreateContainerConfigError', (err as Error).message);
        this.prepareError = e;
        for (const s of this.slots) if (!s.proc) s.state = { ...s.state, state: { waiting: { reason: e.reason, message: e.message } }, ready: false };
        this.ctx.events.record(this.pod, 'Warning', 'FailedMount', e.message);
        if (e.retryable) {
          const delay = Math.min(CONFIG_RETRY_MS.initial * 2 ** this.prepareFailures++, CONFIG_RETRY_MS.max);
          this.prepareTimer = setTimeout(() => {
            this.prepareTimer = undefined;
            this.kick();
          }, delay);
        }
        this.scheduleStatus();
        return;
      }
    }
    for (const slot of this.runnable()) {
      if (!slot.proc && !slot.timer && !slot.final) await this.start(slot);
    }
    this.scheduleStatus();
  }

  /** Init containers one at a time until each has succeeded; then every regular container. */
  private runnable(): Slot[] {
    const pendingInit = this.slots.find((s) => s.init && !(s.final && s.state.state.terminated?.exitCode === 0));
    if (pendingInit) return pendingInit.final ? [] : [pendingInit];
    return this.slots.filter((s) => !s.init);
  }

  private async prepare(): Promise<void> {
    const sources = { node: this.ctx.node, objects: this.ctx.objects, token: (aud: string | undefined, exp: number) => this.tokens.token(aud, exp) };
    await materialiseVolumes(this.dir, this.pod, sources);
    if (this.pod.spec.automountServiceAccountToken !== false) {
      const token = await this.tokens.token(undefined, KUBECONFIG_TOKEN_SECONDS);
      await writePodKubeconfig(this.dir, this.ctx.clusterName, this.ctx.apiServer.url, this.ctx.apiServer.caPem, token, this.pod.metadata.namespace ?? 'default');
    }
  }

  /** Writes volumes and kubeconfig again before tokens are due and every resync period. */
  private scheduleResync(): void {
    clearTimeout(this.resyncTimer);
    const due = Math.min(this.tokens.nextRefresh() - Date.now(), this.ctx.resyncMs);
    this.resyncTimer = setTimeout(() => {
      this.chain = this.chain.then(async () => {
        if (this.finished || this.terminating) return;
        try {
          await this.prepare();
        } catch (err) {
          this.ctx.log(`${this.key}: refreshing volumes: ${(err as Error).message}`);
        }
        this.scheduleResync();
      });
    }, Math.max(due, 1_000));
  }

  private baseEnv(): Record<string, string> {
    const api = new URL(this.ctx.apiServer.url);
    const port = api.port || '443';
    const root = podRoot(this.dir);
    return {
      PATH: process.env.PATH ?? '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      HOME: path.join(root, 'root'),
      HOSTNAME: this.pod.metadata.name,
      KUBERNETES_SERVICE_HOST: api.hostname,
      KUBERNETES_SERVICE_PORT: port,
      KUBERNETES_SERVICE_PORT_HTTPS: port,
      KUBERNETES_PORT: `tcp://${api.hostname}:${port}`,
      OCM_LAB_POD_ROOT: root,
      ...(this.pod.spec.automountServiceAccountToken !== false ? { KUBECONFIG: path.join(this.dir, 'kubeconfig') } : {}),
    };
  }

  private async start(slot: Slot): Promise<void> {
    const name = slot.spec.name;
    const fieldPath = `spec.${slot.init ? 'initContainers' : 'containers'}{${name}}`;
    let proc: ContainerProcess;
    try {
      const env = await resolveEnv(this.pod, slot.spec, this.ctx.node, this.ctx.objects, this.baseEnv());
      const args = cliArgs(slot.spec, env);
      const cwd = slot.spec.workingDir ? path.join(podRoot(this.dir), slot.spec.workingDir) : podRoot(this.dir);
      await fs.mkdir(cwd, { recursive: true });
      await fs.mkdir(env.HOME ?? podRoot(this.dir), { recursive: true });
      proc = await ContainerProcess.start({
        podDir: this.dir,
        podUid: this.pod.metadata.uid ?? '',
        container: name,
        file: this.ctx.nodeBinary,
        args: [this.ctx.cliMain, ...args],
        env,
        cwd,
      });
    } catch (err) {
      const e = err instanceof ContainerStartError ? err : new ContainerStartError('RunContainerError', (err as Error).message);
      slot.state = { ...slot.state, state: { waiting: { reason: e.reason, message: e.message } }, ready: false };
      this.ctx.events.record(this.pod, 'Warning', 'Failed', `Error: ${e.message}`, fieldPath);
      if (e.retryable) {
        const delay = Math.min(CONFIG_RETRY_MS.initial * 2 ** slot.configFailures++, CONFIG_RETRY_MS.max);
        slot.timer = setTimeout(() => {
          slot.timer = undefined;
          this.kick();
        }, delay);
      }
      return;
    }
    slot.configFailures = 0;
    if (slot.runs > 0) slot.state.restartCount++;
    slot.runs++;
    slot.proc = proc;
    slot.state = { ...slot.state, state: { running: { startedAt: rfc3339(proc.startedAt) } }, ready: !slot.init, pid: proc.pid };
    this.ctx.events.record(this.pod, 'Normal', 'Started', `Started container ${name} (pid ${proc.pid})`, fieldPath, false);
    void proc.exited.then((exit) => {
      this.chain = this.chain.then(() => this.onExit(slot, proc, exit));
    });
  }

  private onExit(slot: Slot, proc: ContainerProcess, exit: ContainerExit): void {
    if (slot.proc !== proc) return;
    slot.proc = undefined;
    const terminated = terminatedOf(exit, proc.startedAt, proc.pid);
    const { pid: _pid, ...rest } = slot.state;
    if (this.terminating || this.finished) {
      slot.state = { ...rest, state: { terminated }, ready: false };
      return;
    }
    const policy = this.pod.spec.restartPolicy ?? 'Always';
    const restart = slot.init ? exit.exitCode !== 0 && policy !== 'Never' : shouldRestart(policy, exit.exitCode);
    if (!restart) {
      slot.final = true;
      slot.state = { ...rest, state: { terminated }, ready: false };
      this.ctx.log(`${this.key}/${slot.spec.name}: exited with ${exit.exitCode}; not restarted (restartPolicy ${policy})`);
    } else {
      slot.crashes = nextCrashCount(slot.crashes, exit.finishedAt.getTime() - proc.startedAt.getTime(), this.ctx.backoff);
      const delay = restartDelayMs(slot.crashes, this.ctx.backoff);
      const pod = this.pod.metadata;
      slot.state = {
        ...rest,
        state: { waiting: { reason: 'CrashLoopBackOff', message: `back-off ${Math.round(delay / 1000)}s restarting failed container=${slot.spec.name} pod=${pod.name}_${pod.namespace}(${pod.uid})` } },
        lastState: { terminated },
        ready: false,
      };
      this.ctx.log(`${this.key}/${slot.spec.name}: exited with ${exit.exitCode}; restarting in ${delay} ms`);
      this.ctx.events.record(this.pod, 'Warning', 'BackOff', `Back-off restarting failed container ${slot.spec.name} in pod ${pod.name}_${pod.namespace}(${pod.uid})`);
      slot.timer = setTimeout(() => {
        slot.timer = undefined;
        this.kick();
      }, delay);
    }
    this.scheduleStatus();
    this.kick();
  }

  private clearTimers(): void {
    clearTimeout(this.prepareTimer);
    clearTimeout(this.resyncTimer);
    for (const s of this.slots) {
      clearTimeout(s.timer);
      s.timer = undefined;
    }
  }

  private graceMs(): number {
    const seconds = this.pod.metadata.deletionGracePeriodSeconds ?? this.pod.spec.terminationGracePeriodSeconds ?? 30;
    return seconds * 1000;
  }

  private async stopAll(graceMs: number): Promise<void> {
    await Promise.all(
      this.slots.map(async (s) => {
        const proc = s.proc;
        if (!proc) return;
        const exit = await proc.terminate(graceMs);
        if (s.proc === proc) {
          s.proc = undefined;
          const { pid: _pid, ...rest } = s.state;
          s.state = { ...rest, state: { terminated: terminatedOf(exit, proc.startedAt, proc.pid) }, ready: false };
        }
      }),
    );
  }

  /** Deletion requested: SIGTERM, the grace period, SIGKILL, final status, then the final delete. */
  private async terminate(): Promise<void> {
    this.terminating = true;
    this.clearTimers();
    for (const s of this.slots) {
      if (s.proc) this.ctx.events.record(this.pod, 'Normal', 'Killing', `Stopping container ${s.spec.name}`, `spec.containers{${s.spec.name}}`);
      else if (!s.state.state.terminated) s.state = { ...s.state, ready: false };
    }
    await this.stopAll(this.graceMs());
    await this.sendStatus().catch(() => undefined);
    const { name, namespace, uid } = this.pod.metadata;
    try {
      await this.ctx.client.delete(`/api/v1/namespaces/${namespace}/pods/${name}`, {
        apiVersion: 'v1',
        kind: 'DeleteOptions',
        gracePeriodSeconds: 0,
        preconditions: { uid },
      });
      this.ctx.log(`${this.key}: containers stopped, pod deleted`);
    } catch (err) {
      if (!isStatus(err, 404) && !isStatus(err, 409)) {
        this.ctx.log(`${this.key}: final delete failed (${(err as Error).message}); retrying`);
        this.terminating = false;
        setTimeout(() => this.kick(), 2_000);
      }
    }
  }

  /** The pod object is gone (deleted for good, or no longer bound here): stop everything now and remove its directory. */
  async removed(): Promise<void> {
    this.terminating = true;
    this.clearTimers();
    clearTimeout(this.statusTimer);
    await this.chain;
    this.finished = true;
    await this.stopAll(Math.min(this.graceMs(), 5_000));
    await fs.rm(this.dir, { recursive: true, force: true });
    this.ctx.events.forget(this.pod.metadata.uid);
  }

  /** The nodelet is stopping: stop the processes, keep the directory (the pod still exists). */
  async shutdown(graceMs: number): Promise<void> {
    this.terminating = true;
    this.clearTimers();
    clearTimeout(this.statusTimer);
    this.finished = true;
    await this.stopAll(graceMs);
  }

  private scheduleStatus(): void {
    if (this.statusTimer || this.finished) return;
    this.statusTimer = setTimeout(() => {
      this.statusTimer = undefined;
      this.chain = this.chain.then(() =>
        this.sendStatus().catch((err: Error) => {
          if (isStatus(err, 404)) return;
          this.ctx.log(`${this.key}: status update failed: ${err.message}`);
          this.lastSent = undefined;
          setTimeout(() => this.scheduleStatus(), 2_000);
        }),
      );
    }, 100);
  }

  private async sendStatus(): Promise<void> {
    if (this.alreadyDone) return;
    const status = computePodStatus(this.pod, {
      address: this.ctx.node.address,
      now: new Date(),
      previous: this.pod.status,
      containers: this.slots.filter((s) => !s.init).map((s) => s.state),
      initContainers: this.slots.filter((s) => s.init).map((s) => s.state),
      ...(this.prepareError ? { podMessage: this.prepareError.message } : {}),
    });
    const text = canonicalJson(status);
    if (text === this.lastSent) return;
    const updated = await this.ctx.client.mergePatch<Pod>(
      `/api/v1/namespaces/${this.pod.metadata.namespace}/pods/${this.pod.metadata.name}/status`,
      { metadata: { uid: this.pod.metadata.uid }, status },
    );
    this.lastSent = text;
    if (updated?.status && updated.metadata.uid === this.pod.metadata.uid) this.pod = { ...this.pod, status: updated.status };
  }
}
