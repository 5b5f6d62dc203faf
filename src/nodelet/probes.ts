/**
 * Readiness, liveness and startup probes of one container run, as the
 * kubelet's probe workers run them (kubernetes pkg/kubelet/prober/worker.go):
 *
 * - each probe ticks every periodSeconds (default 10) once initialDelaySeconds
 *   have passed since the container started; one run may take timeoutSeconds
 *   (default 1);
 * - a result changes the probe's state only after successThreshold (default 1)
 *   successes or failureThreshold (default 3) failures in a row;
 * - a probe that could not run at all (error) is retried up to 3 times in the
 *   same tick, then thrown away without counting;
 * - while a startup probe has not succeeded, liveness and readiness do not
 *   run; once it succeeds it stops, and readiness runs at once;
 * - readiness starts false; without a readiness probe the container is ready
 *   once started; liveness and startup start as passing;
 * - a liveness or startup probe that reaches its failure threshold stops
 *   probing and asks for the container to be killed (and restarted by the
 *   pod's restart policy); the next run gets a new `start()`.
 *
 * Events are those of the kubelet: Warning Unhealthy "<Kind> probe failed:
 * <output>", Warning Unhealthy "<Kind> probe errored and resulted in unknown
 * state: <error>", Warning ProbeWarning "<Kind> probe warning: <output>".
 */
import { SUPPORTED_KUBERNETES_VERSIONS } from '../config/types.js';
import { runProbeOnce, type ExecInContainer, type ProbeContext, type ProbeOutcome } from './probe-actions.js';
import type { Container, Probe } from './types.js';

export { execThroughProcess, type ProbeOutcome } from './probe-actions.js';

export type ProbeKind = 'Readiness' | 'Liveness' | 'Startup';

/** Retries within one tick for a probe that errored (pkg/kubelet/prober/prober.go maxProbeRetries). */
const MAX_PROBE_RETRIES = 3;

/** Timer functions, so tests can drive time; the defaults do not keep the process alive. */
export interface ProbeTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  now(): number;
}

const realTimers: ProbeTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms).unref(),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
  now: () => Date.now(),
};

export interface ContainerProbesOptions {
  container: Container;
  /** The pod's restartPolicy: says whether a killed container comes back ("…, will be restarted"). */
  restartPolicy?: 'Always' | 'OnFailure' | 'Never';
  /** The pod's terminationGracePeriodSeconds, used when the probe sets none. */
  podTerminationGracePeriodSeconds?: number;
  /** Runs a command inside this container (exec probes). Without it, exec probes error. */
  exec?: ExecInContainer;

  onReadyChange?(ready: boolean): void;
  /** The container failed its liveness or startup probe: kill it with this grace period. */
  onLivenessFailure?(message: string, kill: { probe: 'liveness' | 'startup'; gracePeriodSeconds?: number }): void;
  onStartupComplete?(): void;
  event?(type: 'Normal' | 'Warning', reason: string, message: string): void;

  /** Milliseconds per probe second (tests shrink time). Default 1000. */
  msPerSecond?: number;
  timers?: ProbeTimers;
  /** Default probeUserAgent() of the lab's default Kubernetes version. */
  userAgent?: string;
  /** Replaces the real probe handlers (tests). */
  runProbe?: (probe: Probe, ctx: ProbeContext) => Promise<ProbeOutcome>;
}

/** A container without readiness and startup probes is ready as soon as it runs. */
export function readyWhenRunning(container: Container): boolean {
  return !container.readinessProbe && !container.startupProbe;
}

/** Whether the container has any probe the nodelet has to run. */
export function hasProbes(container: Container): boolean {
  return !!(container.readinessProbe || container.livenessProbe || container.startupProbe);
}

/** The User-Agent of a kubelet's HTTP probes: `kube-probe/1.34` for v1.34.4. */
export function probeUserAgent(kubernetesVersion: string = SUPPORTED_KUBERNETES_VERSIONS[0]): string {
  const m = /^v?(\d+)\.(\d+)/.exec(kubernetesVersion);
  return m ? `kube-probe/${m[1]}.${m[2]}` : 'kube-probe';
}

function positive(n: number | undefined, fallback: number): number {
  return n !== undefined && Number.isFinite(n) && n > 0 ? n : fallback;
}

/** One probe of one container run: its ticks, its counts, its state. */
class ProbeLoop {
  private timer: unknown;
  private stopped = false;
  private running = false;
  private lastResult: 'success' | 'failure' | undefined;
  private run = 0;
  readonly period: number;
  readonly timeout: number;
  readonly successThreshold: number;
  readonly failureThreshold: number;
  readonly initialDelay: number;
  /** Stops ticking after a threshold result that ends its job (liveness/startup). */
  onHold = false;

  constructor(
    readonly kind: ProbeKind,
    readonly spec: Probe,
    private readonly owner: ContainerProbes,
    private readonly startedAt: number,
  ) {
    const ms = owner.msPerSecond;
    this.period = positive(spec.periodSeconds, 10) * ms;
    this.timeout = positive(spec.timeoutSeconds, 1) * ms;
    this.successThreshold = positive(spec.successThreshold, 1);
    this.failureThreshold = positive(spec.failureThreshold, 3);
    this.initialDelay = Math.max(0, spec.initialDelaySeconds ?? 0) * ms;
  }

  start(): void {
    this.schedule(Math.max(0, this.startedAt + this.initialDelay - this.owner.timers.now()));
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) this.owner.timers.clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Probe now (if due at all) and count the period from here. */
  trigger(): void {
    if (this.stopped || this.running) return;
    if (this.owner.timers.now() < this.startedAt + this.initialDelay) return;
    this.schedule(0);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    if (this.timer !== undefined) this.owner.timers.clearTimeout(this.timer);
    this.timer = this.owner.timers.setTimeout(() => {
      this.timer = undefined;
      void this.tick();
    }, ms);
  }

  private async tick(): Promise<void> {
    if (this.stopped || this.onHold) return;
    const began = this.owner.timers.now();
    if (this.owner.mayRun(this.kind)) {
      this.running = true;
      try {
        await this.probeOnce();
      } finally {
        this.running = false;
      }
    }
    if (!this.onHold) this.schedule(Math.max(0, this.period - (this.owner.timers.now() - began)));
  }

  private async probeOnce(): Promise<void> {
    let outcome: ProbeOutcome = { result: 'unknown', output: '' };
    for (let i = 0; i < MAX_PROBE_RETRIES; i++) {
      outcome = await this.owner.runOne(this.spec, this.timeout);
      if (this.stopped) return;
      if (!(outcome.result === 'unknown' && outcome.error)) break;
    }
    const kind = this.kind;
    let result: 'success' | 'failure';
    if (outcome.result === 'unknown' && outcome.error) {
      this.owner.emit('Warning', 'Unhealthy', `${kind} probe errored and resulted in unknown state: ${outcome.error.message}`);
      return;
    } else if (outcome.result === 'success') {
      result = 'success';
    } else if (outcome.result === 'warning') {
      this.owner.emit('Warning', 'ProbeWarning', `${kind} probe warning: ${outcome.output}`);
      result = 'success';
    } else if (outcome.result === 'failure') {
      this.owner.emit('Warning', 'Unhealthy', `${kind} probe failed: ${outcome.output}`);
      result = 'failure';
    } else {
      result = 'failure';
    }
    if (this.lastResult === result) this.run++;
    else {
      this.lastResult = result;
      this.run = 1;
    }
    const threshold = result === 'success' ? this.successThreshold : this.failureThreshold;
    if (this.run < threshold) return;
    this.owner.settle(this, result);
  }
}

/**
 * The probes of one container run. Create one per container; call start()
 * each time the container (re)starts running and stop() when it exits or the
 * pod goes away. Callbacks report what the pod worker acts on; probing never
 * throws.
 */
export class ContainerProbes {
  readonly timers: ProbeTimers;
  readonly msPerSecond: number;
  private loops: ProbeLoop[] = [];
  private podIP = '';
  private _ready = false;
  private _started = false;
  private active = false;
  private readonly userAgent: string;

  constructor(private readonly opts: ContainerProbesOptions) {
    this.timers = opts.timers ?? realTimers;
    this.msPerSecond = opts.msPerSecond ?? 1000;
    this.userAgent = opts.userAgent ?? probeUserAgent();
  }

  /** Ready as the pod status reports it (false before start and after stop). */
  get ready(): boolean {
    return this._ready;
  }

  /** Started as the pod status reports it: the startup probe passed, or there is none. */
  get started(): boolean {
    return this._started;
  }

  /**
   * The container (re)started: probe it at podIP. `startedAt` is when it
   * started running (initialDelaySeconds count from there; default now).
   * Without a startup probe it is started at once, and without a readiness
   * probe it is then ready at once (callbacks run before start returns).
   */
  start(podIP: string, startedAt?: number): void {
    this.stop();
    this.podIP = podIP;
    this.active = true;
    this._ready = false;
    this._started = false;
    const c = this.opts.container;
    const at = startedAt ?? this.timers.now();
    this.loops = [
      ...(c.startupProbe ? [new ProbeLoop('Startup', c.startupProbe, this, at)] : []),
      ...(c.livenessProbe ? [new ProbeLoop('Liveness', c.livenessProbe, this, at)] : []),
      ...(c.readinessProbe ? [new ProbeLoop('Readiness', c.readinessProbe, this, at)] : []),
    ];
    if (!c.startupProbe) this.markStarted();
    for (const loop of this.loops) loop.start();
  }

  /** Stops every probe; no callback runs after this returns. */
  stop(): void {
    this.active = false;
    for (const loop of this.loops) loop.stop();
    this.loops = [];
    this._ready = false;
  }

  /** @internal */
  mayRun(kind: ProbeKind): boolean {
    return this.active && (kind === 'Startup' ? !this._started : this._started);
  }

  /** @internal */
  runOne(spec: Probe, timeoutMs: number): Promise<ProbeOutcome> {
    const ctx: ProbeContext = {
      podIP: this.podIP,
      container: this.opts.container,
      timeoutMs,
      userAgent: this.userAgent,
      ...(this.opts.exec ? { exec: this.opts.exec } : {}),
    };
    const run = this.opts.runProbe ?? runProbeOnce;
    return run(spec, ctx).catch((err: Error) => ({ result: 'unknown' as const, output: '', error: err }));
  }

  /** @internal */
  emit(type: 'Normal' | 'Warning', reason: string, message: string): void {
    if (this.active) this.opts.event?.(type, reason, message);
  }

  /** @internal A probe reached its threshold with this result. */
  settle(loop: ProbeLoop, result: 'success' | 'failure'): void {
    if (!this.active) return;
    const name = this.opts.container.name;
    switch (loop.kind) {
      case 'Startup':
        loop.onHold = true;
        if (result === 'success') {
          this.markStarted();
          for (const l of this.loops) if (l.kind === 'Readiness') l.trigger();
        } else {
          this.kill(loop, `Container ${name} failed startup probe`, 'startup');
        }
        break;
      case 'Liveness':
        if (result === 'failure') {
          loop.onHold = true;
          this.kill(loop, `Container ${name} failed liveness probe`, 'liveness');
        }
        break;
      case 'Readiness':
        this.setReady(result === 'success');
        break;
    }
  }

  private kill(loop: ProbeLoop, message: string, probe: 'liveness' | 'startup'): void {
    const restart = (this.opts.restartPolicy ?? 'Always') !== 'Never';
    const grace = loop.spec.terminationGracePeriodSeconds ?? this.opts.podTerminationGracePeriodSeconds;
    this.setReady(false);
    this.opts.onLivenessFailure?.(restart ? `${message}, will be restarted` : message, {
      probe,
      ...(grace !== undefined ? { gracePeriodSeconds: grace } : {}),
    });
  }

  private markStarted(): void {
    this._started = true;
    this.opts.onStartupComplete?.();
    if (!this.opts.container.readinessProbe) this.setReady(true);
  }

  private setReady(ready: boolean): void {
    if (!this.active || this._ready === ready) return;
    this._ready = ready;
    this.opts.onReadyChange?.(ready);
  }
}
