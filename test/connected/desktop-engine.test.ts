import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PUBLISHED_OCM_LAB_IMAGE } from '../../src/addons/dev/scaffold.js';
import { labKubeconfigFile } from '../../src/paths.js';
import { goArch } from '../../src/provision/platform.js';
import { startDesktopEngine, type DesktopEngine } from '../support/connected-world/desktop-engine.js';
import { startConnectedWorld, type ConnectedWorld } from '../support/connected-world/index.js';
import { kindDownloads, kindUser, leftOfLab, publishOcmLabImage, type EngineNetwork, type KindUser } from '../support/connected-world/kind.js';
import type { WorldAddresses } from '../support/connected-world/names.js';
import { npmRegistryRoutes } from '../support/connected-world/npm.js';
import { freePort } from '../support/connected-world/registry.js';
import { raiseKindSysctls } from '../support/kind-sysctls.js';
import { finishedSteps } from '../support/up-steps.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DEFAULT_LAB = path.join(REPO, 'examples/default-lab.yaml');
/** Unique on the machine: the lab's Docker networks and kind clusters carry it. */
const LAB_NAME = 'conndesk';
/** Its own loopback addresses and engine ranges: other connected worlds may run beside it. */
const ADDRESSES: WorldAddresses = { registry: '127.0.79.1', files: '127.0.79.2' };
const ENGINE_NETWORK: EngineNetwork = { bridge: 'ocmlabdd0', bip: '10.239.0.1/24', pool: '10.238.0.0/16' };
const ADDON = 'demo';
const ADDON_IMAGE = `${ADDON}:dev`;

/** A TCP dial from this (the host's) network namespace: 'connected', or the error's code ('EHOSTUNREACH', 'timeout', …). */
function dialFromHost(host: string, port: number, timeoutMs = 3000): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect({ host, port, timeout: timeoutMs });
    s.once('connect', () => {
      s.destroy();
      resolve('connected');
    });
    s.once('timeout', () => {
      s.destroy();
      resolve('timeout');
    });
    s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? String(err)));
  });
}

interface Pod {
  metadata: { name: string };
  spec: { containers: { image: string }[] };
  status: { containerStatuses?: { ready: boolean }[] };
}

// Issue 38 item 3: the whole journey on an engine like Docker Desktop's. The engine runs in a network namespace of its
// own (the "VM"); the host reaches it through its socket and the ports it publishes, forwarded to the host's 127.0.0.1 by
// a forwarder that follows its events; the host has no route to any container. As the docker-group user, with no Go,
// from the packed tarball.
describe('an engine like Docker Desktop’s: the kind runtime from the packed tarball, every host-side dial to 127.0.0.1', () => {
  let world: ConnectedWorld | undefined;
  let engine: DesktopEngine | undefined;
  let scratch: string;
  let user: KindUser;
  let tarball: string;
  let labFile: string;
  let installedBin: string | undefined;
  let restoreSysctls: (() => Promise<void>) | undefined;
  const figures: string[] = [];

  beforeAll(async () => {
    restoreSysctls = await raiseKindSysctls();
    scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-connected-desktop-'));
    const packed = (await execa('npm', ['pack', '--silent', '--pack-destination', scratch], { cwd: REPO })).stdout.trim().split('\n').pop() as string;
    tarball = path.join(scratch, packed);
    await fs.chmod(tarball, 0o644);
    const npmCache = path.join((await execa('npm', ['config', 'get', 'cache'])).stdout.trim(), '_cacache');
    let download: { url: string; sha256: string } | undefined;
    world = await startConnectedWorld({
      addresses: ADDRESSES,
      routes: async (routes, dir) => {
        download = await kindDownloads(routes, dir);
        await npmRegistryRoutes(routes, path.join(REPO, 'package-lock.json'), npmCache);
      },
    });
    engine = await startDesktopEngine(world, { kindDownload: download as { url: string; sha256: string }, network: ENGINE_NETWORK, addresses: ADDRESSES });
    // ghcr.io serves ocm-lab's image built from this checkout: the addon's Dockerfile builds FROM it.
    await publishOcmLabImage(world, engine, { name: PUBLISHED_OCM_LAB_IMAGE, packageRoot: REPO });
    user = await kindUser(world, engine, scratch);
    labFile = path.join(user.dirs.home, 'lab.yaml');
    const lab = (await fs.readFile(DEFAULT_LAB, 'utf8')).replace(/^name: default$/m, `name: ${LAB_NAME}`);
    await fs.writeFile(labFile, lab, { mode: 0o644 });
  }, 2_400_000);

  afterAll(async () => {
    try {
      if (user) {
        await ocmLab(['down', '--config', labFile]).catch(() => undefined);
        await ocmLab(['registry', 'rm']).catch(() => undefined);
      }
    } finally {
      // The forwarder, the engine (its containers, networks, data root), the VM side, the host routes, the namespace.
      await engine?.stop().catch((err: unknown) => console.error(`stopping the desktop engine: ${String(err)}`));
      await world?.close().catch((err: unknown) => console.error(`closing the connected world: ${String(err)}`));
      await restoreSysctls?.();
      if (scratch) await fs.rm(scratch, { recursive: true, force: true });
      if (figures.length) console.log(`desktop engine journey figures:\n  ${figures.join('\n  ')}`);
    }
  }, 900_000);

  async function ocmLab(args: string[], timeout?: number, env?: Record<string, string>) {
    if (installedBin) return user.run(installedBin, args, { timeout, env });
    return user.run(path.join(user.dirs.bin, 'node'), [path.join(REPO, 'dist/cli/main.js'), ...args], { timeout, env });
  }

  async function timed<T>(what: string, step: () => Promise<T>): Promise<T> {
    const started = Date.now();
    try {
      return await step();
    } finally {
      figures.push(`${what}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
    }
  }

  /** The ocm-lab bin `npx` installed in the user's npm cache. */
  async function installedOcmLab(): Promise<string | undefined> {
    const npx = path.join(user.dirs.npmCache, '_npx');
    for (const entry of await fs.readdir(npx).catch(() => [] as string[])) {
      const bin = path.join(npx, entry, 'node_modules', '.bin', 'ocm-lab');
      if (
        await fs.stat(bin).then(
          () => true,
          () => false,
        )
      )
        return bin;
    }
    return undefined;
  }

  async function findUnder(dir: string, name: string): Promise<string | undefined> {
    const entries = await fs.readdir(dir, { recursive: true }).catch(() => [] as string[]);
    const hit = entries.find((e) => path.basename(e) === name);
    return hit ? path.join(dir, hit) : undefined;
  }

  /** kubectl as the user (the one ocm-lab provisioned), against the lab's kubeconfig: its servers are 127.0.0.1:<published port>. */
  async function kubectl(args: string[]) {
    const bin = await findUnder(path.join(user.dirs.cache, 'bin'), 'kubectl');
    expect(bin, `no kubectl under ${user.dirs.cache}/bin`).toBeDefined();
    return user.run(bin as string, ['--kubeconfig', labKubeconfigFile(LAB_NAME, { OCM_LAB_HOME: user.dirs.home }), ...args]);
  }

  it('the host has no route to a container of the engine; what it publishes answers on the host’s 127.0.0.1', { timeout: 600_000 }, async () => {
    const port = await freePort();
    const ran = await engine!.docker(['run', '-d', '--name', 'desktop-probe', '-p', `127.0.0.1:${port}:5000`, 'registry:2']);
    expect(ran.exitCode, ran.all).toBe(0);
    try {
      const ip = (await engine!.docker(['inspect', '-f', '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}', 'desktop-probe'])).stdout.trim();
      expect(ip).toMatch(/^10\.239\.0\.\d+$/);
      const route = await execa('ip', ['route', 'get', ip], { reject: false, all: true });
      expect(route.exitCode, route.all).not.toBe(0); // "RTNETLINK answers: No route to host"
      expect(await dialFromHost(ip, 5000)).toMatch(/^(EHOSTUNREACH|ENETUNREACH|timeout)$/);
      // The container answers where it is: from inside the engine's namespace.
      const inside = await execa(
        'nsenter',
        [`--net=/proc/${engine!.netnsPid}/ns/net`, '--', 'curl', '-fsS', '-o', '/dev/null', '-w', '%{http_code}', `http://${ip}:5000/v2/`],
        {
          reject: false,
          all: true,
        },
      );
      expect(inside.stdout, inside.all).toBe('200');
      await engine!.waitForwarded(port);
      const through = await fetch(`http://127.0.0.1:${port}/v2/`);
      expect(through.status).toBe(200);
    } finally {
      await engine!.docker(['rm', '-f', 'desktop-probe']);
    }
    // The forwarder follows the die event: the host's listener goes with the container.
    for (let i = 0; i < 50 && engine!.forwarded().includes(port); i++) await new Promise((r) => setTimeout(r, 100));
    expect(engine!.forwarded()).not.toContain(port);
    expect(await dialFromHost('127.0.0.1', port)).toBe('ECONNREFUSED');
    expect(engine!.problems).toEqual([]);
  });

  it("the plan reads the cgroup version and architecture from the engine, the host's platform from the host", { timeout: 600_000 }, async () => {
    // The host claims arm64 (the platform seam); the engine answers amd64: host binaries follow the host, the lab the engine.
    const planned = await ocmLab(['up', '--config', labFile, '--runtime', 'kind', '--dry-run', '-o', 'json'], undefined, {
      OCM_LAB_HOST_PLATFORM: 'linux/arm64',
    });
    expect(planned.exitCode, planned.all).toBe(0);
    const engineInfo = await engine!.docker(['info', '--format', '{{.CgroupVersion}} {{.Architecture}}']);
    const [cgroup, arch] = engineInfo.stdout.trim().split(' ');
    const plan = JSON.parse(planned.stdout) as {
      artifacts: {
        facts: {
          platform: string;
          engine: { available: boolean };
          cgroupVersion: { value: string; from: string };
          architecture: { value: string; from: string };
        };
        artifacts: { artifact: string; url?: string }[];
      };
    };
    const { facts, artifacts } = plan.artifacts;
    expect(facts.engine.available).toBe(true);
    expect(facts.platform).toBe('linux/arm64');
    expect(facts.cgroupVersion).toEqual({ value: cgroup, from: 'engine' });
    expect(facts.architecture).toEqual({ value: goArch(arch), from: 'engine' });
    expect(artifacts.find((a) => a.artifact === 'kubectl')?.url).toMatch(/\/bin\/linux\/arm64\/kubectl$/);
  });

  it(
    'the whole journey: npx up, status, proxy health, proxy kubectl, conformance, addon new + dev --image, registry push + a pod of it on cluster1, down leaves nothing',
    { timeout: 7_200_000 },
    async () => {
      const up = await timed('npx --package <tarball> ocm-lab up (install and cold up)', () =>
        user.run('npx', ['--yes', '--package', tarball, '--', 'ocm-lab', 'up', '--config', labFile]),
      );
      installedBin = await installedOcmLab();
      expect(installedBin, `npx installed no ocm-lab bin under ${user.dirs.npmCache}/_npx: ${up.all}`).toBeDefined();
      expect(up.exitCode, up.all).toBe(0);
      expect(up.all).toMatch(/runtime: kind/);
      expect(up.all).toMatch(/artifacts: official/);
      console.log(`desktop engine journey, the cold up's steps:\n  ${finishedSteps(up.all).join('\n  ')}`);
      try {
        // The hub's node has an address the host cannot dial; its API server answers only through 127.0.0.1.
        const hubNode = (await engine!.docker(['ps', '--filter', `label=io.x-k8s.kind.cluster`, '--format', '{{.Names}}'])).stdout
          .split('\n')
          .find((n) => /hub/.test(n) && /control-plane/.test(n));
        expect(hubNode, 'no hub node container').toBeDefined();
        const hubIps = (await engine!.docker(['inspect', '-f', '{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}', hubNode as string])).stdout
          .trim()
          .split(/\s+/);
        for (const ip of hubIps) {
          expect(ip).toMatch(/^10\.238\.\d+\.\d+$/);
          expect(await dialFromHost(ip, 6443), `a dial from the host to the hub node's ${ip}:6443`).toMatch(/^(EHOSTUNREACH|ENETUNREACH|timeout)$/);
        }
        const kubeconfig = await fs.readFile(labKubeconfigFile(LAB_NAME, { OCM_LAB_HOME: user.dirs.home }), 'utf8');
        const servers = [...kubeconfig.matchAll(/server: (\S+)/g)].map((m) => m[1]);
        expect(servers.length).toBeGreaterThan(0);
        for (const s of servers) expect(s).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);

        const status = await timed('status', () => ocmLab(['status', '--config', labFile]));
        expect(status.exitCode, status.all).toBe(0);
        const health = await timed('proxy health', () => ocmLab(['proxy', 'health', '--config', labFile]));
        expect(health.exitCode, health.all).toBe(0);
        expect(health.all).toMatch(/cluster1/);

        const msa = [
          'apiVersion: authentication.open-cluster-management.io/v1beta1',
          'kind: ManagedServiceAccount',
          'metadata: { name: journey, namespace: cluster1 }',
          'spec: { rotation: {} }',
        ].join('\n');
        const msaFile = path.join(user.dirs.home, 'msa.yaml');
        await fs.writeFile(msaFile, msa, { mode: 0o644 });
        const applied = await kubectl(['--context', 'hub', 'apply', '-f', msaFile]);
        expect(applied.exitCode, applied.all).toBe(0);
        const reported = await kubectl([
          '--context',
          'hub',
          '-n',
          'cluster1',
          'wait',
          'managedserviceaccount/journey',
          '--for=condition=TokenReported',
          '--timeout=120s',
        ]);
        expect(reported.exitCode, reported.all).toBe(0);
        const proxied = await timed('proxy kubectl --cluster cluster1 -- get --raw /version', () =>
          ocmLab(['proxy', 'kubectl', '--config', labFile, '--cluster', 'cluster1', '--sa', 'journey', '--', 'get', '--raw', '/version']),
        );
        expect(proxied.exitCode, proxied.all).toBe(0);
        expect(proxied.stdout).toMatch(/"gitVersion"/);

        const conformance = await timed('conformance (every document)', () => ocmLab(['conformance', '--config', labFile], 3_600_000));
        expect(conformance.exitCode, conformance.all).toBe(0);

        const project = path.join(user.dirs.home, ADDON);
        const made = await ocmLab(['addon', 'new', ADDON, project]);
        expect(made.exitCode, made.all).toBe(0);
        const built = await timed(`docker build -t ${ADDON_IMAGE} (FROM ${PUBLISHED_OCM_LAB_IMAGE})`, () =>
          user.run('docker', ['build', '-q', '-t', ADDON_IMAGE, project], { timeout: 1_200_000 }),
        );
        expect(built.exitCode, built.all).toBe(0);
        const pushed = await timed(`registry push ${ADDON_IMAGE}`, () => ocmLab(['registry', 'push', ADDON_IMAGE]));
        expect(pushed.exitCode, pushed.all).toBe(0);
        const dev = await timed(`addon dev --once --image ${ADDON_IMAGE}`, () =>
          ocmLab(['addon', 'dev', project, '--once', '--image', ADDON_IMAGE, '--config', labFile]),
        );
        expect(dev.exitCode, dev.all).toBe(0);
        // The agent on cluster1 runs the pushed image, pulled from the lab's registry.
        let pods: Pod[] = [];
        for (let i = 0; i < 60; i++) {
          const got = await kubectl(['--context', 'cluster1', '-n', `${ADDON}-agent`, 'get', 'pods', '-l', `app=${ADDON}-agent`, '-o', 'json']);
          pods = got.exitCode === 0 ? (JSON.parse(got.stdout) as { items: Pod[] }).items : [];
          if (pods.length && pods.every((p) => p.status.containerStatuses?.[0]?.ready)) break;
          await new Promise((r) => setTimeout(r, 2000));
        }
        expect(pods.length, 'no agent pod on cluster1').toBeGreaterThan(0);
        for (const pod of pods) {
          expect(pod.spec.containers[0]?.image, pod.metadata.name).toBe(ADDON_IMAGE);
          expect(pod.status.containerStatuses?.[0]?.ready, `${pod.metadata.name}: ${JSON.stringify(pod.status)}`).toBe(true);
        }
      } finally {
        const down = await timed('down', () => ocmLab(['down', '--config', labFile]));
        expect(down.exitCode, down.all).toBe(0);
        expect(await leftOfLab(engine!, LAB_NAME)).toEqual({ containers: '', kindNodes: '', networks: '' });
      }
      // The registry stays after down by design (the machine's image cache); with it gone, nothing is forwarded.
      const rm = await ocmLab(['registry', 'rm']);
      expect(rm.exitCode, rm.all).toBe(0);
      expect((await engine!.docker(['ps', '-a', '--format', '{{.Names}}'])).stdout.trim()).toBe('');
      for (let i = 0; i < 50 && engine!.forwarded().length; i++) await new Promise((r) => setTimeout(r, 100));
      expect(engine!.forwarded()).toEqual([]);
      expect(engine!.problems).toEqual([]);
    },
  );
});
