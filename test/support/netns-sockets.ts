import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { run } from '../../src/util/exec.js';

/** A TCP server in a namespace that answers every connection with `hello from <name>`. */
const SERVER = `
const [addr, port, name] = process.argv.slice(1);
require('net').createServer((c) => c.end('hello from ' + name)).listen(Number(port), addr, () => console.log('ready'));
`;

/** A TCP client in a namespace: prints what it was told, or why not ('timeout', 'ECONNREFUSED', …). */
const CLIENT = `
const [addr, port] = process.argv.slice(1);
const s = require('net').connect({ host: addr, port: Number(port), timeout: 1500 });
s.on('data', (d) => { console.log(String(d)); process.exit(0); });
s.on('timeout', () => { console.log('timeout'); process.exit(1); });
s.on('error', (e) => { console.log(e.code); process.exit(1); });
`;

/**
 * Servers and clients of the network tests, in namespaces the tests made
 * themselves (and on the host): what crosses the lab's network and what does not.
 */
export class NetnsSockets {
  private readonly listeners: ChildProcess[] = [];

  constructor(private readonly defaultPort: number) {}

  /** Starts a server in `netns` on `address` (name: what it answers; default: the address). */
  listen(netns: string, address: string, name = address, port = this.defaultPort): Promise<void> {
    const child = spawn('ip', ['netns', 'exec', netns, process.execPath, '-e', SERVER, address, String(port), name], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.listeners.push(child);
    return new Promise((resolve, reject) => {
      let err = '';
      const timer = setTimeout(() => reject(new Error(`listener ${name} on ${address} in ${netns} not ready within 15 s: ${err}`)), 15_000);
      child.stderr!.on('data', (d) => (err += String(d)));
      child.stdout!.on('data', (d) => {
        if (String(d).includes('ready')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.on('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`listener ${name} on ${address} in ${netns} exited (${code}): ${err}`));
      });
    });
  }

  /** Connects from inside a namespace: the answer, or why not. */
  async connectFrom(netns: string, address: string, port = this.defaultPort): Promise<string> {
    const r = await run('ip', ['netns', 'exec', netns, process.execPath, '-e', CLIENT, address, String(port)], { allowFailure: true, timeout: 10_000 });
    return r.stdout.trim() || `no output (exit ${r.exitCode}): ${r.stderr.trim()}`;
  }

  /** Connects from the host. */
  connectFromHost(address: string, port = this.defaultPort): Promise<string> {
    return new Promise((resolve) => {
      const s = net.connect({ host: address, port, timeout: 1500 });
      s.on('data', (d) => {
        resolve(String(d));
        s.destroy();
      });
      s.on('timeout', () => {
        resolve('timeout');
        s.destroy();
      });
      s.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    });
  }

  async stopAll(): Promise<void> {
    await Promise.all(
      this.listeners.splice(0).map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGKILL');
          }),
      ),
    );
  }
}
