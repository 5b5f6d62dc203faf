import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/connected-world/registry.js';
import { startVmLink, type VmLink } from '../support/connected-world/vm-link.js';

/** One of the world's servers on the host's loopback (as the connected world's registry listens on 127.0.79.1:443). */
const OUTWARD = { host: '127.0.79.9', port: 4439 };

/** In the VM: a server on its 127.0.0.1:<port> that answers `vm:<what it was sent>`. */
const VM_SERVER = `
require('net').createServer((c) => c.once('data', (d) => c.end('vm:' + d))).listen(Number(process.argv[1]), '127.0.0.1', () => console.log('ready'));
`;
/** In the VM: a dial, printing the answer or the error's code. */
const VM_CLIENT = `
const s = require('net').connect({ host: process.argv[1], port: Number(process.argv[2]), timeout: 2000 });
s.on('connect', () => s.write('ping'));
s.on('data', (d) => { console.log(String(d)); process.exit(0); });
s.on('timeout', () => { console.log('timeout'); process.exit(1); });
s.on('error', (e) => { console.log(e.code); process.exit(1); });
`;

function ask(host: string, port: number, message: string): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect({ host, port, timeout: 3000 });
    let got = '';
    s.on('connect', () => s.write(message));
    s.on('data', (d) => (got += String(d)));
    s.on('end', () => resolve(got));
    s.on('timeout', () => (s.destroy(), resolve('timeout')));
    s.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? String(e)));
  });
}

// The desktop engine's "VM" (test/support/connected-world/vm-link.ts) without an engine: its network namespace has no
// way out but the link, the host reaches what listens on its loopback only through a forwarded port, and the VM reaches
// the world's servers on the host and nothing else.
describe('the desktop engine’s VM link', () => {
  let dir: string;
  let link: VmLink | undefined;
  let vmServer: ChildProcess | undefined;
  let hostServer: net.Server | undefined;
  let port: number;

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-vm-link-'));
    hostServer = net.createServer((c) => c.once('data', (d) => c.end(`host:${String(d)}`)));
    await new Promise<void>((resolve, reject) => hostServer!.once('error', reject).listen(OUTWARD.port, OUTWARD.host, resolve));
    link = await startVmLink({ dir: path.join(dir, 'vm'), outward: [`${OUTWARD.host}:${OUTWARD.port}`] });
    port = await freePort();
    vmServer = spawn('nsenter', [`--net=/proc/${link.netnsPid}/ns/net`, '--', process.execPath, '-e', VM_SERVER, String(port)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve, reject) => {
      vmServer!.stdout!.on('data', (d: Buffer) => (String(d).includes('ready') ? resolve() : undefined));
      vmServer!.once('exit', (code) => reject(new Error(`the VM's server exited (${code})`)));
    });
  });

  afterAll(async () => {
    vmServer?.kill('SIGKILL');
    await link?.close();
    await new Promise((resolve) => (hostServer ? hostServer.close(resolve) : resolve(undefined)));
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  const fromVm = async (host: string, p: number) =>
    (
      await execa('nsenter', [`--net=/proc/${link!.netnsPid}/ns/net`, '--', process.execPath, '-e', VM_CLIENT, host, String(p)], { reject: false })
    ).stdout.trim();

  it("the VM has loopback only: no route out, and its own loopback is not the host's", async () => {
    const routes = await execa('nsenter', [`--net=/proc/${link!.netnsPid}/ns/net`, '--', 'ip', '-4', 'route', 'show'], { reject: false, all: true });
    expect(routes.stdout.trim(), routes.all).toBe('');
    expect(await fromVm('192.0.2.1', 80)).toBe('ENETUNREACH');
    expect(await ask('127.0.0.1', port, 'x')).toBe('ECONNREFUSED');
  });

  it("a forwarded port: the host's 127.0.0.1:<port> reaches the VM's, bytes both ways, until it is unforwarded", async () => {
    expect(await link!.forward(port)).toBe(true);
    await link!.waitForwarded(port);
    expect(link!.forwarded()).toEqual([port]);
    expect(await ask('127.0.0.1', port, 'hello')).toBe('vm:hello');
    const big = 'y'.repeat(200_000);
    expect(await ask('127.0.0.1', port, big)).toMatch(/^vm:y+$/);
    await link!.unforward(port);
    expect(link!.forwarded()).toEqual([]);
    expect(await ask('127.0.0.1', port, 'x')).toBe('ECONNREFUSED');
  });

  it('a host port already taken is not forwarded, and the problem names it', async () => {
    const taken = net.createServer();
    const busy = await freePort();
    await new Promise<void>((resolve) => taken.listen(busy, '127.0.0.1', resolve));
    try {
      expect(await link!.forward(busy)).toBe(false);
      expect(link!.problems.join('\n')).toContain(`127.0.0.1:${busy}`);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
      link!.problems.length = 0;
    }
  });

  it("outward: the VM reaches the world's server at its address through the link, and nothing else on the host", async () => {
    expect(await fromVm(OUTWARD.host, OUTWARD.port)).toBe('host:ping');
    // Another port of the same host address: nothing listens for it in the VM.
    expect(await fromVm(OUTWARD.host, OUTWARD.port + 1)).toBe('ECONNREFUSED');
  });
});
