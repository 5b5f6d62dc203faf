import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { parse, stringify } from 'yaml';
import { productionModules } from '../../../src/images/production-modules.js';
import { cacheDir } from '../../../src/paths.js';
import { kindRelease } from '../../../src/provision/recipes.js';
import { KIND_VERSION, KUBERNETES_VERSION, OCM_VERSION, officialNodeImage } from '../../../src/provision/versions.js';
import { sha256File, type Routes } from './files.js';
import type { ConnectedWorld } from './index.js';
import { buildKindNodeStandIn, ensureKindnetdBinary } from './kind-node-standin.js';
import type { Ran } from './namespace.js';

const ENGINE_SCRIPT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../scripts/docker-engine.sh');

/** Where the kindnetd binary of the kindest/node stand-in comes from: a binary, else kind's vendored source (built once). */
const KINDNETD_BINARY_ENV = 'OCM_LAB_KINDNETD_BINARY';
const KINDNETD_SOURCE_ENV = 'OCM_LAB_KINDNETD_SOURCE';
const DEFAULT_KINDNETD_SOURCE = '/work/shared/upstream/kindnetd-vendored.tar.gz';

/** The Node.js base the release's Dockerfile builds FROM, served from the cache's node base (built with the Node.js that ran setup). */
export const SERVED_NODE_BASE = 'node:24-bookworm-slim';

/**
 * What the kind runtime fetches on the official path, served by the simulated world: the built images of the shared
 * cache (`<cache>/kind/images/*.tar`, read only) under the names of their official counterparts. kind's `kindest/node`
 * is a stand-in made from the built node image as kind's recipe makes its own (kind-node-standin.ts: only kind's four
 * CNI plugins, kindnetd preloaded, kind's default-cni.yaml and containerd settings), never the built image itself;
 * Debian's registry is served as `registry:2`, the node base as `node:24-bookworm-slim`, OCM's built images as quay.io's.
 */
function servedImages(): { tarPrefix: string; servedAs: string; standIn?: true }[] {
  const official = officialNodeImage(KUBERNETES_VERSION);
  if (!official) throw new Error(`kind ${KIND_VERSION} publishes no node image for ${KUBERNETES_VERSION}: the kind world has nothing to serve as kindest/node`);
  const ocm = ['registration-operator', 'registration', 'work', 'placement', 'addon-manager'];
  return [
    { tarPrefix: `ocm-lab-kind-node-${KUBERNETES_VERSION}-`, servedAs: official.tag, standIn: true },
    { tarPrefix: 'ocm-lab-registry-2-', servedAs: 'registry:2' },
    { tarPrefix: 'ocm-lab-node-base-', servedAs: SERVED_NODE_BASE },
    ...ocm.map((name) => ({ tarPrefix: `quay.io-open-cluster-management-${name}-`, servedAs: `quay.io/open-cluster-management/${name}:${OCM_VERSION}` })),
  ];
}

/** kind's release binary (the one built here) as GitHub serves it, with its `.sha256sum`; the digest goes into the mirrors file. */
export async function kindDownloads(routes: Routes, dir: string, sourceCache: string = cacheDir()): Promise<{ url: string; sha256: string }> {
  const release = kindRelease();
  if (release?.kind !== 'file') throw new Error(`kind ${KIND_VERSION} has no pinned release download for this platform`);
  const { url, fileName } = release.file('kind');
  const staged = path.join(dir, 'kind-release', fileName);
  await fs.mkdir(path.dirname(staged), { recursive: true });
  await fs.copyFile(path.join(sourceCache, 'bin', `kind-${KIND_VERSION}`, 'kind'), staged);
  const sha256 = await sha256File(staged);
  await fs.writeFile(`${staged}.sha256sum`, `${sha256}  ${fileName}\n`);
  await routes.githubRelease('kubernetes-sigs/kind', KIND_VERSION, [staged, `${staged}.sha256sum`]);
  return { url, sha256: `sha256:${sha256}` };
}

/** The engine's default bridge (name, its address) and the pool its networks come from: two engines at once need two. */
export interface EngineNetwork {
  bridge: string;
  bip: string;
  pool: string;
}
const DEFAULT_ENGINE_NETWORK: EngineNetwork = { bridge: 'ocmlabkc0', bip: '10.207.0.1/24', pool: '10.208.0.0/16' };

export interface KindWorld {
  /** DOCKER_HOST of the test's own engine, which runs inside the world's namespace. */
  dockerHost: string;
  /** The group of its socket (a user in it may use the engine). */
  socketGid: number;
  /** `docker …` against the engine, inside the namespace, as root. */
  docker(args: readonly string[]): Promise<Ran>;
  /** Stops the engine and deletes its data (its containers, networks and images go with it). */
  stop(): Promise<void>;
}

/**
 * Serves ocm-lab's image as its release publishes it (`name`, on the world's ghcr.io), built through the kind world's engine
 * FROM the served node:24-bookworm-slim with the release workflow's context of `packageRoot`: package.json, the Dockerfile,
 * dist/, manifests/ and the production node_modules. The built image is removed from the engine again.
 */
export async function publishOcmLabImage(world: ConnectedWorld, kind: KindWorld, o: { name: string; packageRoot: string }): Promise<void> {
  const context = path.join(world.dir, 'ocm-lab-image-context');
  try {
    await fs.mkdir(path.join(context, 'node_modules'), { recursive: true });
    for (const f of ['package.json', 'Dockerfile']) await fs.copyFile(path.join(o.packageRoot, f), path.join(context, f));
    for (const d of ['dist', 'manifests']) await fs.cp(path.join(o.packageRoot, d), path.join(context, d), { recursive: true, verbatimSymlinks: true });
    for (const m of await productionModules(o.packageRoot)) {
      await fs.cp(m.dir, path.join(context, 'node_modules', m.name), { recursive: true, verbatimSymlinks: true });
    }
    for (const args of [
      ['build', '-q', '-t', o.name, '--build-arg', `BASE_IMAGE=${SERVED_NODE_BASE}`, context],
      ['push', o.name],
      ['image', 'prune', '--all', '--force'],
    ]) {
      const r = await kind.docker(args);
      if (r.exitCode !== 0) throw new Error(`docker ${args.join(' ')} (kind world) exited ${r.exitCode}: ${r.all}`);
    }
  } finally {
    await fs.rm(context, { recursive: true, force: true });
  }
}

async function newestTar(dir: string, prefix: string): Promise<string> {
  const found = (await fs.readdir(dir).catch(() => [])).filter((f) => f.startsWith(prefix) && f.endsWith('.tar'));
  const dated = await Promise.all(found.map(async (f) => ({ f, mtime: (await fs.stat(path.join(dir, f))).mtimeMs })));
  const newest = dated.sort((a, b) => b.mtime - a.mtime)[0];
  if (!newest) throw new Error(`${dir} holds no ${prefix}*.tar: the kind world serves images built here (run \`ocm-lab setup --runtime kind\` first)`);
  return path.join(dir, newest.f);
}

/**
 * A Docker engine of the test's own (scripts/docker-engine.sh: its own socket, data root, exec root, pidfile, bridge and
 * address pool, beside any other engine) started inside the world's private mount namespace, so it resolves the real
 * registry names to the fixture and trusts the test CA; then the served images pushed through it and their digests added
 * to the world's mirrors file (`digests:`), and the engine emptied again, so the CLI starts from nothing.
 */
export async function startKindWorld(
  world: ConnectedWorld,
  opts: {
    sourceCache?: string;
    kindDownload: { url: string; sha256: string };
    network?: EngineNetwork;
    /** How the engine's commands (the engine script, `docker`) run: default world.run; desktop-engine.ts adds a network namespace. */
    enter?: ConnectedWorld['run'];
  },
): Promise<KindWorld> {
  const enter = opts.enter ?? world.run.bind(world);
  const dir = path.join(world.dir, 'kind-engine');
  await fs.mkdir(dir, { recursive: true });
  const network = opts.network ?? DEFAULT_ENGINE_NETWORK;
  const env = await world.env({
    OCM_LAB_DOCKER_RUN_DIR: path.join(dir, 'run'),
    OCM_LAB_DOCKER_DATA_ROOT: path.join(dir, 'data'),
    OCM_LAB_DOCKER_BRIDGE: network.bridge,
    OCM_LAB_DOCKER_BIP: network.bip,
    OCM_LAB_DOCKER_POOL: network.pool,
  });
  const stop = async () => {
    const r = await enter('bash', [ENGINE_SCRIPT, 'stop', '--purge'], { env, timeout: 300_000 });
    if (r.exitCode !== 0) throw new Error(`stopping the kind world's Docker engine failed: ${r.all}`);
  };
  try {
    const started = await enter('bash', [ENGINE_SCRIPT, 'start'], { env, timeout: 300_000 });
    if (started.exitCode !== 0) throw new Error(`the kind world's Docker engine did not start: ${started.all}`);
    const dockerHost = started.stdout.trim().split('\n').pop() as string;
    const docker = (args: readonly string[]) => enter('docker', args, { env: { ...env, DOCKER_HOST: dockerHost }, timeout: 900_000 });
    const must = async (args: readonly string[]) => {
      const r = await docker(args);
      if (r.exitCode !== 0) throw new Error(`docker ${args.join(' ')} (kind world) exited ${r.exitCode}: ${r.all}`);
      return r.stdout;
    };
    const socket = dockerHost.replace(/^unix:\/\//, '');
    const socketGid = (await fs.stat(socket)).gid;
    if (socketGid === 0) throw new Error(`${socket} belongs to group root: dockerd found no docker group to give it (groupadd docker)`);
    // The socket (root:docker, 0660) is reached through directories that are root's own: a plain user may pass them, no more.
    for (let d = path.dirname(socket); d.startsWith(world.dir); d = path.dirname(d)) await fs.chmod(d, 0o711);

    const images = path.join(opts.sourceCache ?? cacheDir(), 'kind', 'images');
    const digests: Record<string, string> = { [opts.kindDownload.url]: opts.kindDownload.sha256 };
    for (const image of servedImages()) {
      const loaded = /Loaded image: (\S+)/.exec(await must(['load', '-i', await newestTar(images, image.tarPrefix)]))?.[1];
      if (!loaded) throw new Error(`docker load of ${image.tarPrefix}*.tar named no image`);
      if (image.standIn) {
        const kindnetdBinary =
          process.env[KINDNETD_BINARY_ENV] ||
          (await ensureKindnetdBinary({
            cacheDir: opts.sourceCache ?? cacheDir(),
            sourceTarball: process.env[KINDNETD_SOURCE_ENV] || DEFAULT_KINDNETD_SOURCE,
          }));
        await buildKindNodeStandIn(docker, { builtImage: loaded, tag: image.servedAs, kindnetdBinary, workDir: dir });
      } else {
        await must(['tag', loaded, image.servedAs]);
      }
      const pushed = /digest: (sha256:[0-9a-f]{64})/.exec(await must(['push', image.servedAs]))?.[1];
      if (!pushed) throw new Error(`docker push ${image.servedAs} printed no digest`);
      digests[image.servedAs] = pushed;
    }
    await must(['system', 'prune', '--all', '--force']);
    await must(['image', 'prune', '--all', '--force']);
    const mirrors = (parse(await fs.readFile(world.mirrorsFile, 'utf8')) ?? {}) as { digests?: Record<string, string> };
    await fs.writeFile(world.mirrorsFile, stringify({ ...mirrors, digests: { ...mirrors.digests, ...digests } }));
    return { dockerHost, socketGid, docker, stop };
  } catch (err) {
    await stop().catch(() => undefined);
    throw err;
  }
}

// kind needs more inotify instances and watches than Debian's defaults.
/** A uid no account has: the CLI runs as a plain user whose only privilege is the Docker socket's group. */
export const KIND_USER_UID = 47913;

/**
 * A cache for the built path on kind made from `from` (the shared cache of what was built here): the binaries and the
 * rendered operators hardlinked, the built images' tarballs copied (`docker save` leaves them 0600 root, and the user's
 * docker CLI reads them) and given to the user. Its directories are the user's, so it may add to them.
 */
export async function linkBuiltCache(from: string, to: string, owner: { uid: number; gid: number }): Promise<void> {
  const copy = async (args: string[], what: string) => {
    const r = await execa('cp', args, { reject: false, all: true });
    if (r.exitCode !== 0) throw new Error(`cp ${args.join(' ')} (${what}) failed: ${r.all}`);
  };
  await fs.mkdir(to, { recursive: true });
  for (const part of ['bin', 'ocm-operators']) await copy(['-al', path.join(from, part), path.join(to, part)], 'the built cache');
  const images = path.join(from, 'kind', 'images');
  const tars = (await fs.readdir(images)).filter((f) => f.endsWith('.tar')).map((f) => path.join(images, f));
  await fs.mkdir(path.join(to, 'kind', 'images'), { recursive: true });
  await copy([...tars, path.join(to, 'kind', 'images')], "the built images' tarballs");
  await execa('chown', ['-R', `${owner.uid}:${owner.gid}`, path.join(to, 'kind')]);
  // Lock files are opened for writing in place: the user makes its own (a link would be root's file, and the shared one).
  await execa('find', [to, '-name', 'provision.lock', '-delete']);
  await execa('find', [to, '-type', 'd', '-exec', 'chown', `${owner.uid}:${owner.gid}`, '{}', '+']);
}

export interface KindUser {
  /** Its own directories (owned by it): the ocm-lab cache, HOME, npm's cache; `bin` holds a copy of this node. */
  dirs: { cache: string; home: string; bin: string; npmCache: string; ca: string; mirrors: string };
  /** `file <args>` inside the namespace as the user: no Go on PATH, this node first, its own caches (`cache`: another ocm-lab cache). */
  run(file: string, args: readonly string[], opts?: { cache?: string; timeout?: number; env?: Record<string, string> }): Promise<Ran>;
}

/**
 * KIND_USER_UID in the socket's group only, with directories of its own under `scratch` (made readable for it; the
 * fixture's own directory is root's) and the world's CA and mirrors file copied where it can read them.
 */
export async function kindUser(world: ConnectedWorld, kind: KindWorld, scratch: string): Promise<KindUser> {
  await fs.chmod(scratch, 0o755);
  const dirs = {
    cache: path.join(scratch, 'cache'),
    home: path.join(scratch, 'home'),
    bin: path.join(scratch, 'bin'),
    npmCache: path.join(scratch, 'npm-cache'),
    ca: path.join(scratch, 'ca.pem'),
    mirrors: path.join(scratch, 'mirrors.yaml'),
  };
  for (const d of [dirs.cache, dirs.home, dirs.npmCache]) {
    await fs.mkdir(d, { recursive: true });
    await fs.chown(d, KIND_USER_UID, kind.socketGid);
  }
  await fs.mkdir(dirs.bin, { recursive: true });
  await fs.copyFile(process.execPath, path.join(dirs.bin, 'node'));
  await fs.chmod(path.join(dirs.bin, 'node'), 0o755);
  await fs.copyFile(world.caFile, dirs.ca);
  await fs.copyFile(world.mirrorsFile, dirs.mirrors);
  for (const f of [dirs.ca, dirs.mirrors]) await fs.chmod(f, 0o644);
  return {
    dirs,
    async run(file, args, opts = {}) {
      const base = await world.env();
      const env = await world.env({
        PATH: `${dirs.bin}${path.delimiter}${base.PATH}`,
        HOME: dirs.home,
        OCM_LAB_HOME: dirs.home,
        OCM_LAB_CACHE_DIR: opts.cache ?? dirs.cache,
        DOCKER_HOST: kind.dockerHost,
        NODE_EXTRA_CA_CERTS: dirs.ca,
        SSL_CERT_FILE: dirs.ca,
        OCM_LAB_MIRRORS: dirs.mirrors,
        npm_config_cache: dirs.npmCache,
        npm_config_update_notifier: 'false',
        npm_config_audit: 'false',
        npm_config_fund: 'false',
        ...opts.env,
      });
      const user = ['--reuid', String(KIND_USER_UID), '--regid', String(kind.socketGid), '--clear-groups'];
      return world.run('setpriv', [...user, file, ...args], { env, timeout: opts.timeout ?? 2_400_000 });
    },
  };
}

/** What is left of a lab in the engine: its containers, kind's node containers, its networks (all empty after `down`). */
export async function leftOfLab(kind: KindWorld, lab: string): Promise<{ containers: string; kindNodes: string; networks: string }> {
  const left = await kind.docker(['ps', '-a', '--filter', `label=dev.ocm-lab.lab=${lab}`, '--format', '{{.Names}}']);
  const nodes = await kind.docker(['ps', '-a', '--filter', 'label=io.x-k8s.kind.cluster', '--format', '{{.Names}}']);
  const networks = await kind.docker(['network', 'ls', '--filter', `label=dev.ocm-lab.lab=${lab}`, '--format', '{{.Name}}']);
  return { containers: left.stdout.trim(), kindNodes: nodes.stdout.trim(), networks: networks.stdout.trim() };
}

/** The engine as new: no container, image, network or volume (the image registry and its data go too). */
export async function emptyEngine(kind: KindWorld): Promise<void> {
  const running = (await kind.docker(['ps', '-aq'])).stdout.trim();
  if (running) await kind.docker(['rm', '-f', ...running.split('\n')]);
  const pruned = await kind.docker(['system', 'prune', '--all', '--force', '--volumes']);
  if (pruned.exitCode !== 0) throw new Error(`docker system prune (kind world) exited ${pruned.exitCode}: ${pruned.all}`);
}
