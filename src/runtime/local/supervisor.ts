import fs from 'node:fs/promises';
import { DEFAULT_BACKOFF, nextCrashCount, restartDelayMs, type BackoffPolicy } from '../../nodelet/backoff.js';
import { sleep } from '../../kube/wait.js';
import { isRunning, readPid, startProcess } from './process.js';
import { labLockHeld, readRestarts, readSupervised, writeRestarts, type SupervisedComponent } from './supervision.js';

/** What the supervisor knows of one component between its looks. */
export interface ComponentWatch {
  /** Deaths counted towards the back-off (reset by a run of `resetAfterMs`). */
  crashes: number;
  /** When the process it last saw running started (ms since the epoch); null before it saw one. */
  startedAt: number | null;
  /** When a dead component is due to be started again; null while it runs. */
  restartAt: number | null;
}

export const NEW_WATCH: ComponentWatch = { crashes: 0, startedAt: null, restartAt: null };

export type Decision = { kind: 'running' } | { kind: 'died'; ranMs: number | null; delayMs: number } | { kind: 'waiting' } | { kind: 'restart' };

/**
 * One look at a component, as a kubelet judges a static pod: the first death is restarted at once,
 * one that keeps dying waits 10 s, 20 s, … up to 5 min, and a run of 10 min forgives the past.
 * A component found dead without ever having been seen running counts as a first death.
 */
export function decide(
  watch: ComponentWatch,
  seen: { running: boolean; startedAt: number | null },
  now: number,
  policy: BackoffPolicy = DEFAULT_BACKOFF,
): { watch: ComponentWatch; decision: Decision } {
  if (seen.running) return { watch: { ...watch, startedAt: seen.startedAt ?? watch.startedAt ?? now, restartAt: null }, decision: { kind: 'running' } };
  if (watch.restartAt === null) {
    const ranMs = watch.startedAt === null ? null : now - watch.startedAt;
    const crashes = nextCrashCount(watch.crashes, ranMs ?? Infinity, policy);
    const delayMs = restartDelayMs(crashes, policy);
    return { watch: { ...watch, crashes, restartAt: now + delayMs }, decision: { kind: 'died', ranMs, delayMs } };
  }
  if (now >= watch.restartAt) return { watch: { ...watch, restartAt: null, startedAt: now }, decision: { kind: 'restart' } };
  return { watch, decision: { kind: 'waiting' } };
}

/** When process `pid` started, in ms since the epoch (/proc/<pid>/stat field 22 against the boot time); null if it is gone. */
async function processStartedAt(pid: number): Promise<number | null> {
  try {
    const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
    const ticks = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
    const uptimeS = Number((await fs.readFile('/proc/uptime', 'utf8')).split(' ')[0]);
    return Date.now() - (uptimeS * 1000 - ticks * 10);
  } catch {
    return null;
  }
}

type Exit = { code: number | null; signal: NodeJS.Signals | null };

function howItEnded(pid: number | null, exit: Exit | undefined): string {
  if (pid === null) return 'has no pid file';
  if (!exit) return `(pid ${pid}) is gone (not started by this supervisor: its exit status is unknown)`;
  return `(pid ${pid}) ${exit.signal ? `was killed by ${exit.signal}` : `exited with status ${String(exit.code)}`}`;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

interface SuperviseOptions {
  intervalMs?: number;
  policy?: BackoffPolicy;
  log?: (line: string) => void;
}

/**
 * The supervisor's loop: every `intervalMs` it looks at each component of the lab's manifest (its
 * pid file and whether that pid still runs the component's binary) and restarts the dead ones after
 * their back-off, noting why in the component's log and counting restarts beside its pid file. While
 * `up` or `down` holds the lab's lock it only watches. It ends when the lab's manifest is gone.
 */
export async function superviseLab(labDirectory: string, options: SuperviseOptions = {}): Promise<void> {
  const intervalMs = options.intervalMs ?? 500;
  const log = options.log ?? ((line: string) => process.stdout.write(`${new Date().toISOString()} ${line}\n`));
  const watches = new Map<string, ComponentWatch>();
  const exits = new Map<string, { pid: number; exit?: Exit }>();
  log(`supervising ${labDirectory}`);
  for (;;) {
    const components = await readSupervised(labDirectory);
    if (!components) {
      log('the lab has no supervised components any more (down?): exiting');
      return;
    }
    if (!(await labLockHeld(labDirectory))) {
      for (const component of components) await look(component);
    }
    await sleep(intervalMs);
  }

  async function look({ cluster, spec }: SupervisedComponent): Promise<void> {
    const key = `${cluster}/${spec.name}`;
    const pid = await readPid(spec.pidFile);
    const running = pid !== null && (await isRunning(pid, spec.binary));
    const { watch, decision } = decide(
      watches.get(key) ?? NEW_WATCH,
      { running, startedAt: running ? await processStartedAt(pid) : null },
      Date.now(),
      options.policy,
    );
    watches.set(key, watch);
    if (decision.kind === 'died') {
      const child = exits.get(key);
      const why =
        `${spec.name} ${howItEnded(pid, child?.pid === pid ? child.exit : undefined)}` +
        (decision.ranMs === null ? '' : ` after running ${seconds(decision.ranMs)}`) +
        (decision.delayMs ? `; restarting in ${seconds(decision.delayMs)} (back-off: it keeps dying)` : '; restarting now');
      log(`${key}: ${why}`);
      await fs.appendFile(spec.logFile, `\n==== ${new Date().toISOString()} supervisor: ${why}\n`).catch(() => undefined);
      const record = await readRestarts(spec.pidFile);
      await writeRestarts(spec.pidFile, { ...record, reason: why });
      if (decision.delayMs === 0) await restart();
    } else if (decision.kind === 'restart') {
      await restart();
    }

    async function restart(): Promise<void> {
      watches.set(key, { ...watches.get(key)!, restartAt: null, startedAt: Date.now() });
      try {
        const proc = await startProcess(spec);
        const entry: { pid: number; exit?: Exit } = { pid: proc.pid };
        exits.set(key, entry);
        // Not released: the supervisor outlives its children and wants their exit status (the command exits it explicitly).
        void proc.exited.then((exit) => (entry.exit = exit));
        const record = await readRestarts(spec.pidFile);
        await writeRestarts(spec.pidFile, { count: record.count + 1, last: new Date().toISOString(), reason: record.reason });
        log(`${key}: started (pid ${proc.pid}), restart ${record.count + 1}`);
      } catch (err) {
        log(`${key}: could not start: ${(err as Error).message}`);
      }
    }
  }
}
