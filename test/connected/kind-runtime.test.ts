import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cacheDir } from '../../src/paths.js';
import {
  emptyEngine,
  KIND_USER_UID,
  kindDownloads,
  kindUser,
  leftOfLab,
  linkBuiltCache,
  SERVED_NODE_BASE,
  startKindWorld,
  type EngineNetwork,
  type KindUser,
  type KindWorld,
} from '../support/connected-world/kind.js';
import { startConnectedWorld, type ConnectedWorld } from '../support/connected-world/index.js';
import type { WorldAddresses } from '../support/connected-world/names.js';
import { npmRegistryRoutes } from '../support/connected-world/npm.js';
import { raiseKindSysctls } from '../support/kind-sysctls.js';
import { finishedSteps } from '../support/up-steps.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DEFAULT_LAB = path.join(REPO, 'examples/default-lab.yaml');
/** Unique on the machine: the lab's Docker networks and kind clusters carry it. */
const LAB_NAME = 'connkind';
/** Its own loopback addresses and engine network: another connected world (the Action's test) may run beside it. */
const ADDRESSES: WorldAddresses = { registry: '127.0.78.1', files: '127.0.78.2' };
const ENGINE_NETWORK: EngineNetwork = { bridge: 'ocmlabcr0', bip: '10.237.0.1/24', pool: '10.236.0.0/16' };

// Issue 25, "Done means": the kind runtime on the connected path, in the simulated connected world, as a user in the
// docker group, with no Go on PATH, from an empty cache: `npx <the packed tarball> up`; then, with nothing answering, the
// same `up` builds here from a cache holding the built images.
describe('the kind runtime in a simulated connected world, from the packed tarball', () => {
  let world: ConnectedWorld | undefined;
  let kind: KindWorld | undefined;
  let scratch: string;
  let user: KindUser;
  let tarball: string;
  let labFile: string;
  /** The ocm-lab bin `npx` installed (found after the first `up`). */
  let installedBin: string | undefined;
  let restoreSysctls: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    restoreSysctls = await raiseKindSysctls();
    scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-connected-kind-'));
    // The package as npm publishes it (prepack compiles dist/), and npm's cache of its dependencies' tarballs.
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
    kind = await startKindWorld(world, { kindDownload: download as { url: string; sha256: string }, network: ENGINE_NETWORK });
    user = await kindUser(world, kind, scratch);
    labFile = path.join(user.dirs.home, 'lab.yaml');
    const lab = (await fs.readFile(DEFAULT_LAB, 'utf8'))
      .replace(/^name: default$/m, `name: ${LAB_NAME}`)
      .replace(/^kubernetesVersion: .*$/m, 'kubernetesVersion: v1.37');
    await fs.writeFile(labFile, lab, { mode: 0o644 });
  }, 1_800_000);

  afterAll(async () => {
    try {
      if (user) await ocmLab(['down', '--config', labFile]).catch(() => undefined);
    } finally {
      await kind?.stop().catch((err: unknown) => console.error(`stopping the kind world's Docker engine: ${String(err)}`));
      await world?.close().catch((err: unknown) => console.error(`closing the connected world: ${String(err)}`));
      await restoreSysctls?.();
      if (scratch) await fs.rm(scratch, { recursive: true, force: true });
    }
  }, 900_000);

  /** The installed `ocm-lab` after `npx` put it in the user's npm cache; before that (a failed install), the repository's build. */
  async function ocmLab(args: string[], cache?: string) {
    if (installedBin) return user.run(installedBin, args, { cache });
    return user.run(path.join(user.dirs.bin, 'node'), [path.join(REPO, 'dist/cli/main.js'), ...args], { cache });
  }

  async function findInstalledBin(): Promise<string | undefined> {
    const npx = path.join(user.dirs.npmCache, '_npx');
    const bins = (await fs.readdir(npx).catch(() => [])).map((entry) => path.join(npx, entry, 'node_modules', '.bin', 'ocm-lab'));
    const found = await Promise.all(
      bins.map((bin) =>
        fs.stat(bin).then(
          () => bin,
          () => undefined,
        ),
      ),
    );
    return found.find((bin) => bin !== undefined);
  }

  const nothingLeft = { containers: '', kindNodes: '', networks: '' };

  it(
    '`npx --package <tarball> ocm-lab up` picks kind and official artifacts, the default lab comes up with every addon Available, conformance passes, down leaves nothing',
    { timeout: 5_400_000 },
    async () => {
      const started = Date.now();
      const up = await user.run('npx', ['--yes', '--package', tarball, '--', 'ocm-lab', 'up', '--config', labFile]);
      const upSeconds = (Date.now() - started) / 1000;
      installedBin = await findInstalledBin();
      expect(installedBin, `npx installed no ocm-lab bin under ${user.dirs.npmCache}/_npx: ${up.all}`).toBeDefined();
      expect(up.exitCode, up.all).toBe(0);
      expect(up.all).toMatch(/runtime: kind/);
      expect(up.all).toMatch(/artifacts: official/);
      // Nothing of OCM was built: no Go was on PATH, and the cache holds no OCM binaries (their images were copied).
      expect(await fs.readdir(path.join(user.dirs.cache, 'bin')).catch(() => [])).not.toContainEqual(expect.stringMatching(/^ocm-/));
      const images = (await kind!.docker(['image', 'ls', '--format', '{{.Repository}}:{{.Tag}}'])).stdout;
      expect(images).toMatch(/^kindest\/node:/m);
      expect(images).not.toMatch(/^quay\.io\/open-cluster-management\//m);

      console.log(
        `connected kind runtime from the packed tarball: npx install and cold up ${upSeconds.toFixed(1)} s; its steps:\n  ${finishedSteps(up.all).join('\n  ')}`,
      );
      try {
        const conformance = await ocmLab(['conformance', '--config', labFile]);
        expect(conformance.exitCode, conformance.all).toBe(0);
      } finally {
        const down = await ocmLab(['down', '--config', labFile]);
        expect(down.exitCode, down.all).toBe(0);
        expect(await leftOfLab(kind!, LAB_NAME)).toEqual(nothingLeft);
      }
    },
  );

  it(
    'with the fixture stopped (nothing answers), up says it builds here and does: the built images from a cache that holds them',
    { timeout: 3_600_000 },
    async () => {
      // The engine as new: the official run's images and the image registry gone, so nothing pulled before is reused.
      await emptyEngine(kind!);
      const builtCache = path.join(scratch, 'cache-built');
      await linkBuiltCache(cacheDir(), builtCache, { uid: KIND_USER_UID, gid: kind!.socketGid });
      await world!.stop();
      try {
        const started = Date.now();
        const up = await ocmLab(['up', '--config', labFile], builtCache);
        const upSeconds = (Date.now() - started) / 1000;
        expect(up.exitCode, up.all).toBe(0);
        expect(up.all.match(/^artifacts: .*$/gm), up.all).toEqual([expect.stringMatching(/^artifacts: built here \([^)]*did not answer: [^)]+\)$/)]);
        const images = (await kind!.docker(['image', 'ls', '--format', '{{.Repository}}:{{.Tag}}'])).stdout;
        expect(images).toMatch(/^ocm-lab\/kind-node:v1\.37\.\d+$/m);
        expect(images).not.toMatch(/^kindest\/node:/m);
        console.log(`kind runtime with nothing answering: up built here (images from the cache's tarballs) ${upSeconds.toFixed(1)} s`);

        const down = await ocmLab(['down', '--config', labFile], builtCache);
        expect(down.exitCode, down.all).toBe(0);
        expect(await leftOfLab(kind!, LAB_NAME)).toEqual(nothingLeft);
      } finally {
        await world!.start();
      }
    },
  );

  it(`the ${SERVED_NODE_BASE} it serves holds the Node.js line its tag names`, { timeout: 600_000 }, async () => {
    // The stand-in is built from the node that ran setup: under the machine's Node 20 it once held v20 under a Node 24 name.
    const line = /^node:(\d+)-/.exec(SERVED_NODE_BASE)?.[1];
    expect(line, SERVED_NODE_BASE).toBeDefined();
    const pulled = await kind!.docker(['pull', '-q', SERVED_NODE_BASE]);
    expect(pulled.exitCode, pulled.all).toBe(0);
    try {
      const version = await kind!.docker(['run', '--rm', '--network', 'none', SERVED_NODE_BASE, 'node', '--version']);
      expect(version.exitCode, version.all).toBe(0);
      expect(version.stdout.trim()).toMatch(new RegExp(`^v${line}\\.\\d+\\.\\d+$`));
    } finally {
      await kind!.docker(['rmi', SERVED_NODE_BASE]);
    }
  });
});
