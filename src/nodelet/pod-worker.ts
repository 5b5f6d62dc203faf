import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { restartDelayMs, nextCrashCount, shouldRestart, type BackoffPolicy } from './backoff.js';
import { containerArgv } from './command.js';
import { appendContainerLog, logFile, openContainerLog, previousLogFile } from './container-log.js';
import { resolveEnv } from './env.js';
import { ContainerStartError } from './errors.js';
import type { EventRecorder } from './events.js';
import type { ImageCatalog } from './images.js';
import { isStatus, type KubeClient } from '../kube/client.js';
import { ociConfig, realHostView, writeBundle, writePodEtcFiles, type HostAlias } from './oci/bundle.js';
import { cleanupContainers, RuncContainer, type ContainerExit, type ExecOptions, type ExecProcess, type Runc } from './oci/runc.js';
import { noNewPrivileges, processCapabilities, processUser, volumeOwner } from './oci/security.js';
import { materialiseVolumes, podDirName } from './pod-files.js';
import { ContainerProbes, execThroughProcess } from './probes.js';
import { canonicalJson, computePodStatus, rfc3339, type ContainerRuntimeState } from './status.js';
import { PodTokens } from './tokens.js';
import type { Container, ContainerStateTerminated, NodeFacts, ObjectSource, Pod } from './types.js';
import { volumeBinds } from './volumes.js';

/**
 * A pod's network, set up before its first container starts and torn down
 * when the pod is removed. `netnsPath` is the namespace its containers join
 * (the node's own for hostNetwork pods); `podIP` goes into /etc/hosts.
 */
interface PodNetworkHooks {
  attach(pod: Pod): Promise<{ netnsPath?: string; podIP?: string }>;
  detach(pod: Pod): Promise<void>;
}

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
  /** The images this node runs and what each one is. */
  images: ImageCatalog;
  /** runc and its state directory (`--root`), one per nodelet. */
  runc: Runc;
  /** Host directories shared read-only with every container (those of SHARED_HOST_DIRS the host has). */
  hostDirs: string[];
  /** Pod network namespaces; without it containers share the nodelet's network namespace. */
  network?: PodNetworkHooks;
  /**
   * The `kubernetes` Service as pods with a network of their own reach it (its
   * ClusterIP, through the nodelet's Service rules); hostNetwork pods and pods
   * without one get the API server's own address.
   */
  kubernetesService?: { host: string; port: string };
  /** /etc/hosts entries standing in for cluster DNS: the Services as a pod of this namespace names them. */
  serviceHosts?: (namespace: string) => HostAlias[];
  /** Why a hostNetwork pod cannot have `port` on the node (already taken), or null. */
  hostPortInUse?: (port: number, protocol: 'TCP' | 'UDP' | 'SCTP') => Promise<string | null>;
  /** Probes' User-Agent (`kube-probe/<major>.<minor>`). */
  probeUserAgent?: string;
  backoff: BackoffPolicy;
  /** How often volumes are written again (renewed tokens, changed Secrets and ConfigMaps). */
  resyncMs: number;
  log(line: string): void;
}

/** PATH of a container when neither the image nor the spec sets one (the container runtimes' default). */
const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const CONFIG_RETRY_MS = { initial: 2_000, max: 60_000 };
/** Quick, silent retries (200 ms doubling) of a 403 right after binding. */
const GRAPH_LAG_RETRIES = 4;

interface Slot {
  spec: Container;
  init: boolean;
  proc?: RuncContainer;
  /** The probes of the current run. */
  probes?: ContainerProbes;
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
  // A run the previous nodelet started counts: a container it cannot adopt restarts, as after a crash.
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

/** What a run of a container was started from (`<bundle>/spec.sha256`): a restarted nodelet adopts only a container whose spec is unchanged. */
function specDigest(spec: Container): string {
  return crypto.createHash('sha256').update(canonicalJson(spec)).digest('hex');
}

/** runc's id of a container: unique on the machine (pod uid), stable across restarts of the container. */
function runcId(pod: Pod, container: string): string {
  return `${pod.metadata.uid ?? ''}-${container}`;
}

/** What the kubelet API needs of one container. */
export interface PodContainer {
  name: string;
  runcId: string;
  logFile: string;
  previousLogFile: string;
  /** Set while the container runs. */
  running?: { pid: number; startedAt: Date; exec(argv: string[], opts?: ExecOptions): ExecProcess };
}

/**
 * Runs one pod bound to this node: its volumes and network, one runc
 * container per container (init containers first, one after the other), restarts with
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
  private markAdopted: () => void = () => undefined;
  /** Settles once this worker has adopted (or removed) the containers an earlier nodelet left running. */
  readonly adoptionDone: Promise<void> = new Promise((resolve) => (this.markAdopted = resolve));
  private chain: Promise<void> = Promise.resolve();
  private pending = false;
  /** The pod had already finished (Succeeded/Failed) before this nodelet saw it: nothing runs again. */
  private readonly alreadyDone: boolean;
  private network: { netnsPath?: string; podIP?: string } | undefined;
  private etcFiles: { hosts: string; hostname: string } | undefined;

  constructor(
    private readonly ctx: NodeletContext,
    pod: Pod,
  ) {
    this.pod = pod;
    this.dir = path.join(ctx.podsDir, podDirName(pod));
    this.slots = [...(pod.spec.initContainers ?? []).map((c) => fresh(c, true, pod.status)), ...pod.spec.containers.map((c) => fresh(c, false, pod.status))];
    this.tokens = new PodTokens(ctx.client, pod);
    this.alreadyDone = pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
  }

  get key(): string {
    return `${this.pod.metadata.namespace}/${this.pod.metadata.name}`;
  }

  get uid(): string {
    return this.pod.metadata.uid ?? '';
  }

  /** The pod object as last seen (spec from the API server, status as last reported). */
  get current(): Pod {
    return this.pod;
  }

  /** Pids of the running containers' init processes (for tests and `status`). */
  pids(): Record<string, number> {
    return Object.fromEntries(this.slots.filter((s) => s.proc).map((s) => [s.spec.name, (s.proc as RuncContainer).pid]));
  }

  /** The pod's IP once its network is attached (undefined without pod networks). */
  get podIP(): string | undefined {
    return this.network?.podIP;
  }

  /**
   * A container of this pod for the kubelet API: its log files, and, while it
   * runs, its runc id and exec. No name: the only container, if there is one.
   */
  container(name?: string): PodContainer | undefined {
    const regular = this.slots.filter((s) => !s.init);
    const slot = name === undefined ? (regular.length === 1 ? regular[0] : undefined) : this.slots.find((s) => s.spec.name === name);
    if (!slot) return undefined;
    const proc = slot.proc;
    return {
      name: slot.spec.name,
      runcId: runcId(this.pod, slot.spec.name),
      logFile: logFile(this.dir, slot.spec.name),
      previousLogFile: previousLogFile(this.dir, slot.spec.name),
      running: proc ? { pid: proc.pid, startedAt: proc.startedAt, exec: (argv, opts) => proc.exec(argv, opts) } : undefined,
    };
  }

  containerNames(): string[] {
    return this.slots.map((s) => s.spec.name);
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

  /** The first reconcile after a nodelet start: containers of an earlier nodelet are adopted when unchanged, removed otherwise. */
  private async adoptOrRemoveEarlierContainers(): Promise<void> {
    const adopted = this.alreadyDone || this.pod.metadata.deletionTimestamp ? new Set<string>() : await this.adoptContainers();
    const prefix = `${this.uid}-`;
    const killed = await cleanupContainers(this.ctx.runc, (id) => id.startsWith(prefix) && !adopted.has(id)).catch((err: Error) => {
      this.ctx.log(`${this.key}: looking for containers of an earlier nodelet: ${err.message}`);
      return [] as string[];
    });
    if (killed.length) this.ctx.log(`${this.key}: removed containers ${killed.join(', ')} an earlier nodelet left running`);
  }

  private async reconcile(): Promise<void> {
    if (this.finished || this.terminating) return this.markAdopted();
    if (this.firstSync) {
      this.firstSync = false;
      await this.adoptOrRemoveEarlierContainers().finally(() => this.markAdopted());
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
          this.prepareTimer = setTimeout(
            () => {
              this.prepareTimer = undefined;
              this.kick();
            },
            200 * 2 ** this.graphLagRetries++,
          );
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
    for (const slot of this.slots) {
      // Adopted runs get their probes once the pod's address is known again.
      if (slot.proc && !slot.probes && !slot.init) this.startProbes(slot, slot.proc, this.fieldPath(slot));
    }
    for (const slot of this.runnable()) {
      if (!slot.proc && !slot.timer && !slot.final) await this.start(slot);
    }
    this.scheduleStatus();
  }

  /**
   * After a nodelet restart: takes over the containers an earlier nodelet
   * started that still run, from an unchanged spec, under their shims (as a
   * kubelet leaves containers running when it restarts). Their restart count
   * stays; init containers that had succeeded stay done. Returns the runc ids adopted.
   */
  private async adoptContainers(): Promise<Set<string>> {
    const adopted = new Set<string>();
    for (const slot of this.slots) {
      const id = runcId(this.pod, slot.spec.name);
      const bundle = path.join(this.dir, 'containers', slot.spec.name);
      const digest = await fs.readFile(path.join(bundle, 'spec.sha256'), 'utf8').catch(() => '');
      if (digest.trim() !== specDigest(slot.spec)) continue;
      const sink = await appendContainerLog(this.dir, slot.spec.name).catch(() => undefined);
      if (!sink) continue;
      const proc = await RuncContainer.adopt(this.ctx.runc, id, bundle, sink).catch((err: Error) => {
        this.ctx.log(`${this.key}/${slot.spec.name}: could not adopt the running container: ${err.message}`);
        return undefined;
      });
      if (!proc) {
        await sink.close?.().catch(() => undefined);
        continue;
      }
      adopted.add(id);
      slot.runs = Math.max(slot.runs, 1);
      slot.proc = proc;
      slot.state = { ...slot.state, state: { running: { startedAt: rfc3339(proc.startedAt) } }, ready: false, pid: proc.pid };
      void proc.exited.then((exit) => {
        this.chain = this.chain.then(() => this.onExit(slot, proc, exit));
      });
    }
    if (this.slots.some((s) => !s.init && adopted.has(runcId(this.pod, s.spec.name)))) {
      for (const slot of this.slots.filter((s) => s.init && !s.proc)) {
        const before = this.pod.status?.initContainerStatuses?.find((c) => c.name === slot.spec.name)?.state.terminated;
        if (before?.exitCode === 0) {
          slot.final = true;
          slot.state = { ...slot.state, state: { terminated: before } };
        }
      }
    }
    if (adopted.size) this.ctx.log(`${this.key}: adopted running containers ${[...adopted].join(', ')} of an earlier nodelet`);
    return adopted;
  }

  private fieldPath(slot: Slot): string {
    return `spec.${slot.init ? 'initContainers' : 'containers'}{${slot.spec.name}}`;
  }

  /** Init containers one at a time until each has succeeded; then every regular container. */
  private runnable(): Slot[] {
    const pendingInit = this.slots.find((s) => s.init && !(s.final && s.state.state.terminated?.exitCode === 0));
    if (pendingInit) return pendingInit.final ? [] : [pendingInit];
    return this.slots.filter((s) => !s.init);
  }

  private async prepare(): Promise<void> {
    if (!this.network) {
      const attached = this.ctx.network ? await this.ctx.network.attach(this.pod) : {};
      this.network = attached;
    }
    // Rewritten in place at every prepare (start and each resync): running containers see Services created after them.
    const aliases = [
      ...((this.pod.spec as Pod['spec'] & { hostAliases?: HostAlias[] }).hostAliases ?? []),
      ...(this.pod.spec?.hostNetwork ? [] : (this.ctx.serviceHosts?.(this.pod.metadata.namespace ?? 'default') ?? [])),
    ];
    this.etcFiles = await writePodEtcFiles(path.join(this.dir, 'etc'), this.hostname(), this.network.podIP ?? this.ctx.node.address, aliases);
    const sources = { node: this.ctx.node, objects: this.ctx.objects, token: (aud: string | undefined, exp: number) => this.tokens.token(aud, exp) };
    await materialiseVolumes(
      this.dir,
      this.withPodIP(),
      sources,
      volumeOwner(this.pod, (image) => this.ctx.images.resolve(image)),
    );
  }

  /** The pod's address: its own once its network exists, the node's for hostNetwork pods. */
  private ownIP(): string {
    return this.network?.podIP ?? this.ctx.node.address;
  }

  /** The pod as env and downward API volumes see it: `status.podIP` is known before the API server has it. */
  private withPodIP(): Pod {
    const ip = this.ownIP();
    return { ...this.pod, status: { ...this.pod.status, podIP: ip, podIPs: [{ ip }] } };
  }

  private hostname(): string {
    return this.pod.spec.hostNetwork ? this.ctx.node.nodeName : this.pod.metadata.name;
  }

  /** Writes volumes again before tokens are due and every resync period. */
  private scheduleResync(): void {
    clearTimeout(this.resyncTimer);
    const due = Math.min(this.tokens.nextRefresh() - Date.now(), this.ctx.resyncMs);
    this.resyncTimer = setTimeout(
      () => {
        this.chain = this.chain.then(async () => {
          if (this.finished || this.terminating) return;
          try {
            await this.prepare();
          } catch (err) {
            this.ctx.log(`${this.key}: refreshing volumes: ${(err as Error).message}`);
          }
          this.scheduleResync();
        });
      },
      Math.max(due, 1_000),
    );
  }

  /** What every container gets before its own env: PATH, HOME, HOSTNAME and the API server as the `kubernetes` Service. */
  private baseEnv(uid: number): Record<string, string> {
    const api = new URL(this.ctx.apiServer.url);
    const service = this.network?.podIP ? this.ctx.kubernetesService : undefined;
    const host = service?.host ?? api.hostname.replace(/^\[(.*)\]$/, '$1');
    const port = service?.port ?? (api.port || '443');
    const hostPort = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
    return {
      PATH: DEFAULT_PATH,
      HOME: uid === 0 ? '/root' : '/',
      HOSTNAME: this.hostname(),
      KUBERNETES_SERVICE_HOST: host,
      KUBERNETES_SERVICE_PORT: port,
      KUBERNETES_SERVICE_PORT_HTTPS: port,
      KUBERNETES_PORT: `tcp://${hostPort}`,
    };
  }

  private async start(slot: Slot): Promise<void> {
    const name = slot.spec.name;
    const fieldPath = this.fieldPath(slot);
    let proc: RuncContainer;
    try {
      const image = this.ctx.images.resolve(slot.spec.image);
      if (!image) throw new ContainerStartError('ErrImagePull', this.ctx.images.whyNot(slot.spec.image), false);
      const user = processUser(this.pod, slot.spec, image);
      if (this.pod.spec.hostNetwork) await this.checkHostPorts(slot.spec);
      const env = await resolveEnv(this.withPodIP(), slot.spec, this.ctx.node, this.ctx.objects, this.baseEnv(user.uid));
      const id = runcId(this.pod, name);
      const bundle = path.join(this.dir, 'containers', name);
      const config = ociConfig({
        hostname: this.hostname(),
        args: containerArgv(slot.spec, image, env),
        env,
        cwd: slot.spec.workingDir ? path.posix.normalize(slot.spec.workingDir) : image.workingDir,
        user,
        capabilities: processCapabilities(slot.spec),
        noNewPrivileges: noNewPrivileges(slot.spec),
        hostDirs: this.ctx.hostDirs,
        hostView: realHostView(),
        etcFiles: this.etcFiles as { hosts: string; hostname: string },
        imageFiles: image.files,
        volumes: volumeBinds(this.dir, this.pod, slot.spec),
        ...(this.network?.netnsPath ? { netnsPath: this.network.netnsPath } : {}),
        // Flat, not under a shared parent: runc removes exactly this directory, so nothing stays behind in any controller.
        cgroupsPath: `/ocm-lab-${id}`,
      });
      await writeBundle(bundle, config);
      await fs.writeFile(path.join(bundle, 'spec.sha256'), `${specDigest(slot.spec)}\n`);
      const sink = await openContainerLog(this.dir, name);
      try {
        proc = await RuncContainer.start({ runc: this.ctx.runc, id, bundle, sink });
      } catch (err) {
        await sink.close?.().catch(() => undefined);
        throw err;
      }
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
    slot.state = { ...slot.state, state: { running: { startedAt: rfc3339(proc.startedAt) } }, ready: false, pid: proc.pid };
    this.ctx.events.record(this.pod, 'Normal', 'Started', `Started container ${name}`, fieldPath, false);
    if (!slot.init) this.startProbes(slot, proc, fieldPath);
    void proc.exited.then((exit) => {
      this.chain = this.chain.then(() => this.onExit(slot, proc, exit));
    });
  }

  private onExit(slot: Slot, proc: RuncContainer, exit: ContainerExit): void {
    if (slot.proc !== proc) return;
    slot.proc = undefined;
    slot.probes?.stop();
    slot.probes = undefined;
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
      if (delay === 0) {
        // Not backing off (a first crash): the kick below starts it again at once, as the kubelet's next sync does.
        slot.state = { ...rest, state: { waiting: { reason: 'ContainerCreating' } }, lastState: { terminated }, ready: false };
        this.ctx.log(`${this.key}/${slot.spec.name}: exited with ${exit.exitCode}; restarting now`);
      } else {
        slot.state = {
          ...rest,
          state: {
            waiting: {
              reason: 'CrashLoopBackOff',
              message: `back-off ${Math.round(delay / 1000)}s restarting failed container=${slot.spec.name} pod=${pod.name}_${pod.namespace}(${pod.uid})`,
            },
          },
          lastState: { terminated },
          ready: false,
        };
        this.ctx.log(`${this.key}/${slot.spec.name}: exited with ${exit.exitCode}; restarting in ${delay} ms`);
        this.ctx.events.record(
          this.pod,
          'Warning',
          'BackOff',
          `Back-off restarting failed container ${slot.spec.name} in pod ${pod.name}_${pod.namespace}(${pod.uid})`,
        );
        slot.timer = setTimeout(() => {
          slot.timer = undefined;
          this.kick();
        }, delay);
      }
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
      s.probes?.stop();
      s.probes = undefined;
    }
  }

  /**
   * Readiness, liveness and startup probes of one run of a container, as the
   * kubelet runs them: readiness drives `ready`, a failed liveness or startup
   * probe kills the run (and the restart policy brings it back).
   */
  private startProbes(slot: Slot, proc: RuncContainer, fieldPath: string): void {
    const probes = new ContainerProbes({
      container: slot.spec,
      ...(this.pod.spec.restartPolicy ? { restartPolicy: this.pod.spec.restartPolicy } : {}),
      ...(this.pod.spec.terminationGracePeriodSeconds !== undefined ? { podTerminationGracePeriodSeconds: this.pod.spec.terminationGracePeriodSeconds } : {}),
      ...(this.ctx.probeUserAgent ? { userAgent: this.ctx.probeUserAgent } : {}),
      exec: execThroughProcess((argv) => proc.exec(argv)),
      onReadyChange: (ready) => {
        if (slot.proc !== proc) return;
        slot.state = { ...slot.state, ready };
        this.scheduleStatus();
      },
      onLivenessFailure: (message, kill) => {
        if (slot.proc !== proc) return;
        this.ctx.events.record(this.pod, 'Normal', 'Killing', message, fieldPath, false);
        void proc.terminate((kill.gracePeriodSeconds ?? this.pod.spec.terminationGracePeriodSeconds ?? 30) * 1000);
      },
      event: (type, reason, message) => this.ctx.events.record(this.pod, type, reason, message, fieldPath, false),
    });
    slot.probes = probes;
    probes.start(this.ownIP(), proc.startedAt.getTime());
  }

  /** A hostNetwork container's ports live on the node: one already taken there is reported (and retried) before the container starts. */
  private async checkHostPorts(spec: Container): Promise<void> {
    if (!this.ctx.hostPortInUse) return;
    for (const p of spec.ports ?? []) {
      const why = await this.ctx.hostPortInUse(p.hostPort ?? p.containerPort, (p.protocol ?? 'TCP') as 'TCP' | 'UDP' | 'SCTP');
      if (why) throw new ContainerStartError('RunContainerError', why);
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
    if (this.network && this.ctx.network) {
      await this.ctx.network.detach(this.pod).catch((err: Error) => this.ctx.log(`${this.key}: removing the pod network: ${err.message}`));
    }
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
      ...(this.network?.podIP ? { podIP: this.network.podIP } : {}),
      now: new Date(),
      previous: this.pod.status,
      containers: this.slots.filter((s) => !s.init).map((s) => s.state),
      initContainers: this.slots.filter((s) => s.init).map((s) => s.state),
      ...(this.prepareError ? { podMessage: this.prepareError.message } : {}),
    });
    const text = canonicalJson(status);
    if (text === this.lastSent) return;
    const updated = await this.ctx.client.mergePatch<Pod>(`/api/v1/namespaces/${this.pod.metadata.namespace}/pods/${this.pod.metadata.name}/status`, {
      metadata: { uid: this.pod.metadata.uid },
      status,
    });
    this.lastSent = text;
    if (updated?.status && updated.metadata.uid === this.pod.metadata.uid) this.pod = { ...this.pod, status: updated.status };
  }
}
