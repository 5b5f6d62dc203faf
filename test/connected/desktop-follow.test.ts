import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { followPublishedPorts } from '../support/connected-world/desktop-engine.js';
import type { Ran } from '../support/connected-world/namespace.js';
import { freePort } from '../support/connected-world/registry.js';
import { startVmLink, type VmLink } from '../support/connected-world/vm-link.js';

const ENGINE_SCRIPT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../scripts/docker-engine.sh');
/** The engine's ranges (apart from the other engines' of the tests), `unreachable` from the host while the test runs. */
const ENGINE_NETWORK = { bridge: 'ocmlabdf0', bip: '10.243.0.1/24', pool: '10.242.0.0/16' };
const ENGINE_RANGES = ['10.243.0.0/24', '10.242.0.0/16'];
const ANSWER = 'ok from the container';

/** A static HTTP server on :5000, built with the Go here: the image needs nothing from a registry. */
const SERVER_GO = `package main

import (
	"fmt"
	"net/http"
)

func main() {
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "${ANSWER}") })
	_ = http.ListenAndServe(":5000", nil)
}
`;

function dialFromHost(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect({ host, port, timeout: 3000 });
    s.once('connect', () => (s.destroy(), resolve('connected')));
    s.once('timeout', () => (s.destroy(), resolve('timeout')));
    s.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? String(e)));
  });
}

// The desktop engine's real-engine half without the connected world: the test's dockerd in the VM's network namespace
// (vm-link.ts), its published ports forwarded to the host's 127.0.0.1 by following its events (desktop-engine.ts), the
// host without a route to its containers. Needs root, dockerd (OCM_LAB_DOCKER=1 scripts/bootstrap.sh) and Go.
describe("the desktop engine's port forwarder on a real engine in its own network namespace", () => {
  let dir: string;
  let link: VmLink | undefined;
  let stopFollowing: (() => Promise<void>) | undefined;
  let engineEnv: NodeJS.ProcessEnv;
  let docker: (args: readonly string[]) => Promise<Ran>;
  const routesAdded: string[] = [];

  const inVm = async (file: string, args: string[]) => {
    const r = await execa('nsenter', [`--net=/proc/${link!.netnsPid}/ns/net`, '--', file, ...args], {
      env: engineEnv,
      reject: false,
      all: true,
      timeout: 300_000,
    });
    return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr), all: String(r.all) };
  };

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-desktop-follow-'));
    const src = path.join(dir, 'src');
    await fs.mkdir(src);
    await fs.writeFile(path.join(src, 'main.go'), SERVER_GO);
    await fs.writeFile(path.join(src, 'go.mod'), 'module desktopfollow\n\ngo 1.21\n');
    const root = path.join(dir, 'image');
    await fs.mkdir(root);
    await execa('go', ['build', '-o', path.join(root, 'srv'), '.'], { cwd: src, env: { ...process.env, CGO_ENABLED: '0' } });
    await execa('tar', ['-C', root, '-cf', path.join(dir, 'image.tar'), 'srv']);

    for (const range of ENGINE_RANGES) {
      await execa('ip', ['route', 'add', 'unreachable', range]);
      routesAdded.push(range);
    }
    link = await startVmLink({ dir: path.join(dir, 'vm'), outward: [] });
    engineEnv = {
      ...process.env,
      OCM_LAB_DOCKER_RUN_DIR: path.join(dir, 'run'),
      OCM_LAB_DOCKER_DATA_ROOT: path.join(dir, 'data'),
      OCM_LAB_DOCKER_BRIDGE: ENGINE_NETWORK.bridge,
      OCM_LAB_DOCKER_BIP: ENGINE_NETWORK.bip,
      OCM_LAB_DOCKER_POOL: ENGINE_NETWORK.pool,
    };
    const started = await inVm('bash', [ENGINE_SCRIPT, 'start']);
    if (started.exitCode !== 0) throw new Error(`the engine did not start in the VM: ${started.all}`);
    const dockerHost = started.stdout.trim().split('\n').pop() as string;
    docker = async (args) => {
      const r = await execa('docker', args, { env: { ...engineEnv, DOCKER_HOST: dockerHost }, reject: false, all: true, timeout: 120_000 });
      return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr), all: String(r.all) };
    };
    const imported = await docker(['import', '--change', 'ENTRYPOINT ["/srv"]', path.join(dir, 'image.tar'), 'desktop-follow:1']);
    if (imported.exitCode !== 0) throw new Error(`docker import: ${imported.all}`);
    stopFollowing = await followPublishedPorts({ dockerHost, docker }, link, () => false);
  }, 600_000);

  afterAll(async () => {
    await stopFollowing?.();
    if (link) {
      const stopped = await inVm('bash', [ENGINE_SCRIPT, 'stop', '--purge']);
      if (stopped.exitCode !== 0) console.error(`stopping the engine: ${stopped.all}`);
      await link.close();
    }
    for (const range of routesAdded) await execa('ip', ['route', 'del', 'unreachable', range]);
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  }, 300_000);

  it("a port published on the engine's 127.0.0.1 answers on the host's, a container's own address does not, from the host", async () => {
    const port = await freePort();
    const ran = await docker(['run', '-d', '--name', 'follow-a', '-p', `127.0.0.1:${port}:5000`, 'desktop-follow:1']);
    expect(ran.exitCode, ran.all).toBe(0);
    await link!.waitForwarded(port);
    expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe(ANSWER);
    const ip = (await docker(['inspect', '-f', '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}', 'follow-a'])).stdout.trim();
    expect(ip).toMatch(/^10\.243\.0\.\d+$/);
    const route = await execa('ip', ['route', 'get', ip], { reject: false, all: true });
    expect(route.all).toMatch(/No route to host/);
    expect(await dialFromHost(ip, 5000)).toBe('EHOSTUNREACH');
    // There it answers: only the host is without a route.
    const inside = await inVm('curl', ['-fsS', '--max-time', '5', `http://${ip}:5000/`]);
    expect(inside.stdout, inside.all).toBe(ANSWER);
  });

  it('a port published on every address is forwarded too; each goes when its container dies, and a restart brings it back', async () => {
    const port = await freePort();
    expect((await docker(['run', '-d', '--name', 'follow-b', '-p', `${port}:5000`, 'desktop-follow:1'])).exitCode).toBe(0);
    await link!.waitForwarded(port);
    expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe(ANSWER);
    expect((await docker(['stop', '-t', '1', 'follow-b'])).exitCode).toBe(0);
    for (let i = 0; i < 50 && link!.forwarded().includes(port); i++) await new Promise((r) => setTimeout(r, 100));
    expect(link!.forwarded()).not.toContain(port);
    expect(await dialFromHost('127.0.0.1', port)).toBe('ECONNREFUSED');
    expect((await docker(['start', 'follow-b'])).exitCode).toBe(0);
    await link!.waitForwarded(port);
    expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe(ANSWER);
    await docker(['rm', '-f', 'follow-a', 'follow-b']);
    for (let i = 0; i < 50 && link!.forwarded().length; i++) await new Promise((r) => setTimeout(r, 100));
    expect(link!.forwarded()).toEqual([]);
    expect(link!.problems).toEqual([]);
  });
});
