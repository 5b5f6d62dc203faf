import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ExitCode, MissingPrerequisiteError, exitCodeOf } from '../../src/errors.js';
import { binaryStatus, ensureBinaries, ensureGoModuleSource, type BuildRequest, type Mirrors, type ProvisionOptions } from '../../src/provision/index.js';

const VERSION_LINE: Record<string, string> = {
  'kube-apiserver': 'Kubernetes v1.34.4',
  'kube-controller-manager': 'Kubernetes v1.34.4',
  kubectl: 'Client Version: v1.34.4',
  etcd: 'etcd Version: 3.6.5',
  registration: 'registration version v1.2.1',
  kind: 'kind v0.33.0 go1.26.1 linux/amd64',
};

function script(printed: string): string {
  return `#!/bin/sh\necho "${printed}"\n`;
}

/** A fake binary: a shell script that prints a version. */
async function fakeBinary(dir: string, name: string, printed = VERSION_LINE[name] ?? `${name} version v1.2.1`): Promise<string> {
  await fs.mkdir(dir, { recursive: true });
  const file = path.join(dir, name);
  await fs.writeFile(file, script(printed), { mode: 0o755 });
  return file;
}

/** Stands in for the Go build: writes fake binaries of the pinned versions and records what it was asked to build. */
function fakeBuilder(calls: string[][], opts: { delayMs?: number } = {}) {
  return async (req: BuildRequest) => {
    calls.push([req.recipe.id, ...req.names]);
    if (opts.delayMs) await new Promise((r) => setTimeout(r, opts.delayMs));
    for (const n of req.names) await fakeBinary(req.outDir, n);
  };
}

describe('provisioning: resolution order and the cache', () => {
  let tmp: string;
  let cache: string;
  let savedPath: string | undefined;
  let savedBinDir: string | undefined;
  let calls: string[][];
  let opts: ProvisionOptions;

  beforeEach(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-prov-'));
    cache = path.join(tmp, 'cache');
    savedPath = process.env.PATH;
    savedBinDir = process.env.OCM_LAB_BIN_DIR;
    delete process.env.OCM_LAB_BIN_DIR;
    process.env.PATH = path.join(tmp, 'path'); // nothing there yet: no go, no kubectl
    calls = [];
    opts = { kubernetesVersion: 'v1.34.4', cacheDir: cache, artifacts: 'build', builder: fakeBuilder(calls) };
  });
  afterEach(async () => {
    process.env.PATH = savedPath;
    if (savedBinDir === undefined) delete process.env.OCM_LAB_BIN_DIR;
    else process.env.OCM_LAB_BIN_DIR = savedBinDir;
    await fs.rm(tmp, { recursive: true, force: true });
  });

  it('builds each recipe once for several binaries, then serves them from the cache without building', async () => {
    const first = await ensureBinaries(['kube-apiserver', 'kubectl', 'etcd', 'registration', 'work'], opts);
    expect(calls).toEqual([
      ['kubernetes-v1.34.4', 'kube-apiserver', 'kubectl'],
      ['etcd-v3.6.5', 'etcd'],
      ['ocm-v1.2.1', 'registration', 'work'],
    ]);
    expect(first.kubectl).toBe(path.join(cache, 'bin', 'kubernetes-v1.34.4', 'kubectl'));
    expect(first.etcd).toBe(path.join(cache, 'bin', 'etcd-v3.6.5', 'etcd'));
    const manifest = JSON.parse(await fs.readFile(path.join(cache, 'bin', 'kubernetes-v1.34.4', 'manifest.json'), 'utf8'));
    expect(manifest.binaries.kubectl.version).toBe('Client Version: v1.34.4');
    expect(manifest.binaries.kubectl.sha256).toBe(crypto.createHash('sha256').update(script('Client Version: v1.34.4')).digest('hex'));

    const again = await ensureBinaries(['kube-apiserver', 'kubectl', 'etcd', 'registration', 'work'], opts);
    expect(again).toEqual(first);
    expect(calls).toHaveLength(3);
    // A binary not built before is built alone; the others stay.
    await ensureBinaries(['kube-controller-manager', 'kubectl'], opts);
    expect(calls.at(-1)).toEqual(['kubernetes-v1.34.4', 'kube-controller-manager']);
    const merged = JSON.parse(await fs.readFile(path.join(cache, 'bin', 'kubernetes-v1.34.4', 'manifest.json'), 'utf8'));
    expect(Object.keys(merged.binaries).sort()).toEqual(['kube-apiserver', 'kube-controller-manager', 'kubectl']);
  });

  it('skips a binary on PATH that reports another version, and prefers one that reports the pinned version', async () => {
    await fakeBinary(path.join(tmp, 'path'), 'kubectl', 'Client Version: v1.34.4-dispatcher');
    expect((await ensureBinaries(['kubectl'], opts)).kubectl).toBe(path.join(cache, 'bin', 'kubernetes-v1.34.4', 'kubectl'));
    expect(calls).toHaveLength(1);
    const onPath = await fakeBinary(path.join(tmp, 'path'), 'kubectl', 'Client Version: v1.34.4');
    expect((await ensureBinaries(['kubectl'], opts)).kubectl).toBe(onPath);
    expect((await binaryStatus({ ...opts, names: ['kubectl'] }))[0]).toMatchObject({ source: 'path', path: onPath, version: 'v1.34.4' });
  });

  it("runs a PATH binary's version command once per change of the file, not on every lookup", async () => {
    const runs = path.join(tmp, 'runs');
    const file = path.join(tmp, 'path', 'kubectl');
    const counting = (printed: string) => `#!/bin/sh\necho run >> ${runs}\necho "${printed}"\n`;
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.writeFile(file, counting('Client Version: v1.34.4'), { mode: 0o755 });
    const countRuns = async () => (await fs.readFile(runs, 'utf8').catch(() => '')).split('\n').filter(Boolean).length;
    expect((await ensureBinaries(['kubectl'], opts)).kubectl).toBe(file);
    expect((await ensureBinaries(['kubectl'], opts)).kubectl).toBe(file);
    expect(await countRuns()).toBe(1);
    // Another binary in its place (another version): checked again, and refused.
    await fs.writeFile(file, counting('Client Version: v1.33.0'), { mode: 0o755 });
    expect((await ensureBinaries(['kubectl'], opts)).kubectl).toBe(path.join(cache, 'bin', 'kubernetes-v1.34.4', 'kubectl'));
    expect((await ensureBinaries(['kubectl'], opts)).kubectl).toBe(path.join(cache, 'bin', 'kubernetes-v1.34.4', 'kubectl'));
    expect(await countRuns()).toBe(2);
  });

  it('takes --bin-dir (or $OCM_LAB_BIN_DIR) first, over PATH and the cache', async () => {
    await ensureBinaries(['etcd'], opts); // cached
    await fakeBinary(path.join(tmp, 'path'), 'etcd');
    const inDir = await fakeBinary(path.join(tmp, 'bins'), 'etcd');
    expect((await ensureBinaries(['etcd'], { ...opts, binDir: path.join(tmp, 'bins') })).etcd).toBe(inDir);
    process.env.OCM_LAB_BIN_DIR = path.join(tmp, 'bins');
    expect((await ensureBinaries(['etcd'], opts)).etcd).toBe(inDir);
    expect((await binaryStatus({ ...opts, names: ['etcd', 'kubectl'] })).map((s) => [s.name, s.source])).toEqual([
      ['etcd', 'bin-dir'],
      ['kubectl', null],
    ]);
    expect(calls).toHaveLength(1);
  });

  it('refuses a --bin-dir binary of another version, naming the file and what it printed (exit 3)', async () => {
    await fakeBinary(path.join(tmp, 'bins'), 'kube-apiserver', 'Kubernetes v1.30.0');
    const err = await ensureBinaries(['kube-apiserver'], { ...opts, binDir: path.join(tmp, 'bins') }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MissingPrerequisiteError);
    expect((err as MissingPrerequisiteError).exitCode).toBe(3);
    expect((err as Error).message).toContain(path.join(tmp, 'bins', 'kube-apiserver'));
    expect((err as Error).message).toContain('Kubernetes v1.30.0');
    expect(calls).toHaveLength(0);
    const [status] = await binaryStatus({ ...opts, binDir: path.join(tmp, 'bins'), names: ['kube-apiserver'] });
    expect(status).toMatchObject({ path: null, source: null });
    expect(status?.problem).toContain('v1.30.0');
  });

  it('rebuilds a cached binary whose contents no longer match the recorded sha256, even with size and mtime restored', async () => {
    const { etcd } = await ensureBinaries(['etcd'], opts);
    const before = await fs.stat(etcd);
    const text = await fs.readFile(etcd, 'utf8');
    await fs.writeFile(etcd, text.replace('3.6.5', '3.6.6')); // same size, still runs
    await fs.utimes(etcd, before.atime, before.mtime);
    expect((await binaryStatus({ ...opts, names: ['etcd'] }))[0]?.source).toBeNull();
    await ensureBinaries(['etcd'], opts);
    expect(calls).toEqual([
      ['etcd-v3.6.5', 'etcd'],
      ['etcd-v3.6.5', 'etcd'],
    ]);
    expect(await fs.readFile(etcd, 'utf8')).toContain('3.6.5');
  });

  it('rebuilds when the manifest records another sha256 than the file has', async () => {
    await ensureBinaries(['etcd'], opts);
    const manifestFile = path.join(cache, 'bin', 'etcd-v3.6.5', 'manifest.json');
    const manifest = JSON.parse(await fs.readFile(manifestFile, 'utf8'));
    manifest.binaries.etcd.sha256 = '0'.repeat(64);
    await fs.writeFile(manifestFile, JSON.stringify(manifest));
    await ensureBinaries(['etcd'], opts);
    expect(calls).toHaveLength(2);
  });

  it('accepts a cache without verification stamps after hashing it once (e.g. restored by CI)', async () => {
    await ensureBinaries(['etcd'], opts);
    const stamp = path.join(cache, 'bin', 'etcd-v3.6.5', '.etcd.verified');
    await fs.rm(stamp);
    await ensureBinaries(['etcd'], opts);
    expect(calls).toHaveLength(1);
    await expect(fs.readFile(stamp, 'utf8')).resolves.toMatch(/:[0-9a-f]{64}$/);
  });

  it('builds once when two runs provision at the same time; the second waits and then finds the cache warm', async () => {
    const waits: string[] = [];
    const slow = { ...opts, builder: fakeBuilder(calls, { delayMs: 1500 }) };
    const [a, b] = await Promise.all([
      ensureBinaries(['etcd'], { ...slow, onProgress: (l) => l.startsWith('waiting') && waits.push('a') }),
      ensureBinaries(['etcd'], { ...slow, onProgress: (l) => l.startsWith('waiting') && waits.push('b') }),
    ]);
    expect(calls).toEqual([['etcd-v3.6.5', 'etcd']]);
    expect(waits).toHaveLength(1);
    expect(a.etcd).toBe(b.etcd);
  });

  it('stops when aborted and leaves the cache usable for the next run', async () => {
    const controller = new AbortController();
    const hanging = async (req: BuildRequest) => {
      calls.push([req.recipe.id]);
      controller.abort();
      req.signal?.throwIfAborted();
    };
    await expect(ensureBinaries(['etcd'], { ...opts, builder: hanging, signal: controller.signal })).rejects.toThrow(/abort/i);
    const { etcd } = await ensureBinaries(['etcd'], opts);
    expect(etcd).toBe(path.join(cache, 'bin', 'etcd-v3.6.5', 'etcd'));
  });

  it('fails a build whose result does not report the pinned version', async () => {
    const wrong = async (req: BuildRequest) => {
      for (const n of req.names) await fakeBinary(req.outDir, n, 'etcd Version: 3.5.0');
    };
    const err = await ensureBinaries(['etcd'], { ...opts, builder: wrong }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MissingPrerequisiteError);
    expect((err as Error).message).toContain('does not report etcd Version: 3.6.5');
    expect((err as Error).message).toContain('3.5.0');
  });

  it('says what is missing and how to provide it when there is no Go toolchain (exit 3)', async () => {
    const err = await ensureBinaries(['kube-apiserver', 'etcd'], { kubernetesVersion: 'v1.34.4', cacheDir: cache, artifacts: 'build' }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(MissingPrerequisiteError);
    expect((err as MissingPrerequisiteError).exitCode).toBe(3);
    expect((err as Error).message).toContain('no Go toolchain found');
    expect((err as Error).message).toContain('kube-apiserver v1.34.4 and etcd v3.6.5');
    expect((err as MissingPrerequisiteError).hint).toContain('install Go ≥ 1.26');
    expect((err as MissingPrerequisiteError).hint).toContain('--bin-dir');
  });
});

describe('provisioning: the Go build', () => {
  let tmp: string;
  let savedPath: string | undefined;
  let savedEnv: Record<string, string | undefined>;

  beforeEach(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-gobuild-'));
    savedPath = process.env.PATH;
    savedEnv = Object.fromEntries(['GONOSUMDB', 'SHIM_DIR', 'SHIM_FAIL', 'SHIM_BUILD_FAIL', 'SHIM_GO'].map((k) => [k, process.env[k]]));
    delete process.env.GONOSUMDB;
    process.env.SHIM_DIR = tmp;
    const src = path.join(tmp, 'modsrc');
    await fs.mkdir(src);
    await fs.writeFile(path.join(src, 'go.mod'), 'module open-cluster-management.io/ocm\n\ngo 1.25.0\n');
    await fs.writeFile(path.join(src, 'go.sum'), 'example.com/x v1.0.0 h1:abc=\n');
    // A `go` that answers like the real one for what we run, and records the build it was asked for.
    await fs.mkdir(path.join(tmp, 'gobin'));
    await fs.writeFile(
      path.join(tmp, 'gobin', 'go'),
      `#!/bin/sh
case "$1" in
  env) echo "\${SHIM_GO:-go1.26.0}" ;;
  mod)
    echo "$@ GONOSUMDB=$GONOSUMDB" > "$SHIM_DIR/mod-call"
    if [ -n "$SHIM_FAIL" ]; then echo '{"Path": "x", "Error": "x@v9.9.9: reading proxy: 403 Forbidden"}'; exit 1; fi
    echo '{"Dir": "'"$SHIM_DIR"'/modsrc", "GoMod": "'"$SHIM_DIR"'/modsrc/go.mod"}' ;;
  build)
    { echo "$@"; echo "CGO_ENABLED=$CGO_ENABLED GONOSUMDB=$GONOSUMDB GOFLAGS=$GOFLAGS"; cat go.mod; cat go.sum; } > "$SHIM_DIR/build-call"
    echo "go: downloading example.com/x v1.0.0" >&2
    echo "example.com/x/pkg" >&2
    if [ -n "$SHIM_BUILD_FAIL" ]; then echo "pkg/a.go:1:1: undefined: frobnicate" >&2; exit 2; fi
    while [ "$1" != "-o" ]; do shift; done; out="$2"; shift 2
    for pkg in "$@"; do name=\${pkg##*/}; printf '#!/bin/sh\\necho "%s version v1.2.1"\\n' "$name" > "$out$name"; chmod +x "$out$name"; done ;;
esac
`,
      { mode: 0o755 },
    );
    process.env.PATH = [path.join(tmp, 'gobin'), '/usr/bin', '/bin'].join(path.delimiter); // the shim uses cat and chmod
  });
  afterEach(async () => {
    process.env.PATH = savedPath;
    for (const [k, v] of Object.entries(savedEnv)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    await fs.rm(tmp, { recursive: true, force: true });
  });

  it('builds in a generated wrapper module with the version stamped, GONOSUMDB set and progress reported', async () => {
    const progress: string[] = [];
    const cache = path.join(tmp, 'cache');
    const found = await ensureBinaries(['registration', 'placement'], {
      kubernetesVersion: 'v1.34.4',
      cacheDir: cache,
      artifacts: 'build',
      onProgress: (l) => progress.push(l),
    });
    expect((await execa(found.registration, ['--version'])).stdout).toBe('registration version v1.2.1');
    const call = await fs.readFile(path.join(tmp, 'build-call'), 'utf8');
    expect(call).toContain('build -v -trimpath -ldflags -s -w -X open-cluster-management.io/ocm/pkg/version.versionFromGit=v1.2.1');
    expect(call).toContain(' open-cluster-management.io/ocm/cmd/registration open-cluster-management.io/ocm/cmd/placement');
    expect(call).toContain('CGO_ENABLED=0 GONOSUMDB=open-cluster-management.io,sigs.k8s.io/about-api GOFLAGS=-mod=mod');
    expect(call).toContain('require open-cluster-management.io/ocm v1.2.1');
    expect(call).toContain('example.com/x v1.0.0 h1:abc='); // upstream go.sum seeds the wrapper's
    expect(progress).toContain('OCM v1.2.1: fetching open-cluster-management.io/ocm@v1.2.1');
    expect(progress).toContain('OCM v1.2.1: downloading modules (1 so far)');
    expect(progress.at(-1)).toMatch(/^OCM v1\.2\.1: built registration, placement in \d+s$/);
    await expect(fs.readdir(path.join(cache, 'bin', 'ocm-v1.2.1'))).resolves.toEqual(expect.arrayContaining(['registration', 'placement', 'manifest.json']));
  });

  it('reports a failed build with the go command, its exit status and the end of its output (exit 3)', async () => {
    process.env.SHIM_BUILD_FAIL = '1';
    const err = await ensureBinaries(['work'], { kubernetesVersion: 'v1.34.4', cacheDir: path.join(tmp, 'cache'), artifacts: 'build' }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(MissingPrerequisiteError);
    const message = (err as Error).message;
    expect(message).toContain('building OCM v1.2.1 failed: go build -v -trimpath');
    expect(message).toContain('exited with status 2');
    expect(message).toContain('pkg/a.go:1:1: undefined: frobnicate');
    expect(message).not.toContain('go: downloading');
    await expect(fs.access(path.join(tmp, 'cache', 'bin', 'ocm-v1.2.1', 'work'))).rejects.toThrow();
  });

  it('finds a module source tree through go mod download, with GONOSUMDB for OCM, and reports proxy refusals (exit 3)', async () => {
    process.env.GONOSUMDB = 'corp.example';
    expect(await ensureGoModuleSource('open-cluster-management.io/api', 'v1.2.0')).toBe(path.join(tmp, 'modsrc'));
    expect(await fs.readFile(path.join(tmp, 'mod-call'), 'utf8')).toBe(
      'mod download -json open-cluster-management.io/api@v1.2.0 GONOSUMDB=corp.example,open-cluster-management.io,sigs.k8s.io/about-api\n',
    );
    process.env.SHIM_FAIL = '1';
    const err = await ensureGoModuleSource('open-cluster-management.io/api', 'v9.9.9').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MissingPrerequisiteError);
    expect((err as Error).message).toContain(
      'go mod download -json open-cluster-management.io/api@v9.9.9 failed (exit status 1): x@v9.9.9: reading proxy: 403 Forbidden',
    );
  });

  it('refuses a Go toolchain older than 1.25', async () => {
    process.env.SHIM_GO = 'go1.22.5';
    const err = await ensureBinaries(['work'], { kubernetesVersion: 'v1.34.4', cacheDir: path.join(tmp, 'cache'), artifacts: 'build' }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(MissingPrerequisiteError);
    expect((err as Error).message).toContain('Go 1.22 is too old');
  });
});

/** Mirrors that send release downloads to the test's server. */
function mirrorsTo(downloads: Record<string, string>): Mirrors {
  return { registries: {}, digests: {}, downloads };
}

describe('provisioning: release downloads', () => {
  let tmp: string;
  let server: http.Server;
  let base: string;
  let savedPath: string | undefined;
  let files: Map<string, Buffer>;
  let requests: string[];

  const sha = (b: Buffer | string) => crypto.createHash('sha256').update(b).digest('hex');

  beforeEach(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-dl-'));
    savedPath = process.env.PATH;
    process.env.PATH = [path.join(tmp, 'path'), '/usr/bin', '/bin'].join(path.delimiter); // tar and gzip for etcd's archive
    files = new Map();
    requests = [];
    server = http.createServer((req, res) => {
      requests.push(req.url ?? '');
      const body = files.get(req.url ?? '');
      res.writeHead(body ? 200 : 404).end(body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    process.env.PATH = savedPath;
    await new Promise((r) => server.close(r));
    await fs.rm(tmp, { recursive: true, force: true });
  });

  async function publishEtcd(): Promise<void> {
    const arch = process.arch === 'arm64' ? 'arm64' : 'amd64';
    const dir = path.join(tmp, 'tar', `etcd-v3.6.5-linux-${arch}`);
    await fakeBinary(dir, 'etcd');
    const archive = path.join(tmp, `etcd-v3.6.5-linux-${arch}.tar.gz`);
    await execa('tar', ['-czf', archive, '-C', path.join(tmp, 'tar'), `etcd-v3.6.5-linux-${arch}`]);
    const bytes = await fs.readFile(archive);
    files.set(`/etcd/v3.6.5/etcd-v3.6.5-linux-${arch}.tar.gz`, bytes);
    files.set('/etcd/v3.6.5/SHA256SUMS', Buffer.from(`${'1'.repeat(64)}  other.zip\n${sha(bytes)}  etcd-v3.6.5-linux-${arch}.tar.gz\n`));
  }

  function publishKubernetes(name: string, printed: string, published = sha(script(printed))): void {
    const arch = process.arch === 'arm64' ? 'arm64' : 'amd64';
    files.set(`/k8s/v1.34.4/bin/linux/${arch}/${name}`, Buffer.from(script(printed)));
    files.set(`/k8s/v1.34.4/bin/linux/${arch}/${name}.sha256`, Buffer.from(published));
  }

  it('fetches official releases verified by their published sha256 (etcd from its tar.gz) and builds nothing', async () => {
    publishKubernetes('kubectl', 'Client Version: v1.34.4');
    await publishEtcd();
    const calls: string[][] = [];
    const found = await ensureBinaries(['kubectl', 'etcd'], {
      kubernetesVersion: 'v1.34.4',
      cacheDir: path.join(tmp, 'cache'),
      artifacts: 'auto',
      mirrors: mirrorsTo({ 'https://dl.k8s.io/release': `${base}/k8s`, 'https://github.com/etcd-io/etcd/releases/download': `${base}/etcd` }),
      builder: fakeBuilder(calls),
    });
    expect(calls).toEqual([]);
    expect((await execa(found.etcd, ['--version'])).stdout).toBe('etcd Version: 3.6.5');
    expect((await execa(found.kubectl, ['version', '--client'])).stdout).toBe('Client Version: v1.34.4');
    const manifest = JSON.parse(await fs.readFile(path.join(tmp, 'cache', 'bin', 'etcd-v3.6.5', 'manifest.json'), 'utf8'));
    expect(manifest.source).toBe('download');
    expect(await fs.readdir(path.join(tmp, 'cache', 'bin', 'etcd-v3.6.5'))).toEqual(['.etcd.verified', 'etcd', 'manifest.json']);
  });

  it('stops with exit 7 when the published sha256 does not match, under auto too, building and caching nothing', async () => {
    publishKubernetes('kubectl', 'Client Version: v1.34.4', 'f'.repeat(64));
    const calls: string[][] = [];
    const err = (await ensureBinaries(['kubectl'], {
      kubernetesVersion: 'v1.34.4',
      cacheDir: path.join(tmp, 'cache'),
      artifacts: 'auto',
      mirrors: mirrorsTo({ 'https://dl.k8s.io/release': `${base}/k8s` }),
      builder: fakeBuilder(calls),
    }).catch((e: unknown) => e)) as Error;
    expect(exitCodeOf(err)).toBe(ExitCode.integrity);
    expect(err.message).toContain(`digest mismatch: expected sha256:${'f'.repeat(64)}, got sha256:`);
    expect(calls).toEqual([]);
    expect(await fs.readdir(path.join(tmp, 'cache', 'bin', 'kubernetes-v1.34.4')).catch(() => [])).toEqual([]);
  });

  it('falls back to building when the binary reports another version', async () => {
    publishKubernetes('kube-apiserver', 'Kubernetes v1.34.3');
    const calls: string[][] = [];
    const progress: string[] = [];
    await ensureBinaries(['kube-apiserver'], {
      kubernetesVersion: 'v1.34.4',
      cacheDir: path.join(tmp, 'cache'),
      artifacts: 'auto',
      mirrors: mirrorsTo({ 'https://dl.k8s.io/release': `${base}/k8s` }),
      builder: fakeBuilder(calls),
      onProgress: (l) => progress.push(l),
    });
    expect(calls).toEqual([['kubernetes-v1.34.4', 'kube-apiserver']]);
    expect(progress.join('\n')).toContain('does not report v1.34.4 (it says: Kubernetes v1.34.3)');
  });

  it('gives up on an unreachable release server after one attempt and builds', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const calls: string[][] = [];
    const progress: string[] = [];
    await ensureBinaries(['kube-apiserver', 'kubectl'], {
      kubernetesVersion: 'v1.34.4',
      cacheDir: path.join(tmp, 'cache'),
      artifacts: 'auto',
      mirrors: mirrorsTo({ 'https://dl.k8s.io/release': `http://127.0.0.1:${port}/k8s` }),
      builder: fakeBuilder(calls),
      onProgress: (l) => progress.push(l),
    });
    expect(calls).toEqual([['kubernetes-v1.34.4', 'kube-apiserver', 'kubectl']]);
    expect(progress.filter((l) => l.includes(`downloading http://127.0.0.1:${port}/`))).toHaveLength(1);
    expect(progress.join('\n')).toContain('ECONNREFUSED');
  });

  it("fetches kind's release binary through the mirrors, held to its pin (the mirrors file's digest replaces ours)", async () => {
    const platform = `${process.platform}-${process.arch === 'arm64' ? 'arm64' : 'amd64'}`;
    const binary = script('kind v0.33.0 go1.26.1 linux/amd64');
    const official = `https://github.com/kubernetes-sigs/kind/releases/download/v0.33.0/kind-${platform}`;
    files.set(`/gh/kubernetes-sigs/kind/releases/download/v0.33.0/kind-${platform}`, Buffer.from(binary));
    files.set(`/gh/kubernetes-sigs/kind/releases/download/v0.33.0/kind-${platform}.sha256sum`, Buffer.from(`${sha(binary)}  kind-${platform}\n`));
    const downloads = { 'https://github.com': `${base}/gh` };
    const calls: string[][] = [];
    const progress: string[] = [];
    // Our pin is the real release's sha256, which this stand-in does not have: refused with exit 7 (auto too), nothing built.
    const refused = (await ensureBinaries(['kind'], {
      cacheDir: path.join(tmp, 'pinned'),
      artifacts: 'auto',
      mirrors: mirrorsTo(downloads),
      builder: fakeBuilder(calls),
      onProgress: (l) => progress.push(l),
    }).catch((e: unknown) => e)) as Error;
    expect(exitCodeOf(refused)).toBe(ExitCode.integrity);
    expect(calls).toEqual([]);
    expect(refused.message).toContain(
      `kind-${platform} as ${base}/gh/kubernetes-sigs/kind/releases/download/v0.33.0/kind-${platform}.sha256sum publishes it: digest mismatch: expected sha256:`,
    );
    expect(refused.message).toContain(`, got sha256:${sha(binary)}; nothing was cached`);
    // A mirrors file that pins this binary's sha256 lets it through.
    const found = await ensureBinaries(['kind'], {
      cacheDir: path.join(tmp, 'mirrored'),
      artifacts: 'official',
      mirrors: { registries: {}, downloads, digests: { [official]: `sha256:${sha(binary)}` } },
      builder: fakeBuilder(calls),
    });
    expect(calls).toHaveLength(0);
    expect((await execa(found.kind, ['version'])).stdout).toBe('kind v0.33.0 go1.26.1 linux/amd64');
  });

  it('under official, builds nothing and names what could not be fetched (exit 3)', async () => {
    const calls: string[][] = [];
    const err = (await ensureBinaries(['kubectl', 'work'], {
      kubernetesVersion: 'v1.34.4',
      cacheDir: path.join(tmp, 'cache'),
      artifacts: 'official',
      mirrors: { ...mirrorsTo({ 'https://dl.k8s.io/release': `${base}/k8s` }), registries: { 'quay.io': base } },
      builder: fakeBuilder(calls),
    }).catch((e: unknown) => e)) as MissingPrerequisiteError;
    expect(calls).toEqual([]);
    expect(err.exitCode).toBe(3);
    expect(err.message.split('\n')).toEqual([
      'artifacts official: could not fetch kubectl v1.34.4 and work v1.2.1:',
      `  kubectl: ${base}/k8s/v1.34.4/bin/linux/${process.arch === 'arm64' ? 'arm64' : 'amd64'}/kubectl.sha256: HTTP 404`,
      `  work: registry quay.io did not serve the image: HTTP 404 for ${base}/v2/open-cluster-management/work/manifests/v1.2.1`,
    ]);
    expect(await fs.readdir(path.join(tmp, 'cache', 'bin'), { recursive: true })).toEqual(['kubernetes-v1.34.4', 'ocm-v1.2.1']); // nothing cached in them
  });

  it('does not try downloads with $OCM_LAB_NO_DOWNLOAD=1', async () => {
    publishKubernetes('kubectl', 'Client Version: v1.34.4');
    const saved = process.env.OCM_LAB_NO_DOWNLOAD;
    process.env.OCM_LAB_NO_DOWNLOAD = '1';
    try {
      const calls: string[][] = [];
      await ensureBinaries(['kubectl'], {
        kubernetesVersion: 'v1.34.4',
        cacheDir: path.join(tmp, 'cache'),
        mirrors: mirrorsTo({ 'https://dl.k8s.io/release': `${base}/k8s` }),
        builder: fakeBuilder(calls),
      });
      expect(calls).toHaveLength(1);
      expect(requests).toEqual([]);
    } finally {
      if (saved === undefined) delete process.env.OCM_LAB_NO_DOWNLOAD;
      else process.env.OCM_LAB_NO_DOWNLOAD = saved;
    }
  });
});
