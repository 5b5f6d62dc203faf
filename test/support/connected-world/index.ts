import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { stringify } from 'yaml';
import { cacheDir } from '../../../src/paths.js';
import { OCM_BINARIES, ocmRecipe } from '../../../src/provision/recipes.js';
import { KUBERNETES_VERSION, OCM_VERSION, requireKubernetesRelease } from '../../../src/provision/versions.js';
import { makeCertificates } from './certs.js';
import { Routes, startFileServer, type FileServer } from './files.js';
import { blobDataFile, buildAndPush, imageArch, type ImageSpec, type PushedImage } from './images.js';
import { DEFAULT_ADDRESSES, hostsFile, type WorldAddresses } from './names.js';
import { pathWithoutGo, privateMountNamespace, type MountNamespace, type Ran } from './namespace.js';
import { freePort, requireRegistryBinary, startRegistry, type RegistryProcess } from './registry.js';

export interface ConnectedWorld {
  /** Everything the fixture made: certificates, registry storage, files, logs (removed by close). */
  dir: string;
  caFile: string;
  /** The `mirrors:` file (shared design, `digests:` only): the simulated images' digests. */
  mirrorsFile: string;
  images: PushedImage[];
  /** Environment for the CLI inside the namespace: no Go on PATH, the test CA trusted, OCM_LAB_MIRRORS set. */
  env(extra?: NodeJS.ProcessEnv): Promise<NodeJS.ProcessEnv>;
  /** Runs a command inside the private mount namespace (the real names resolve to loopback there). */
  run(file: string, args: readonly string[], opts?: { env?: NodeJS.ProcessEnv; timeout?: number }): Promise<Ran>;
  /** Serve one image's layer (registry storage) or one file (file server, by name) with wrong bytes. */
  corruptImageLayer(image: string): Promise<{ reference: string; digest: string }>;
  corruptFile(name: string): void;
  /** Undo every corruption. */
  repair(): Promise<void>;
  /** Nothing answers (servers stopped; storage and namespace kept), and answering again. */
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

async function binariesOf(dir: string, what: string): Promise<string[]> {
  const names = (await fs.readdir(dir).catch(() => [])).filter((n) => !n.startsWith('.') && n !== 'manifest.json');
  if (!names.length) throw new Error(`${dir} holds no binaries: the connected world serves ${what} built here (run \`ocm-lab setup\` with Go first)`);
  return names.map((n) => path.join(dir, n));
}

/** etcd's release tarball (`etcd-<v>-linux-<arch>/etcd` inside), made from the etcd built here. */
async function etcdTarball(etcdBinary: string, version: string, out: string): Promise<string> {
  const name = `etcd-${version}-linux-${imageArch()}`;
  const stage = path.join(out, 'stage', name);
  await fs.mkdir(stage, { recursive: true });
  await fs.copyFile(etcdBinary, path.join(stage, 'etcd'));
  const tarball = path.join(out, `${name}.tar.gz`);
  await execa('tar', ['-czf', tarball, '--owner=0', '--group=0', '--numeric-owner', '-C', path.dirname(stage), name]);
  await fs.rm(path.join(out, 'stage'), { recursive: true });
  return tarball;
}

/**
 * Starts the simulated connected world: a test CA, the distribution registry answering as quay.io, registry.k8s.io
 * and registry-1.docker.io (TLS on the registry address, port 443) holding OCM's images made here, an HTTPS file server answering
 * as dl.k8s.io, GitHub's release downloads and proxy.golang.org, and a private mount namespace whose /etc/hosts and CA trust point there.
 * Binaries come from `sourceCache` (default: the shared cache of binaries built here), Go modules from `goModCache`
 * (default: $GOMODCACHE/cache/download). Needs root.
 */
export async function startConnectedWorld(
  opts: {
    sourceCache?: string;
    goModCache?: string;
    /** More downloads to serve (the kind world's kind binary). */ routes?: (routes: Routes, dir: string) => Promise<void>;
    /** Loopback addresses of its servers (default DEFAULT_ADDRESSES): two worlds at once need two pairs. */
    addresses?: WorldAddresses;
    /**
     * What the public names resolve to inside the namespace (default: the servers' addresses). Addresses where nothing
     * listens make the servers unreachable by name, e.g. when a proxy (which resolves them with worldAddressOf) is to be the only way.
     */
    namesResolveTo?: WorldAddresses;
  } = {},
): Promise<ConnectedWorld> {
  await requireRegistryBinary();
  const addresses = opts.addresses ?? DEFAULT_ADDRESSES;
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-connected-'));
  const cleanups: (() => Promise<void>)[] = [async () => fs.rm(dir, { recursive: true, force: true })];
  const close = async () => {
    const errors: unknown[] = [];
    for (const step of cleanups.reverse()) await step().catch((err: unknown) => errors.push(err));
    cleanups.length = 0;
    if (errors.length) throw new AggregateError(errors, `connected-world cleanup failed: ${errors.map(String).join('; ')}`);
  };
  try {
    const source = path.join(opts.sourceCache ?? cacheDir(), 'bin');
    const etcdVersion = requireKubernetesRelease().etcd;
    const certs = await makeCertificates(path.join(dir, 'pki'), addresses);
    const storage = path.join(dir, 'registry');
    const logs = path.join(dir, 'logs');
    await fs.mkdir(logs);

    // Images are pushed through a plain-HTTP side of the same storage on 127.0.0.1, then served over TLS as the real names.
    const pushSide = await startRegistry({ dir: logs, name: 'push', storage, listen: { host: '127.0.0.1', port: await freePort() } });
    const images: PushedImage[] = [];
    try {
      // OCM's images as the recipe names them (quay.io/open-cluster-management/<image>:<version>, the binary at its path there).
      const ocm = ocmRecipe(OCM_VERSION);
      if (ocm.release?.kind !== 'image') throw new Error(`${ocm.title} has no image source in src/provision/recipes.ts`);
      const ocmDir = path.join(source, ocm.id);
      await binariesOf(ocmDir, ocm.title);
      for (const binary of OCM_BINARIES) {
        const [, host, repository, tag] = /^([^/]+)\/(.+):([^:]+)$/.exec(ocm.release.image(binary)) ?? [];
        if (!host || !repository || !tag) throw new Error(`not an image reference: ${ocm.release.image(binary)}`);
        const spec: ImageSpec = { host, repository, tag, files: [{ source: path.join(ocmDir, binary), pathInImage: ocm.release.pathInImage(binary) }] };
        images.push(await buildAndPush(spec, pushSide.url, path.join(dir, 'build', binary)));
      }
    } finally {
      await pushSide.stop();
    }
    const mirrorsFile = path.join(dir, 'mirrors.yaml');
    await fs.writeFile(mirrorsFile, stringify({ digests: Object.fromEntries(images.map((i) => [i.reference, i.digest])) }));

    const routes = new Routes();
    for (const file of await binariesOf(path.join(source, `kubernetes-${KUBERNETES_VERSION}`), `Kubernetes ${KUBERNETES_VERSION}`)) {
      await routes.kubernetesBinary(KUBERNETES_VERSION, imageArch(), path.basename(file), file);
    }
    const [etcd] = await binariesOf(path.join(source, `etcd-${etcdVersion}`), `etcd ${etcdVersion}`);
    await routes.githubRelease('etcd-io/etcd', etcdVersion, [await etcdTarball(etcd as string, etcdVersion, path.join(dir, 'files'))]);

    // OCM's manifests and CRDs come from its Go module's source: served from the module cache, as proxy.golang.org would.
    const goModCache = opts.goModCache ?? path.join(process.env.GOMODCACHE ?? path.join(os.homedir(), 'go/pkg/mod'), 'cache/download');
    await routes.goModule(goModCache, 'open-cluster-management.io/ocm', OCM_VERSION);
    await opts.routes?.(routes, dir);

    let registry: RegistryProcess | undefined;
    let files: FileServer | undefined;
    let corruptedFile: string | undefined;
    const spoiled = new Map<string, Buffer>();
    const start = async () => {
      registry ??= await startRegistry({
        dir: logs,
        name: 'tls',
        storage,
        listen: { host: addresses.registry, port: 443 },
        tls: { ...certs.registry, caFile: certs.caFile },
      });
      files ??= await startFileServer(routes, certs.files, addresses.files);
      files.corrupt(corruptedFile);
    };
    const stop = async () => {
      await registry?.stop();
      registry = undefined;
      await files?.stop();
      files = undefined;
    };
    cleanups.push(stop);
    await start();

    const hosts = path.join(dir, 'hosts');
    await fs.writeFile(hosts, hostsFile(await fs.readFile('/etc/hosts', 'utf8'), opts.namesResolveTo ?? addresses), { mode: 0o644 });
    const ns: MountNamespace = await privateMountNamespace({ hostsFile: hosts, caFile: certs.caFile });
    cleanups.push(() => ns.close());

    const repair = async () => {
      for (const [file, bytes] of spoiled) await fs.writeFile(file, bytes);
      spoiled.clear();
      corruptedFile = undefined;
      files?.corrupt(undefined);
    };
    const world: ConnectedWorld = {
      dir,
      caFile: certs.caFile,
      mirrorsFile,
      images,
      async env(extra = {}) {
        return {
          PATH: await pathWithoutGo(),
          HOME: process.env.HOME ?? '/root',
          LANG: 'C.UTF-8',
          NODE_EXTRA_CA_CERTS: certs.caFile,
          SSL_CERT_FILE: certs.caFile,
          OCM_LAB_MIRRORS: mirrorsFile,
          ...extra,
        };
      },
      async run(file, args, runOpts = {}) {
        return ns.run(file, args, { env: runOpts.env ?? (await world.env()), timeout: runOpts.timeout });
      },
      async corruptImageLayer(image) {
        const pushed = images.find((i) => i.repository.endsWith(`/${image}`));
        if (!pushed) throw new Error(`the connected world has no image ${image} (it has ${images.map((i) => i.repository).join(', ')})`);
        const file = blobDataFile(storage, pushed.layerDigest);
        const bytes = await fs.readFile(file);
        if (!spoiled.has(file)) spoiled.set(file, Buffer.from(bytes));
        const at = Math.floor(bytes.length / 2);
        bytes[at] = (bytes[at] ?? 0) ^ 0xff;
        await fs.writeFile(file, bytes);
        return { reference: pushed.reference, digest: pushed.layerDigest };
      },
      corruptFile(name) {
        corruptedFile = name;
        files?.corrupt(name);
      },
      repair,
      stop,
      start,
      close,
    };
    return world;
  } catch (err) {
    await close().catch(() => undefined);
    throw err;
  }
}
