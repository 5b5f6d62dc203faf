import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kindDownloads, raiseKindSysctls, startKindWorld, type KindWorld } from '../support/connected-world/kind.js';
import { startConnectedWorld, type ConnectedWorld } from '../support/connected-world/index.js';

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/cli/main.js');
const DEFAULT_LAB = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../examples/default-lab.yaml');
/** Unique on the machine: the lab's Docker networks and kind clusters carry it. */
const LAB_NAME = 'connkind';
/** A uid no account has: the CLI runs as a plain user whose only privilege is the Docker socket's group. */
const USER_UID = 47913;

// Issue 25, "Done means": the kind runtime on the connected path, in the simulated connected world, as a user in the
// docker group, with no Go on PATH, from an empty cache.
describe('the kind runtime in a simulated connected world', () => {
  let world: ConnectedWorld | undefined;
  let kind: KindWorld | undefined;
  let scratch: string;
  let dirs: { cache: string; home: string; node: string; ca: string; mirrors: string; labFile: string };
  let restoreSysctls: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    restoreSysctls = await raiseKindSysctls();
    scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-connected-kind-'));
    await fs.chmod(scratch, 0o755);
    let download: { url: string; sha256: string } | undefined;
    world = await startConnectedWorld({ routes: async (routes, dir) => void (download = await kindDownloads(routes, dir)) });
    kind = await startKindWorld(world, { kindDownload: download as { url: string; sha256: string } });
    // Everything the user reads is copied where it can read it (the fixture's directory is root's); its own dirs are its own.
    dirs = {
      cache: path.join(scratch, 'cache'),
      home: path.join(scratch, 'home'),
      node: path.join(scratch, 'node'),
      ca: path.join(scratch, 'ca.pem'),
      mirrors: path.join(scratch, 'mirrors.yaml'),
      labFile: path.join(scratch, 'home', 'lab.yaml'),
    };
    for (const d of [dirs.cache, dirs.home]) {
      await fs.mkdir(d, { recursive: true });
      await fs.chown(d, USER_UID, kind.socketGid);
    }
    await fs.copyFile(process.execPath, dirs.node);
    await fs.chmod(dirs.node, 0o755);
    await fs.copyFile(world.caFile, dirs.ca);
    await fs.copyFile(world.mirrorsFile, dirs.mirrors);
    for (const f of [dirs.ca, dirs.mirrors]) await fs.chmod(f, 0o644);
    const lab = (await fs.readFile(DEFAULT_LAB, 'utf8'))
      .replace(/^name: default$/m, `name: ${LAB_NAME}`)
      .replace(/^kubernetesVersion: .*$/m, 'kubernetesVersion: v1.37');
    await fs.writeFile(dirs.labFile, lab, { mode: 0o644 });
  }, 1_800_000);

  afterAll(async () => {
    try {
      if (kind && world) await cli(['down', '--config', dirs.labFile]).catch(() => undefined);
    } finally {
      await kind?.stop().catch((err: unknown) => console.error(`stopping the kind world's Docker engine: ${String(err)}`));
      await world?.close().catch((err: unknown) => console.error(`closing the connected world: ${String(err)}`));
      await restoreSysctls?.();
      if (scratch) await fs.rm(scratch, { recursive: true, force: true });
    }
  }, 900_000);

  /** `ocm-lab <args>` inside the namespace as USER_UID in the socket's group only, no Go on PATH, its own empty cache. */
  async function cli(args: string[], timeout = 2_400_000) {
    const env = await world!.env({
      HOME: dirs.home,
      OCM_LAB_HOME: dirs.home,
      OCM_LAB_CACHE_DIR: dirs.cache,
      OCM_LAB_RUNTIME: 'kind',
      DOCKER_HOST: kind!.dockerHost,
      NODE_EXTRA_CA_CERTS: dirs.ca,
      SSL_CERT_FILE: dirs.ca,
      OCM_LAB_MIRRORS: dirs.mirrors,
    });
    const user = ['--reuid', String(USER_UID), '--regid', String(kind!.socketGid), '--clear-groups'];
    return world!.run('setpriv', [...user, dirs.node, CLI, ...args], { env, timeout });
  }

  it(
    'up picks kind and official artifacts, the default lab comes up with every addon Available, conformance passes, down leaves nothing',
    { timeout: 5_400_000 },
    async () => {
      const started = Date.now();
      const up = await cli(['up', '--runtime', 'kind', '--config', dirs.labFile]);
      const upSeconds = (Date.now() - started) / 1000;
      expect(up.exitCode, up.all).toBe(0);
      expect(up.all).toMatch(/artifacts: official/);
      // Nothing of OCM was built: no Go was on PATH, and the cache holds no OCM binaries (their images were copied).
      expect(await fs.readdir(path.join(dirs.cache, 'bin')).catch(() => [])).not.toContainEqual(expect.stringMatching(/^ocm-/));
      const images = (await kind!.docker(['image', 'ls', '--format', '{{.Repository}}:{{.Tag}}'])).stdout;
      expect(images).toMatch(/^kindest\/node:/m);
      expect(images).not.toMatch(/^quay\.io\/open-cluster-management\//m);

      const conformance = await cli(['conformance', '--config', dirs.labFile]);
      expect(conformance.exitCode, conformance.all).toBe(0);
      console.log(`connected kind runtime: cold up ${upSeconds.toFixed(1)} s`);

      const down = await cli(['down', '--config', dirs.labFile]);
      expect(down.exitCode, down.all).toBe(0);
      const left = await kind!.docker(['ps', '-a', '--filter', `label=dev.ocm-lab.lab=${LAB_NAME}`, '--format', '{{.Names}}']);
      const nodes = await kind!.docker(['ps', '-a', '--filter', 'label=io.x-k8s.kind.cluster', '--format', '{{.Names}}']);
      const networks = await kind!.docker(['network', 'ls', '--filter', `label=dev.ocm-lab.lab=${LAB_NAME}`, '--format', '{{.Name}}']);
      expect({ containers: left.stdout.trim(), kindNodes: nodes.stdout.trim(), networks: networks.stdout.trim() }).toEqual({
        containers: '',
        kindNodes: '',
        networks: '',
      });
    },
  );
});
