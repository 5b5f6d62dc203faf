import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { execa } from 'execa';
import type { ConnectedWorld } from './index.js';
import { startKindWorld, type EngineNetwork, type KindWorld } from './kind.js';
import type { WorldAddresses } from './names.js';
import { forwardedPorts, parseContainerEvent, PublishedPortTable } from './published-ports.js';

/**
 * The "VM" side of the forwarder, run inside the engine's network namespace (as Docker Desktop's VM runs its half of
 * vpnkit): a connection on the `in` socket starts with `<port>\n` and is piped to 127.0.0.1:<port> there (what the engine
 * published); a connection to one of the world's addresses (`addr:port` arguments) there is piped out through the `out`
 * socket, whose host side dials the same address on the host (the engine pulls from the world's registries this way).
 * Unix sockets are files: the host and the namespace share them, as the VM and the host share vsock.
 */
const VM_SIDE = `
const net = require('net');
const [inSock, outSock, ...outward] = process.argv.slice(1);
const join = (a, b, rest) => {
  a.on('error', () => b.destroy()); b.on('error', () => a.destroy());
  if (rest && rest.length) b.write(rest);
  a.pipe(b); b.pipe(a);
};
const header = (sock, then) => {
  let buf = Buffer.alloc(0);
  const on = (d) => {
    buf = Buffer.concat([buf, d]);
    const i = buf.indexOf(10);
    if (i < 0) { if (buf.length > 64) sock.destroy(); return; }
    sock.off('data', on); sock.pause();
    then(buf.subarray(0, i).toString(), buf.subarray(i + 1));
  };
  sock.on('data', on);
  sock.on('error', () => sock.destroy());
};
net.createServer((c) => header(c, (port, rest) => join(c, net.connect(Number(port), '127.0.0.1'), rest))).listen(inSock, () => {
  let pending = outward.length;
  const ready = () => { if (--pending <= 0) console.log('ready'); };
  if (!pending) console.log('ready');
  for (const target of outward) {
    const [addr, port] = target.split(':');
    net.createServer((c) => { const u = net.connect(outSock); u.write(target + '\\n'); join(c, u); }).listen(Number(port), addr, ready);
  }
});
`;

export interface DesktopEngine extends KindWorld {
  /** The process holding the engine's network namespace (its `/proc/<pid>/ns/net`). */
  netnsPid: number;
  /** The engine's address ranges (its default bridge's and its networks' pool), none routed from the host. */
  engineRanges: string[];
  /** Host ports the forwarder listens on now (127.0.0.1). */
  forwarded(): number[];
  /** Waits until the forwarder listens on `port` (it follows the engine's events, so a port comes a moment after its container starts). */
  waitForwarded(port: number, timeoutMs?: number): Promise<void>;
  /** What went wrong in the forwarder so far (a port the host could not listen on, an inspect that failed). */
  problems: string[];
}

/** A /24 bridge address (10.1.2.1/24) as its network (10.1.2.0/24). */
function networkOf24(bip: string): string {
  const m = /^(\d+\.\d+\.\d+)\.\d+\/24$/.exec(bip);
  if (!m) throw new Error(`engine bip ${bip}: the desktop engine takes a /24 (a.b.c.1/24)`);
  return `${m[1]}.0/24`;
}

/** Starts `file args` and resolves when it prints `ready` (rejects with what it printed when it exits first). */
function startHolder(file: string, args: string[], what: string): Promise<ChildProcess> {
  const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let printed = '';
  child.stderr!.on('data', (d: Buffer) => (printed += d.toString()));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => (d.toString().includes('ready') ? resolve(child) : undefined));
    child.once('exit', (code) => reject(new Error(`${what} exited (${code}) before it was ready: ${printed.trim()}`)));
  });
}

async function ended(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGKILL');
  await gone;
}

function join(a: net.Socket, b: net.Socket): void {
  a.on('error', () => b.destroy());
  b.on('error', () => a.destroy());
  a.pipe(b);
  b.pipe(a);
}

/**
 * An engine like Docker Desktop's in the simulated world: the test's dockerd (scripts/docker-engine.sh, as kind.ts
 * starts it) runs in a network namespace of its own, the "VM" (only loopback and the engine's own bridges; no route
 * out, so no packet leaves). The host reaches it through its socket (a file, so shared) and through what it publishes
 * on 127.0.0.1 or 0.0.0.0, which a forwarder in the test process listens on at the host's 127.0.0.1:<same port>,
 * following `docker events` (start, die) and each container's published ports, as Docker Desktop's port forwarder does.
 * The engine's address ranges get `unreachable` routes on the host for the test's time: a dial to a container address
 * fails at once instead of leaving by the default route (on a Mac it leaves by the default route and times out).
 */
export async function startDesktopEngine(
  world: ConnectedWorld,
  opts: { kindDownload: { url: string; sha256: string }; network: EngineNetwork; addresses: WorldAddresses },
): Promise<DesktopEngine> {
  const dir = path.join(world.dir, 'desktop-engine');
  const sockets = path.join(dir, 'vm');
  await fs.mkdir(sockets, { recursive: true, mode: 0o700 });
  const inSock = path.join(sockets, 'in.sock');
  const outSock = path.join(sockets, 'out.sock');
  const outward = [`${opts.addresses.registry}:443`, `${opts.addresses.files}:443`];
  const engineRanges = [networkOf24(opts.network.bip), opts.network.pool];
  const cleanups: (() => Promise<void>)[] = [];
  const problems: string[] = [];
  const listeners = new Map<number, net.Server>();
  const waiters = new Map<number, (() => void)[]>();
  let closed = false;

  const close = async () => {
    closed = true;
    const errors: unknown[] = [];
    for (const step of cleanups.reverse()) await step().catch((err: unknown) => errors.push(err));
    cleanups.length = 0;
    if (errors.length) throw new AggregateError(errors, `desktop engine cleanup failed: ${errors.map(String).join('; ')}`);
  };

  try {
    // The "VM": a network namespace held by a sleeping process (gone with it: its bridges, iptables, docker-proxy listeners).
    const holder = await startHolder('unshare', ['--net', '--', 'sh', '-c', 'ip link set lo up && echo ready && exec sleep 2147483647'], 'unshare --net');
    cleanups.push(() => ended(holder));
    const netnsPid = holder.pid as number;
    const enter: ConnectedWorld['run'] = (file, args, runOpts) => world.run('nsenter', [`--net=/proc/${netnsPid}/ns/net`, '--', file, ...args], runOpts);

    for (const range of engineRanges) {
      await execa('ip', ['route', 'add', 'unreachable', range]);
      cleanups.push(async () => void (await execa('ip', ['route', 'del', 'unreachable', range])));
    }

    // The host side of the outward path: only to the world's own servers, on the host's loopback.
    const outServer = net.createServer((c) => {
      let buf = Buffer.alloc(0);
      const on = (d: Buffer) => {
        buf = Buffer.concat([buf, d]);
        const i = buf.indexOf(10);
        if (i < 0) return void (buf.length > 64 ? c.destroy() : undefined);
        c.off('data', on);
        c.pause();
        const target = buf.subarray(0, i).toString();
        if (!outward.includes(target)) return void c.destroy();
        const [host, port] = target.split(':') as [string, string];
        const u = net.connect(Number(port), host);
        const rest = buf.subarray(i + 1);
        if (rest.length) u.write(rest);
        join(c, u);
      };
      c.on('data', on);
      c.on('error', () => c.destroy());
    });
    await new Promise<void>((resolve, reject) => outServer.once('error', reject).listen(outSock, resolve));
    cleanups.push(() => new Promise<void>((resolve) => outServer.close(() => resolve())));

    const vm = await startHolder('nsenter', [`--net=/proc/${netnsPid}/ns/net`, '--', process.execPath, '-e', VM_SIDE, inSock, outSock, ...outward], 'the VM side of the forwarder');
    cleanups.push(() => ended(vm));

    const kind = await startKindWorld(world, { kindDownload: opts.kindDownload, network: opts.network, enter });
    cleanups.push(() => kind.stop());

    // The host side of the inward path: one listener per published port, each connection piped into the VM.
    const table = new PublishedPortTable();
    const open = async (port: number) => {
      const server = net.createServer((c) => {
        const u = net.connect(inSock);
        u.write(`${port}\n`);
        join(c, u);
      });
      await new Promise<void>((resolve) => {
        server.once('error', (err) => {
          problems.push(`127.0.0.1:${port}: ${String(err)}`);
          resolve();
        });
        server.listen(port, '127.0.0.1', () => {
          listeners.set(port, server);
          for (const w of waiters.get(port) ?? []) w();
          waiters.delete(port);
          resolve();
        });
      });
    };
    const shut = async (port: number) => {
      const server = listeners.get(port);
      listeners.delete(port);
      if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
    };
    const apply = async (change: { open: number[]; close: number[] }) => {
      for (const p of change.close) await shut(p);
      for (const p of change.open) await open(p);
    };
    const inspectPorts = async (id: string): Promise<number[] | null> => {
      const r = await kind.docker(['inspect', '-f', '{{json .NetworkSettings.Ports}}', id]);
      if (r.exitCode !== 0) {
        // Gone already (started and removed at once): its die event follows.
        if (!/No such/i.test(r.all)) problems.push(`docker inspect ${id}: ${r.all.trim()}`);
        return null;
      }
      return forwardedPorts(JSON.parse(r.stdout) as unknown);
    };

    // Follow the engine's events first, then take what already runs: nothing started in between is missed.
    const events = spawn('docker', ['events', '--filter', 'type=container', '--format', '{{json .}}'], {
      env: { ...process.env, DOCKER_HOST: kind.dockerHost },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    cleanups.push(() => ended(events));
    let queue = Promise.resolve();
    const handle = (line: string) => {
      const event = parseContainerEvent(line);
      if (!event) return;
      queue = queue.then(async () => {
        if (closed) return;
        if (event.action === 'die') return apply(table.stopped(event.id));
        const ports = await inspectPorts(event.id);
        if (ports) await apply(table.started(event.id, ports));
      });
    };
    createInterface({ input: events.stdout }).on('line', handle);
    events.once('exit', (code) => (closed ? undefined : problems.push(`docker events exited (${code})`)));
    const running = (await kind.docker(['ps', '-q', '--no-trunc'])).stdout.trim();
    for (const id of running ? running.split('\n') : []) handle(JSON.stringify({ Type: 'container', Action: 'start', Actor: { ID: id } }));
    cleanups.push(async () => {
      await queue.catch(() => undefined);
      for (const port of [...listeners.keys()]) await shut(port);
    });

    return {
      ...kind,
      netnsPid,
      engineRanges,
      problems,
      forwarded: () => [...listeners.keys()].sort((a, b) => a - b),
      waitForwarded(port, timeoutMs = 10_000) {
        if (listeners.has(port)) return Promise.resolve();
        return new Promise((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`the forwarder did not listen on 127.0.0.1:${port} within ${timeoutMs} ms: ${problems.join('; ')}`)), timeoutMs);
          waiters.set(port, [
            ...(waiters.get(port) ?? []),
            () => {
              clearTimeout(timer);
              resolve();
            },
          ]);
        });
      },
      stop: close,
    };
  } catch (err) {
    await close().catch(() => undefined);
    throw err;
  }
}
