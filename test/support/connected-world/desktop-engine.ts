import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { execa } from 'execa';
import type { ConnectedWorld } from './index.js';
import { startKindWorld, type EngineNetwork, type KindWorld } from './kind.js';
import type { WorldAddresses } from './names.js';
import { forwardedPorts, parseContainerEvent, PublishedPortTable } from './published-ports.js';
import { startVmLink, type VmLink } from './vm-link.js';

export interface DesktopEngine extends KindWorld, Pick<VmLink, 'netnsPid' | 'forwarded' | 'waitForwarded' | 'problems'> {
  /** The engine's address ranges (its default bridge's and its networks' pool): `unreachable` from the host. */
  engineRanges: string[];
}

/** A /24 bridge address (10.1.2.1/24) as its network (10.1.2.0/24). */
function networkOf24(bip: string): string {
  const m = /^(\d+\.\d+\.\d+)\.\d+\/24$/.exec(bip);
  if (!m) throw new Error(`engine bip ${bip}: the desktop engine takes a /24 (a.b.c.1/24)`);
  return `${m[1]}.0/24`;
}

async function ended(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGKILL');
  await gone;
}

/**
 * Docker Desktop's port forwarder: follows the engine's container events (start, die) and forwards each port a running
 * container publishes on the engine's loopback or every address to the host's 127.0.0.1:<same port> through `link`.
 * Takes the containers already running too. Returns its stop (the listeners stay with the link).
 */
export async function followPublishedPorts(
  engine: Pick<KindWorld, 'dockerHost' | 'docker'>,
  link: Pick<VmLink, 'forward' | 'unforward' | 'problems'>,
  stopped: () => boolean,
): Promise<() => Promise<void>> {
  const table = new PublishedPortTable();
  const apply = async (change: { open: number[]; close: number[] }) => {
    for (const p of change.close) await link.unforward(p);
    for (const p of change.open) await link.forward(p);
  };
  const publishedBy = async (id: string): Promise<number[] | null> => {
    const r = await engine.docker(['inspect', '-f', '{{json .NetworkSettings.Ports}}', id]);
    if (r.exitCode === 0) return forwardedPorts(JSON.parse(r.stdout) as unknown);
    // Removed right after it started: its die event follows.
    if (!/No such/i.test(r.all)) link.problems.push(`docker inspect ${id}: ${r.all.trim()}`);
    return null;
  };
  // Events first, then what already runs: nothing started in between is missed (a second start of one is harmless).
  const events = spawn('docker', ['events', '--filter', 'type=container', '--format', '{{json .}}'], {
    env: { ...process.env, DOCKER_HOST: engine.dockerHost },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let queue = Promise.resolve();
  let ending = false;
  const handle = (line: string) => {
    const event = parseContainerEvent(line);
    if (!event) return;
    queue = queue.then(async () => {
      if (ending || stopped()) return;
      if (event.action === 'die') return apply(table.stopped(event.id));
      const ports = await publishedBy(event.id);
      if (ports) await apply(table.started(event.id, ports));
    });
  };
  createInterface({ input: events.stdout }).on('line', handle);
  events.once('exit', (code) => (ending || stopped() ? undefined : link.problems.push(`docker events exited (${code})`)));
  const running = (await engine.docker(['ps', '-q', '--no-trunc'])).stdout.trim();
  for (const id of running ? running.split('\n') : []) handle(JSON.stringify({ Type: 'container', Action: 'start', Actor: { ID: id } }));
  return async () => {
    ending = true;
    await ended(events);
    await queue.catch(() => undefined);
  };
}

/**
 * An engine like Docker Desktop's in the simulated world: the test's dockerd (scripts/docker-engine.sh, started as
 * kind.ts starts it) runs in the "VM" of vm-link.ts, a network namespace of its own with no route out. The host reaches
 * it through its socket (a file, so shared) and through what it publishes on 127.0.0.1 or 0.0.0.0, which this forwarder
 * listens on at the host's 127.0.0.1:<same port>, following `docker events` (start, die) and each container's published
 * ports, as Docker Desktop's port forwarder does. The engine pulls from the world's servers through the VM link's outward
 * path. The engine's address ranges get `unreachable` routes on the host for the test's time: a dial to a container
 * fails at once rather than leaving by the default route (on a Mac it leaves by the default route and times out).
 */
export async function startDesktopEngine(
  world: ConnectedWorld,
  opts: { kindDownload: { url: string; sha256: string }; network: EngineNetwork; addresses: WorldAddresses },
): Promise<DesktopEngine> {
  const engineRanges = [networkOf24(opts.network.bip), opts.network.pool];
  const cleanups: (() => Promise<void>)[] = [];
  let closed = false;
  const close = async () => {
    closed = true;
    const errors: unknown[] = [];
    for (const step of cleanups.reverse()) await step().catch((err: unknown) => errors.push(err));
    cleanups.length = 0;
    if (errors.length) throw new AggregateError(errors, `desktop engine cleanup failed: ${errors.map(String).join('; ')}`);
  };
  try {
    for (const range of engineRanges) {
      await execa('ip', ['route', 'add', 'unreachable', range]);
      cleanups.push(async () => void (await execa('ip', ['route', 'del', 'unreachable', range])));
    }
    const link = await startVmLink({
      dir: path.join(world.dir, 'desktop-engine', 'vm'),
      outward: [`${opts.addresses.registry}:443`, `${opts.addresses.files}:443`],
    });
    cleanups.push(() => link.close());
    const enter: ConnectedWorld['run'] = (file, args, runOpts) => world.run('nsenter', [`--net=/proc/${link.netnsPid}/ns/net`, '--', file, ...args], runOpts);
    const kind = await startKindWorld(world, { kindDownload: opts.kindDownload, network: opts.network, enter });
    cleanups.push(() => kind.stop());

    cleanups.push(await followPublishedPorts(kind, link, () => closed));

    return {
      ...kind,
      engineRanges,
      netnsPid: link.netnsPid,
      problems: link.problems,
      forwarded: () => link.forwarded(),
      waitForwarded: (port, timeoutMs) => link.waitForwarded(port, timeoutMs),
      stop: close,
    };
  } catch (err) {
    await close().catch(() => undefined);
    throw err;
  }
}
