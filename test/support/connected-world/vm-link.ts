import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';

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

export interface VmLink {
  /** The process holding the "VM"'s network namespace (its `/proc/<pid>/ns/net`). */
  netnsPid: number;
  /** Listens on the host's 127.0.0.1:<port>, each connection piped to the VM's 127.0.0.1:<port> (false: the host port is taken, said in problems). */
  forward(port: number): Promise<boolean>;
  unforward(port: number): Promise<void>;
  /** Host ports forwarded now, sorted. */
  forwarded(): number[];
  /** Resolves once `port` is forwarded (rejects after `timeoutMs`). */
  waitForwarded(port: number, timeoutMs?: number): Promise<void>;
  problems: string[];
  /** Ends the listeners, the VM side and the namespace (whatever runs in it loses its network). */
  close(): Promise<void>;
}

/** Starts `file args` and resolves when it prints `ready` (rejects with what it printed when it exits first). */
function startReady(file: string, args: string[], what: string): Promise<ChildProcess> {
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

function join(a: net.Socket, b: net.Socket, rest?: Buffer): void {
  a.on('error', () => b.destroy());
  b.on('error', () => a.destroy());
  if (rest?.length) b.write(rest);
  a.pipe(b);
  b.pipe(a);
}

/** Reads a connection's first line (at most 64 bytes), then hands over the line and what came after it. */
function firstLine(c: net.Socket, then: (line: string, rest: Buffer) => void): void {
  let buf = Buffer.alloc(0);
  const on = (d: Buffer) => {
    buf = Buffer.concat([buf, d]);
    const i = buf.indexOf(10);
    if (i < 0) return void (buf.length > 64 ? c.destroy() : undefined);
    c.off('data', on);
    c.pause();
    then(buf.subarray(0, i).toString(), buf.subarray(i + 1));
  };
  c.on('data', on);
  c.on('error', () => c.destroy());
}

/**
 * A "VM" as Docker Desktop's: a network namespace of its own (loopback up, nothing else: no route out) held by a
 * sleeping process, and the link between it and the host over two Unix sockets under `dir`: inward, host listeners on
 * 127.0.0.1 piped to the VM's 127.0.0.1 (`forward`); outward, the VM's connections to `outward` (`addr:port`, the
 * world's servers) piped to the same address on the host, and to nothing else.
 */
export async function startVmLink(o: { dir: string; outward: string[] }): Promise<VmLink> {
  await fs.mkdir(o.dir, { recursive: true, mode: 0o700 });
  const inSock = path.join(o.dir, 'in.sock');
  const outSock = path.join(o.dir, 'out.sock');
  const cleanups: (() => Promise<void>)[] = [];
  const problems: string[] = [];
  const listeners = new Map<number, net.Server>();
  const waiters = new Map<number, (() => void)[]>();
  // Every socket of the link, so close() ends them: a server's close waits for its connections, and one whose peer
  // died with the VM side may never end by itself (the journey's first run hung in close() on one).
  const sockets = new Set<net.Socket>();
  const track = (...ss: net.Socket[]) => {
    for (const s of ss) {
      sockets.add(s);
      s.once('close', () => sockets.delete(s));
    }
  };
  const endSockets = async () => {
    for (const s of sockets) s.destroy();
    sockets.clear();
  };
  const close = async () => {
    const errors: unknown[] = [];
    for (const step of cleanups.reverse()) await step().catch((err: unknown) => errors.push(err));
    cleanups.length = 0;
    if (errors.length) throw new AggregateError(errors, `the VM link's cleanup failed: ${errors.map(String).join('; ')}`);
  };
  try {
    const holder = await startReady('unshare', ['--net', '--', 'sh', '-c', 'ip link set lo up && echo ready && exec sleep 2147483647'], 'unshare --net');
    cleanups.push(() => ended(holder));
    const netnsPid = holder.pid as number;

    const outServer = net.createServer((c) => {
      track(c);
      firstLine(c, (target, rest) => {
        if (!o.outward.includes(target)) return void c.destroy();
        const [host, port] = target.split(':') as [string, string];
        const u = net.connect(Number(port), host);
        track(u);
        join(c, u, rest);
      });
    });
    await new Promise<void>((resolve, reject) => outServer.once('error', reject).listen(outSock, resolve));
    cleanups.push(() => new Promise<void>((resolve) => outServer.close(() => resolve())));
    cleanups.push(endSockets);

    const vm = await startReady(
      'nsenter',
      [`--net=/proc/${netnsPid}/ns/net`, '--', process.execPath, '-e', VM_SIDE, inSock, outSock, ...o.outward],
      'the VM side of the link',
    );
    cleanups.push(() => ended(vm));

    const unforward = async (port: number) => {
      const server = listeners.get(port);
      listeners.delete(port);
      if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
    };
    cleanups.push(async () => {
      for (const port of [...listeners.keys()]) await unforward(port);
    });
    cleanups.push(endSockets);
    return {
      netnsPid,
      problems,
      forward(port) {
        if (listeners.has(port)) return Promise.resolve(true);
        const server = net.createServer((c) => {
          const u = net.connect(inSock);
          track(c, u);
          u.write(`${port}\n`);
          join(c, u);
        });
        return new Promise((resolve) => {
          server.once('error', (err) => {
            problems.push(`the host's 127.0.0.1:${port}: ${String(err)}`);
            resolve(false);
          });
          server.listen(port, '127.0.0.1', () => {
            listeners.set(port, server);
            for (const w of waiters.get(port) ?? []) w();
            waiters.delete(port);
            resolve(true);
          });
        });
      },
      unforward,
      forwarded: () => [...listeners.keys()].sort((a, b) => a - b),
      waitForwarded(port, timeoutMs = 10_000) {
        if (listeners.has(port)) return Promise.resolve();
        return new Promise((resolve, reject) => {
          const timer = setTimeout(
            () => reject(new Error(`127.0.0.1:${port} was not forwarded within ${timeoutMs} ms: ${problems.join('; ') || 'no problem seen'}`)),
            timeoutMs,
          );
          const done = () => {
            clearTimeout(timer);
            resolve();
          };
          waiters.set(port, [...(waiters.get(port) ?? []), done]);
        });
      },
      close,
    };
  } catch (err) {
    await close().catch(() => undefined);
    throw err;
  }
}
