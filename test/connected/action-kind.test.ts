import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PUBLISHED_OCM_LAB_IMAGE } from '../../src/addons/dev/scaffold.js';
import { ensureBinaries } from '../../src/provision/index.js';
import { actionRepository, actionUses, unreachableActions, withoutGithubActions } from '../support/act.js';
import { kindDownloads, publishOcmLabImage, startKindWorld, type KindWorld } from '../support/connected-world/kind.js';
import { startConnectedWorld, type ConnectedWorld } from '../support/connected-world/index.js';
import { npmRegistryRoutes } from '../support/connected-world/npm.js';
import { raiseKindSysctls } from '../support/kind-sysctls.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CLI = path.join(ROOT, 'dist', 'cli', 'main.js');
/** Unique on the machine: the lab's Docker networks and kind clusters carry it. */
const LAB_NAME = 'actkind';
/** A uid no account has: act and every step run as a plain user whose only privilege is the Docker socket's group. */
const USER_UID = 47914;
const ADDON = 'demo';
const ADDON_IMAGE = `${ADDON}:ci`;

/** A step the test adds before the workflow's Down: what ran where, kept for the checks after down removed the lab. */
const EVIDENCE_STEP = [
  '      - name: Evidence for the test',
  '        if: always()',
  '        run: |',
  `          kubectl --context cluster1 -n ${ADDON}-agent get pods -l app=${ADDON}-agent -o json >"$KEEP_RESULTS/agent-pods.json"`,
  `          kubectl --context hub get pods -A -l ocm-lab.io/dev-addon=${ADDON} -o json >"$KEEP_RESULTS/manager-pods.json"`,
  `          docker image inspect ${ADDON_IMAGE} >"$KEEP_RESULTS/image.json"`,
  '          ocm-lab registry -o json >"$KEEP_RESULTS/registry.json"',
  '          cp -r "$RUNNER_TEMP/ocm-lab/results/." "$KEEP_RESULTS/"',
].join('\n');

interface Pod {
  metadata: { name: string };
  spec: { containers: { image: string }[] };
  status: { containerStatuses?: { image: string; imageID: string; ready: boolean }[] };
}

const MANIFEST_TYPES = ['application/vnd.docker.distribution.manifest.v2+json', 'application/vnd.oci.image.manifest.v1+json'];

// Issue 27, "Done means": `ocm-lab addon new demo`'s workflow and this repository's conformance cell, run by act as the
// runner user on the kind runtime (the action's default), beside the test's own Docker engine in the simulated connected world.
describe('the ocm-lab action on kind, run by act in a simulated connected world', () => {
  let world: ConnectedWorld | undefined;
  let kind: KindWorld | undefined;
  let scratch: string;
  let shared: { bin: string; ca: string; mirrors: string; labFile: string };
  const used: { home: string; cache: string; labFile: string }[] = [];
  let restoreSysctls: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    restoreSysctls = await raiseKindSysctls();
    const { act } = await ensureBinaries(['act'], { onProgress: (line) => process.stderr.write(`provision: ${line}\n`) });
    scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-action-kind-'));
    await fs.chmod(scratch, 0o755);
    let download: { url: string; sha256: string } | undefined;
    // The world answers as registry.npmjs.org too: the workflows' npm ci gets the lock file's packages from npm's cache here.
    const npmCache = path.join((await execa('npm', ['config', 'get', 'cache'])).stdout.trim(), '_cacache');
    world = await startConnectedWorld({
      routes: async (routes, dir) => {
        download = await kindDownloads(routes, dir);
        await npmRegistryRoutes(routes, path.join(ROOT, 'package-lock.json'), npmCache);
      },
    });
    kind = await startKindWorld(world, { kindDownload: download as { url: string; sha256: string } });
    // What the user runs or reads is copied where it can (root's cache and the fixture's directory are root's).
    shared = {
      bin: path.join(scratch, 'bin'),
      ca: path.join(scratch, 'ca.pem'),
      mirrors: path.join(scratch, 'mirrors.yaml'),
      labFile: path.join(scratch, 'lab.yaml'),
    };
    await fs.mkdir(shared.bin);
    await fs.copyFile(process.execPath, path.join(shared.bin, 'node'));
    await fs.copyFile(act, path.join(shared.bin, 'act'));
    for (const f of ['node', 'act']) await fs.chmod(path.join(shared.bin, f), 0o755);
    await fs.copyFile(world.caFile, shared.ca);
    await fs.copyFile(world.mirrorsFile, shared.mirrors);
    const lab = (await fs.readFile(path.join(ROOT, 'examples', 'default-lab.yaml'), 'utf8'))
      .replace(/^name: default$/m, `name: ${LAB_NAME}`)
      .replace(/^kubernetesVersion: .*$/m, 'kubernetesVersion: v1.37');
    await fs.writeFile(shared.labFile, lab);
    for (const f of [shared.ca, shared.mirrors, shared.labFile]) await fs.chmod(f, 0o644);
  }, 2_400_000);

  afterAll(async () => {
    try {
      // The workflows' down steps remove their labs; after a failure this does. Stopping the engine removes the rest.
      for (const u of used) await asUser(u, [path.join(shared.bin, 'node'), CLI, '--config', u.labFile, 'down'], 900_000).catch(() => undefined);
    } finally {
      await kind?.stop().catch((err: unknown) => console.error(`stopping the kind world's Docker engine: ${String(err)}`));
      await world?.close().catch((err: unknown) => console.error(`closing the connected world: ${String(err)}`));
      await restoreSysctls?.();
      if (scratch) await fs.rm(scratch, { recursive: true, force: true });
    }
  }, 1_200_000);

  /** Folders of the runner user's own: its home, ocm-lab's labs and cache, act's cache, the results the workflow keeps. */
  async function userDirs(name: string, labFile: string) {
    const base = path.join(scratch, name);
    const dirs = { home: path.join(base, 'home'), cache: path.join(base, 'cache'), xdg: path.join(base, 'xdg-cache'), results: path.join(base, 'results') };
    for (const d of Object.values(dirs)) {
      await fs.mkdir(d, { recursive: true });
      await fs.chown(d, USER_UID, (kind as KindWorld).socketGid);
    }
    const u = { ...dirs, labFile };
    used.push(u);
    return u;
  }

  /** `file args` inside the world's namespace as USER_UID in the socket's group only, no Go on PATH, DOCKER_HOST the world's engine. */
  async function asUser(dirs: { home: string; cache: string; xdg?: string; results?: string; labFile: string }, command: string[], timeout: number) {
    const base = await world!.env();
    const env = await world!.env({
      PATH: `${shared.bin}:${base.PATH}`,
      HOME: dirs.home,
      OCM_LAB_HOME: path.join(dirs.home, 'labs'),
      OCM_LAB_CACHE_DIR: dirs.cache,
      OCM_LAB_CONFIG: dirs.labFile,
      DOCKER_HOST: kind!.dockerHost,
      NODE_EXTRA_CA_CERTS: shared.ca,
      SSL_CERT_FILE: shared.ca,
      OCM_LAB_MIRRORS: shared.mirrors,
      ...(dirs.xdg ? { XDG_CACHE_HOME: dirs.xdg } : {}),
      ...(dirs.results ? { KEEP_RESULTS: dirs.results } : {}),
    });
    const user = ['--reuid', String(USER_UID), '--regid', String(kind!.socketGid), '--clear-groups'];
    return world!.run('setpriv', [...user, ...command], { env, timeout });
  }

  /** act runs `text` on `repo` in its self-hosted mode (jobs on this host), as the runner user. */
  async function runWorkflow(name: string, text: string, repo: string, dirs: Awaited<ReturnType<typeof userDirs>>, args: string[] = []) {
    const file = path.join(scratch, `${name}.yml`);
    await fs.writeFile(file, text, { mode: 0o644 });
    const actArgs = ['push', '-W', file, '-C', repo, '-P', 'ubuntu-24.04=-self-hosted', '--use-gitignore=false', '--no-cache-server'];
    const unreachable = await unreachableActions(path.join(scratch, 'unreachable-action'));
    const started = Date.now();
    const r = await asUser(dirs, [path.join(shared.bin, 'act'), ...actArgs, ...unreachable, ...args], 2_400_000);
    return { ...r, seconds: (Date.now() - started) / 1000 };
  }

  /** The manifest digest and config digest the lab's registry holds for `repository:tag` (the registry stays after down, by design). */
  async function registryManifest(host: string, repository: string, tag: string) {
    const port = host.split(':').pop();
    const r = await fetch(`http://127.0.0.1:${port}/v2/${repository}/manifests/${tag}`, { headers: { Accept: MANIFEST_TYPES.join(', ') } });
    expect(r.status, `${repository}:${tag} in the lab's registry`).toBe(200);
    const manifest = (await r.json()) as { config: { digest: string } };
    return { digest: r.headers.get('docker-content-digest'), config: manifest.config.digest };
  }

  /** Nothing of the lab is left on the engine: no container but the image registry, no kind node, no network of the lab. */
  async function leftOnEngine(lab: string) {
    const docker = async (args: string[]) => (await kind!.docker(args)).stdout.trim();
    return {
      containers: await docker(['ps', '-a', '--filter', `label=dev.ocm-lab.lab=${lab}`, '--format', '{{.Names}}']),
      kindNodes: await docker(['ps', '-a', '--filter', 'label=io.x-k8s.kind.cluster', '--format', '{{.Names}}']),
      networks: await docker(['network', 'ls', '--filter', `label=dev.ocm-lab.lab=${lab}`, '--format', '{{.Name}}']),
    };
  }

  it(
    "ocm-lab addon new demo: its workflow builds the addon's image, the action pushes it and runs the addon from it on cluster1, its scenario passes; down leaves nothing; then warm",
    { timeout: 5_400_000 },
    async () => {
      // ghcr.io serves ocm-lab's image built from this checkout, as the release workflow publishes it: the addon's image is FROM it.
      await publishOcmLabImage(world!, kind!, { name: PUBLISHED_OCM_LAB_IMAGE, packageRoot: ROOT });
      const project = path.join(scratch, ADDON);
      const made = await execa(process.execPath, [CLI, 'addon', 'new', ADDON, project], { reject: false, all: true });
      expect(made.exitCode, made.all).toBe(0);
      const generated = await fs.readFile(path.join(project, '.github', 'workflows', 'ci.yml'), 'utf8');
      expect(generated).toContain(`run: docker build -t "$ADDON_IMAGE" .`);
      const text = withoutGithubActions(generated).replace(/^( +)- name: Down$/m, (line) => `${EVIDENCE_STEP}\n${line}`);
      expect(text).toContain('Evidence for the test');
      const uses = actionUses(generated);
      const local = ['--local-repository', `${uses.repository}@${uses.ref}=${await actionRepository(ROOT, path.join(scratch, 'ocm-lab-action'))}`];
      const dirs = await userDirs('scaffold', shared.labFile);

      const runs: number[] = [];
      for (const name of ['cold', 'warm']) {
        await fs.rm(dirs.results, { recursive: true, force: true });
        await fs.mkdir(dirs.results);
        await fs.chown(dirs.results, USER_UID, kind!.socketGid);
        const run = await runWorkflow(`scaffold-${name}`, text, project, dirs, local);
        expect(run.exitCode, run.all.slice(-8000)).toBe(0);
        expect(run.all).toMatch(/Success - Main Build the addon's image/);
        expect(run.all).toMatch(/artifacts: official/);
        expect(run.all).toMatch(new RegExp(`(pushed|already there): ${ADDON_IMAGE}`));
        expect(run.all).toMatch(/Success - Main Load the addon/);
        expect(run.all).toMatch(/Success - Main Unit test/);
        expect(run.all).toMatch(/Success - Main ocm-lab down/);
        // The job summary: act prints what a step appended to $GITHUB_STEP_SUMMARY.
        expect(run.all).toMatch(/Summary - ### ocm-lab: documents/);
        const junit = await fs.readFile(path.join(dirs.results, 'documents', 'junit.xml'), 'utf8');
        expect(junit).toMatch(new RegExp(`<testsuite name="${ADDON}" tests="[1-9]\\d*" failures="0"`));
        expect(await fs.readFile(path.join(dirs.results, 'documents', 'summary.md'), 'utf8')).toMatch(/passed, 0 failed/);

        // The agent on cluster1 and the manager on the hub ran the image the job built, as the lab's registry holds it.
        const read = async <T>(f: string) => JSON.parse(await fs.readFile(path.join(dirs.results, f), 'utf8')) as T;
        const image = (await read<{ Id: string }[]>('image.json'))[0] as { Id: string };
        const registry = await read<{ host: string }>('registry.json');
        const held = await registryManifest(registry.host, `library/${ADDON}`, 'ci');
        expect(held.config).toBe(image.Id);
        const agents = (await read<{ items: Pod[] }>('agent-pods.json')).items;
        const managers = (await read<{ items: Pod[] }>('manager-pods.json')).items;
        expect(agents.length, JSON.stringify(agents)).toBeGreaterThan(0);
        for (const pod of [...agents, ...managers]) {
          expect(pod.spec.containers[0]?.image, pod.metadata.name).toBe(ADDON_IMAGE);
          const status = pod.status.containerStatuses?.[0];
          expect(status?.ready, `${pod.metadata.name}: ${JSON.stringify(pod.status)}`).toBe(true);
          expect(status?.imageID.split('@')[1], pod.metadata.name).toBe(held.digest);
        }

        expect(await leftOnEngine(LAB_NAME)).toEqual({ containers: '', kindNodes: '', networks: '' });
        expect(await fs.readdir(path.join(dirs.home, 'labs')).catch(() => [])).not.toContain(LAB_NAME);
        runs.push(run.seconds);
      }
      console.log(
        `ocm-lab addon new's workflow by act, kind runtime, connected: cold ${(runs[0] as number).toFixed(1)} s, warm ${(runs[1] as number).toFixed(1)} s`,
      );
      expect(runs[1]).toBeLessThan(runs[0] as number);

      // The registry stays after down by design (it is the machine's image cache); its removal is `ocm-lab registry rm`.
      const rm = await asUser(dirs, [path.join(shared.bin, 'node'), CLI, 'registry', 'rm'], 300_000);
      expect(rm.exitCode, rm.all).toBe(0);
      expect((await kind!.docker(['ps', '-a', '--format', '{{.Names}}'])).stdout.trim()).toBe('');
    },
  );

  it(
    "this repository's conformance workflow, its kind cell (v1.37, our addons) on the connected path, as the runner user: every document passes",
    { timeout: 3_600_000 },
    async () => {
      // A fresh runner: nothing in the engine but what the cell pulls, an empty ocm-lab cache.
      await kind!.docker(['system', 'prune', '--all', '--force', '--volumes']);
      const dirs = await userDirs('matrix-kind', path.join(ROOT, 'examples', 'default-lab.yaml'));
      const workflow = await fs.readFile(path.join(ROOT, '.github', 'workflows', 'conformance.yml'), 'utf8');
      const cell = await runWorkflow('matrix-kind', workflow, ROOT, dirs, [
        '-j',
        'conformance',
        '--matrix',
        'runtime:kind',
        '--matrix',
        'kubernetes:v1.37',
        '--matrix',
        'addons:ocm-lab',
      ]);
      expect(cell.exitCode, cell.all.slice(-8000)).toBe(0);
      expect(cell.all).toMatch(/artifacts: official/);
      expect(cell.all).toMatch(/Success - Main ocm-lab conformance/);
      expect(cell.all).toMatch(/Summary - ### Conformance: kind/);
      expect(cell.all).toMatch(/\*\*\d+ passed, 0 failed/);
      expect(cell.all).toMatch(/Success - Main ocm-lab down/);
      expect(await leftOnEngine('default')).toEqual({ containers: '', kindNodes: '', networks: '' });
      console.log(`conformance.yml by act, cell kind × v1.37 × ocm-lab, connected path, runner user: ${cell.seconds.toFixed(1)} s`);
      const rm = await asUser(dirs, [path.join(shared.bin, 'node'), CLI, 'registry', 'rm'], 300_000);
      expect(rm.exitCode, rm.all).toBe(0);
    },
  );
});
