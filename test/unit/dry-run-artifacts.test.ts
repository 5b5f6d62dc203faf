import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, afterEach, describe, expect, it, vi } from 'vitest';
import { planArtifacts } from '../../src/cli/dry-run/artifacts.js';
import { planLab } from '../../src/cli/dry-run/lab-plan.js';
import { defaultLabConfig } from '../../src/config/index.js';
import type { HostFacts } from '../../src/host/facts.js';
import { HOST_PLATFORMS } from '../../src/provision/platform.js';
import type { ArtifactSource } from '../../src/provision/sources.js';
import { KIND_VERSION, KUBERNETES_VERSION, officialNodeImage } from '../../src/provision/versions.js';
import { runtimeDefinition } from '../../src/runtime/registry.js';

/** The facts of a Mac with Docker Desktop (its VM: linux, cgroup v2, arm64), as host/facts.ts would read them there. */
const MAC: HostFacts = {
  platform: { os: 'darwin', arch: 'arm64' },
  root: false,
  inotify: { maxUserWatches: null, maxUserInstances: null },
  memAvailableBytes: 8 * 1024 ** 3,
  hostCgroupVersion: null,
  engine: { available: true, cgroupVersion: '2', architecture: 'arm64', osType: 'linux' },
};

const one = (artifacts: ArtifactSource[], name: string) => artifacts.find((a) => a.artifact === name);

describe('up --dry-run: the artifacts and where each comes from', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-dry-run-artifacts-'));
  });
  afterEach(() => {
    vi.unstubAllEnvs();
  });
  afterAll(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('OCM_LAB_HOST_PLATFORM=darwin/arm64: the JSON names the darwin/arm64 kubectl and kind, and the facts that decided', async () => {
    vi.stubEnv('OCM_LAB_HOME', path.join(dir, 'labs'));
    vi.stubEnv('OCM_LAB_HOST_PLATFORM', 'darwin/arm64');
    vi.stubEnv('OCM_LAB_ARTIFACTS', '');
    vi.stubEnv('OCM_LAB_NO_DOWNLOAD', '');
    const { dryRun, text } = await planLab('kind', defaultLabConfig(), { action: 'up', host: MAC });
    const json = JSON.parse(JSON.stringify(dryRun)) as typeof dryRun;
    const artifacts = json.artifacts!;
    expect(Object.keys(json)).toEqual(['lab', 'action', 'exists', 'runtime', 'plan', 'installs', 'artifacts', 'preflight']);
    expect(artifacts.path).toBe('official');
    expect(artifacts.facts).toEqual({
      platform: 'darwin/arm64',
      platformFrom: 'OCM_LAB_HOST_PLATFORM',
      engine: { available: true, osType: 'linux' },
      cgroupVersion: { value: '2', from: 'engine' },
      architecture: { value: 'arm64', from: 'engine' },
    });
    expect(one(artifacts.artifacts, 'kubectl')).toEqual({
      artifact: 'kubectl',
      version: KUBERNETES_VERSION,
      from: 'download',
      url: `https://dl.k8s.io/release/${KUBERNETES_VERSION}/bin/darwin/arm64/kubectl`,
      checksumFile: `https://dl.k8s.io/release/${KUBERNETES_VERSION}/bin/darwin/arm64/kubectl.sha256`,
    });
    expect(one(artifacts.artifacts, 'kind')).toEqual({
      artifact: 'kind',
      version: KIND_VERSION,
      from: 'download',
      url: `https://github.com/kubernetes-sigs/kind/releases/download/${KIND_VERSION}/kind-darwin-arm64`,
      checksumFile: `https://github.com/kubernetes-sigs/kind/releases/download/${KIND_VERSION}/kind-darwin-arm64.sha256sum`,
      sha256: '0c8c7dbe5e23594a198b786c4bc13dacc101fa6196b0cb0b23a1ca44e61f4b4f',
    });
    const official = officialNodeImage(KUBERNETES_VERSION)!;
    expect(one(artifacts.artifacts, 'node image')).toEqual({
      artifact: 'node image',
      version: official.kubernetes,
      from: 'image',
      image: official.tag,
      digest: official.digest,
    });
    // ocm-lab's own image is built here on the official Node.js image; the registry's image is distribution's: both by digest.
    expect(one(artifacts.artifacts, 'Node.js base image')).toMatchObject({
      from: 'image',
      image: 'node:24-bookworm-slim',
      digest: expect.stringMatching(/^sha256:/),
    });
    expect(one(artifacts.artifacts, 'registry image')).toMatchObject({ from: 'image', image: 'registry:2', digest: expect.stringMatching(/^sha256:/) });
    expect(text).toContain('Artifacts: official (default): the publishers first, not asked by --dry-run; what cannot be fetched is built here');
    expect(text).toContain("decided with: platform darwin/arm64 (OCM_LAB_HOST_PLATFORM), a Docker engine answers (linux), cgroup v2 (the engine's)");
    expect(text).toMatch(
      new RegExp(`kubectl ${KUBERNETES_VERSION} +download: https://dl\\.k8s\\.io/release/${KUBERNETES_VERSION}/bin/darwin/arm64/kubectl, checked`),
    );
  });

  it('every platform pair: kubectl for it (kubectl.exe on Windows); kind downloaded where kind publishes it, else built here', async () => {
    const kind = await runtimeDefinition('kind');
    for (const pair of HOST_PLATFORMS) {
      vi.stubEnv('OCM_LAB_HOST_PLATFORM', pair);
      const [os, arch] = pair.split('/') as [string, string];
      const a = await planArtifacts(kind, defaultLabConfig(), { artifacts: 'official' }, { ...MAC, platform: { os, arch } });
      expect(one(a.artifacts, 'kubectl')?.url).toBe(
        `https://dl.k8s.io/release/${KUBERNETES_VERSION}/bin/${os}/${arch}/kubectl${os === 'windows' ? '.exe' : ''}`,
      );
      const kindSource = one(a.artifacts, 'kind')!;
      if (pair === 'windows/arm64') expect(kindSource).toMatchObject({ from: 'built here', builtFrom: `sigs.k8s.io/kind@${KIND_VERSION}` });
      else expect(kindSource.url).toBe(`https://github.com/kubernetes-sigs/kind/releases/download/${KIND_VERSION}/kind-${os}-${arch}`);
    }
  });

  it('a cgroup v1 engine, or --artifacts build: the node image is built here, and the dry run says which facts decided', async () => {
    const kind = await runtimeDefinition('kind');
    const v1: HostFacts = { ...MAC, platform: { os: 'linux', arch: 'amd64' }, engine: { ...MAC.engine!, cgroupVersion: '1', architecture: 'amd64' } };
    const onV1 = await planArtifacts(kind, defaultLabConfig(), { artifacts: 'official' }, v1);
    expect(one(onV1.artifacts, 'node image')).toMatchObject({ from: 'built here', version: KUBERNETES_VERSION });
    expect(one(onV1.artifacts, 'kubeadm')).toMatchObject({ from: 'download', url: `https://dl.k8s.io/release/${KUBERNETES_VERSION}/bin/linux/amd64/kubeadm` });
    expect(onV1.facts.cgroupVersion).toEqual({ value: '1', from: 'engine' });
    const built = await planArtifacts(kind, defaultLabConfig(), { artifacts: 'build' }, v1);
    expect(built.path).toBe('build');
    expect(built.artifacts.every((x) => x.from === 'built here')).toBe(true);
    expect(one(built.artifacts, 'kubectl')?.builtFrom).toBe(`k8s.io/kubernetes@${KUBERNETES_VERSION}`);
  });

  it('local and existing list their own artifacts', async () => {
    const linux: HostFacts = { ...MAC, platform: { os: 'linux', arch: 'amd64' }, hostCgroupVersion: '2', engine: null };
    const local = await planArtifacts(await runtimeDefinition('local'), defaultLabConfig(), { artifacts: 'official' }, linux);
    expect(local.artifacts.map((a) => a.artifact)).toEqual(
      expect.arrayContaining(['kube-apiserver', 'kube-controller-manager', 'kubectl', 'etcd', 'registration']),
    );
    expect(one(local.artifacts, 'registration')).toMatchObject({
      from: 'image',
      image: expect.stringMatching(/^quay\.io\/open-cluster-management\/registration:/),
    });
    expect(local.facts.engine).toBeNull();
    expect(local.facts.cgroupVersion).toEqual({ value: '2', from: 'host' });
    const existing = await planArtifacts(await runtimeDefinition('existing'), defaultLabConfig(), { artifacts: 'official' }, linux);
    expect(existing.artifacts[0]).toMatchObject({ artifact: 'kubectl', from: 'download' });
  });

  it('a bad OCM_LAB_HOST_PLATFORM is exit 2 naming the variable and the accepted values', async () => {
    vi.stubEnv('OCM_LAB_HOST_PLATFORM', 'macos/m1');
    await expect(planArtifacts(await runtimeDefinition('kind'), defaultLabConfig(), {}, MAC)).rejects.toMatchObject({
      exitCode: 2,
      message: `OCM_LAB_HOST_PLATFORM=macos/m1: not a platform ocm-lab plans for; use one of ${HOST_PLATFORMS.join(', ')}`,
    });
  });
});
