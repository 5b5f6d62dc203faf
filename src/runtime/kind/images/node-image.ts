import fs from 'node:fs/promises';
import path from 'node:path';
import { LabError } from '../../../errors.js';
import { downloadModule } from '../../../provision/gobuild.js';
import { ensureBinaries } from '../../../provision/index.js';
import { DEFAULT_KUBERNETES_RELEASE, KIND_VERSION, requireKubernetesRelease, type KubernetesRelease } from '../../../provision/versions.js';
import { tail } from '../../../util/exec.js';
import { docker } from '../../../images/docker.js';
import { componentImageKey, componentImageSpecs, ensureComponentImages } from './component-images.js';
import {
  buildContainerName,
  buildImage,
  ensureImage,
  imageKey,
  imageTarFile,
  importRootfs,
  LABEL_IMAGE_KEY,
  removeContainer,
  removeImage,
  type BuiltImage,
  type ContextFile,
} from '../../../images/docker-build.js';
import { NODE_BINARY_PATHS, nodeFilesDockerfile, nodeFinalDockerfile, nodeOwnFiles } from './node-files.js';
import { resolveImageOptions, type ImageBuildOptions, type ResolvedImageOptions } from '../../../images/options.js';
import { ensureRootfsTar, NODE_ROOTFS, rootfsKey, rootfsTarFile } from '../../../images/rootfs.js';
import { sleep } from '../../../kube/wait.js';

/** The kind node image of a Kubernetes version, built here. */
export function nodeImageRef(kubernetesVersion: string = DEFAULT_KUBERNETES_RELEASE.kubernetes): string {
  return `ocm-lab/kind-node:${kubernetesVersion}`;
}

/** kind's base-image files we do not take: containerd's config is ours (nodeContainerdConfig). */
const KIND_FILES_REPLACED = new Set(['etc/containerd/config.toml']);

/** Mode of one of kind's base-image files in the node (the module cache has them read-only). */
export function kindFileMode(rel: string): number {
  return rel.startsWith('usr/local/bin/') || rel.startsWith('kind/bin/') ? 0o755 : 0o644;
}

/**
 * The node image can be made here without root: its tarball for today's inputs is in the cache (`docker load`), or
 * the Debian root filesystem it starts from is (then only Docker builds; debootstrap is the step that needs root).
 */
export async function nodeImageCached(kubernetesVersion: string, cache: string = resolveImageOptions({ kubernetesVersion }).cache): Promise<boolean> {
  const release = requireKubernetesRelease(kubernetesVersion);
  const found = (file: string) =>
    fs.access(file).then(
      () => true,
      () => false,
    );
  return (await found(imageTarFile(cache, nodeImageRef(kubernetesVersion), nodeImageKey(release)))) || (await found(rootfsTarFile(cache, NODE_ROOTFS)));
}

/** Everything that decides the node image's content: a change to any of it gives another key. */
export function nodeImageKey(release: KubernetesRelease = DEFAULT_KUBERNETES_RELEASE): string {
  return imageKey({
    image: nodeImageRef(release.kubernetes),
    // Bumped when the way the image is assembled changes (2: no build-container label committed into the image).
    builder: 2,
    rootfs: rootfsKey(NODE_ROOTFS),
    kind: KIND_VERSION,
    release,
    files: nodeOwnFiles(release),
    binaries: NODE_BINARY_PATHS,
    dockerfiles: [nodeFilesDockerfile('rootfs'), nodeFinalDockerfile('committed', '', LABEL_IMAGE_KEY)],
    images: componentImageSpecs(release).map((s) => [s.ref, componentImageKey(s, release)]),
  });
}

async function listFiles(dir: string, rel = ''): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await fs.readdir(path.join(dir, rel), { withFileTypes: true })) {
    const child = rel ? `${rel}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...(await listFiles(dir, child)));
    else if (entry.isFile()) out.push(child);
  }
  return out;
}

/** The build context's `root/`: kind's base-image files from the kind module, ours, and the binaries. */
async function nodeContextFiles(opts: ResolvedImageOptions): Promise<Record<string, ContextFile>> {
  const files: Record<string, ContextFile> = {};
  const kindModule = await downloadModule('sigs.k8s.io/kind', KIND_VERSION, { signal: opts.signal });
  const kindFiles = path.join(kindModule.dir, 'images', 'base', 'files');
  for (const rel of await listFiles(kindFiles)) {
    if (!KIND_FILES_REPLACED.has(rel)) files[`root/${rel}`] = { from: path.join(kindFiles, rel), mode: kindFileMode(rel) };
  }
  for (const [rel, file] of Object.entries(nodeOwnFiles(opts.release))) files[`root/${rel}`] = file;
  const names = Object.keys(NODE_BINARY_PATHS) as (keyof typeof NODE_BINARY_PATHS)[];
  const bins = await ensureBinaries(names, {
    cacheDir: opts.cache,
    binDir: opts.binDir,
    signal: opts.signal,
    onProgress: opts.progress,
    kubernetesVersion: opts.release.kubernetes,
  });
  for (const name of names) files[`root/${NODE_BINARY_PATHS[name]}`] = { from: bins[name], mode: 0o755 };
  return files;
}

async function exec(container: string, args: string[], what: string, opts: ResolvedImageOptions, inputFile?: string): Promise<string> {
  const r = await docker(['exec', ...(inputFile ? ['-i'] : []), container, ...args], {
    allowFailure: true,
    signal: opts.signal,
    ...(inputFile ? { inputFile } : {}),
  });
  if (r.exitCode !== 0) {
    throw new LabError(
      'failure',
      `building ${nodeImageRef(opts.release.kubernetes)}: ${what} failed: docker exec ${container} ${args.join(' ')} (exit status ${r.exitCode})\n` +
        `--- output (last lines) ---\n${tail(`${r.stdout}\n${r.stderr}`)}`,
    );
  }
  return r.stdout;
}

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs: number, image: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new LabError('notReady', `building ${image}: ${what} within ${timeoutMs / 1000} s`);
    await sleep(300);
  }
}

/**
 * Runs containerd in a container of the node image, imports every component
 * image into its k8s.io namespace (content only, as kind's own node-image
 * builder does), stops containerd cleanly and commits.
 */
async function preloadAndCommit(filesImage: string, committed: string, images: BuiltImage[], opts: ResolvedImageOptions): Promise<void> {
  const container = buildContainerName('kind-node');
  try {
    // No --label: docker commit would copy it into the node image and every kind node would carry it. The name marks it.
    await docker(['run', '-d', '--name', container, '--network', 'none', '--privileged', '--entrypoint', 'sleep', filesImage, 'infinity'], {
      signal: opts.signal,
    });
    opts.progress('setting up systemd units, CNI plugins and the OCI base spec');
    await exec(container, ['/bin/sh', '/kind/ocm-lab-setup.sh'], 'the node setup script', opts);
    await exec(container, ['rm', '/kind/ocm-lab-setup.sh'], 'removing the setup script', opts);
    await docker(['exec', '-d', container, 'containerd', '--log-level', 'warn'], { signal: opts.signal });
    const answers = async () => (await docker(['exec', container, 'ctr', 'version'], { allowFailure: true })).exitCode === 0;
    await waitFor(answers, 'containerd did not answer', 60_000, nodeImageRef(opts.release.kubernetes));
    for (const image of images) {
      opts.progress(`preloading ${image.ref}`);
      await exec(
        container,
        ['ctr', '--namespace=k8s.io', 'images', 'import', '--all-platforms', '--no-unpack', '--digests', '-'],
        `importing ${image.ref}`,
        opts,
        image.tar,
      );
      // Debian's ctr 1.6 has no `import --label`; pinned keeps kubelet's image GC away from them (containerd ≥ 1.7 honours it).
      await exec(container, ['ctr', '--namespace=k8s.io', 'images', 'label', image.ref, 'io.cri-containerd.pinned=pinned'], `pinning ${image.ref}`, opts);
    }
    const listed = new Set(
      (await exec(container, ['ctr', '--namespace=k8s.io', 'images', 'ls', '-q'], 'listing images', opts)).split('\n').map((l) => l.trim()),
    );
    const missing = images.filter((i) => !listed.has(i.ref)).map((i) => i.ref);
    if (missing.length)
      throw new LabError('failure', `building ${nodeImageRef(opts.release.kubernetes)}: containerd does not list ${missing.join(', ')} after the import`);
    await exec(container, ['pkill', '-TERM', '-x', 'containerd'], 'stopping containerd', opts);
    const stopped = async () => (await docker(['exec', container, 'pgrep', '-x', 'containerd'], { allowFailure: true })).exitCode === 1;
    await waitFor(stopped, 'containerd did not stop', 30_000, nodeImageRef(opts.release.kubernetes));
    opts.progress('docker commit');
    await docker(['commit', container, committed], { signal: opts.signal });
  } finally {
    await removeContainer(container);
  }
}

/**
 * The name of a Docker image that `kind create cluster --image <it>` boots into
 * a Ready single-node Kubernetes cluster offline: Debian (debootstrap) with
 * systemd, containerd and runc; kind's base-image files; kubeadm, kubelet,
 * kubectl and crictl of ours; every image kubeadm uses preloaded. Cached: with
 * the image present this is one `docker image inspect`; with it absent and
 * the cache warm, one `docker load`.
 */
export async function ensureKindNodeImage(options: ImageBuildOptions = {}): Promise<string> {
  return (await ensureKindNodeImageDetail(options)).ref;
}

export async function ensureKindNodeImageDetail(options: ImageBuildOptions = {}): Promise<BuiltImage> {
  const opts = resolveImageOptions(options);
  const key = nodeImageKey(opts.release);
  const image = nodeImageRef(opts.release.kubernetes);
  return ensureImage(
    image,
    key,
    async () => {
      const images = await ensureComponentImages(opts);
      const stage = (name: string) => `ocm-lab/kind-node-build:${name}-${key}`;
      try {
        await importRootfs(await ensureRootfsTar(NODE_ROOTFS, opts), stage('rootfs'), [], opts);
        await buildImage(stage('files'), nodeFilesDockerfile(stage('rootfs')), await nodeContextFiles(opts), opts);
        await preloadAndCommit(stage('files'), stage('committed'), images, opts);
        await buildImage(image, nodeFinalDockerfile(stage('committed'), key, LABEL_IMAGE_KEY), {}, opts);
      } finally {
        // The final image keeps the layers it needs; the stage tags only name them.
        for (const s of ['committed', 'files', 'rootfs']) await removeImage(stage(s));
      }
    },
    opts,
  );
}
