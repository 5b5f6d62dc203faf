import { describe, expect, it } from 'vitest';
import { withKubernetesVersion } from '../../src/config/kubernetes-version.js';
import { parseLabConfig } from '../../src/config/parse.js';
import { renderLabConfig } from '../../src/config/render.js';
import type { HostFacts } from '../../src/host/facts.js';
import { runtimeDefinition } from '../../src/runtime/registry.js';
import { builtNodeVerdict, officialNodeVerdict } from '../../src/runtime/kind/verdicts.js';
import { kindRelease, recipesFor } from '../../src/provision/recipes.js';
import { acceptedKubernetesVersions, kubernetesPatchFor, officialNodeImage } from '../../src/provision/versions.js';
import { LabError } from '../../src/errors.js';
import { addonVocabulary } from '../../src/addons/registry.js';

const LAB = 'apiVersion: ocm-lab/v1alpha1\nkind: Lab\nvpcs: [{name: v1}]\nclusters: [{name: hub, vpc: v1, hub: true}]\n';

describe('versions: which patch each source gives', () => {
  it('pairs every minor with the pinned kind release node image, by digest', () => {
    expect(officialNodeImage('v1.37.2')).toEqual({
      kubernetes: 'v1.37.0',
      tag: 'kindest/node:v1.37.0',
      digest: 'sha256:a1ed56cfb0e7b93589bdf97c8cd566405a265939e3620fc4f5de89adff580ae5',
    });
    expect(officialNodeImage('v1.36.3')?.kubernetes).toBe('v1.36.4');
    expect(officialNodeImage('v1.35.4')?.kubernetes).toBe('v1.35.8');
    expect(officialNodeImage('v1.33.0')).toBeUndefined();
    expect(acceptedKubernetesVersions().slice(0, 6)).toEqual(['v1.37', 'v1.37.2', 'v1.37.0', 'v1.36', 'v1.36.3', 'v1.36.4']);
  });

  it('gives a minor the patch of either source, an exact patch exactly that or a problem naming both offers', () => {
    expect(kubernetesPatchFor('v1.36', 'built')).toEqual({ version: 'v1.36.3' });
    expect(kubernetesPatchFor('v1.36', 'official-node')).toEqual({ version: 'v1.36.4' });
    expect(kubernetesPatchFor('v1.36.4', 'official-node')).toEqual({ version: 'v1.36.4' });
    expect(kubernetesPatchFor('v1.36.3', 'built')).toEqual({ version: 'v1.36.3' });
    expect(kubernetesPatchFor('v1.36.4', 'built')).toEqual({
      problem:
        "Kubernetes v1.36.4 is not what this lab's source gives: the build here (and dl.k8s.io) gives v1.36.3 " +
        "(v1.36.3 built here, v1.36.4 from kind v0.33.0's node image); write v1.36 to take either",
    });
    expect('problem' in kubernetesPatchFor('v1.36.3', 'official-node')).toBe(true);
    expect('problem' in kubernetesPatchFor('v1.20', 'built')).toBe(true);
  });

  it('lab files and --kubernetes-version take a minor or kind’s patch, keeping the built patch for the binaries', () => {
    const minor = parseLabConfig(`kubernetesVersion: v1.36\n${LAB}`, '/labs/lab.yaml', addonVocabulary());
    expect(minor.kubernetesVersion).toBe('v1.36.3');
    expect(minor.kubernetesRequest).toBe('v1.36');
    expect(parseLabConfig(renderLabConfig(minor), '/labs/lab.yaml', addonVocabulary())).toEqual(minor);
    const exact = parseLabConfig(`kubernetesVersion: v1.36.3\n${LAB}`, '/labs/lab.yaml', addonVocabulary());
    expect(exact).toMatchObject({ kubernetesVersion: 'v1.36.3', kubernetesRequest: 'v1.36.3' });
    expect(withKubernetesVersion(minor, '1.35.8')).toMatchObject({ kubernetesVersion: 'v1.35.4', kubernetesRequest: 'v1.35.8' });
    expect(withKubernetesVersion(minor, 'v1.37.2').kubernetesRequest).toBe('v1.37.2');
    expect(parseLabConfig(LAB, '/labs/lab.yaml', addonVocabulary())).toMatchObject({ kubernetesVersion: 'v1.37.2', kubernetesRequest: 'v1.37' });
    const err = (() => {
      try {
        withKubernetesVersion(minor, 'v1.36.9');
      } catch (e) {
        return e as LabError;
      }
      return null;
    })();
    expect(err?.exitCode).toBe(2);
    expect(err?.hint).toBe("for Kubernetes 1.36, use --kubernetes-version v1.36 (v1.36.3 built here, v1.36.4 from kind v0.33.0's node image)");
  });

  it('reads artifacts: and mirrors: (relative to the lab file) and writes them back', () => {
    const lab = parseLabConfig(`artifacts: official\nmirrors: mirrors.yaml\n${LAB}`, '/labs/lab.yaml', addonVocabulary());
    expect(lab.artifacts).toBe('official');
    expect(lab.mirrorsFile).toBe('/labs/mirrors.yaml');
    expect(parseLabConfig(renderLabConfig(lab), '/labs/lab.yaml', addonVocabulary())).toEqual(lab);
    expect(() => parseLabConfig(`artifacts: fast\n${LAB}`, '/labs/lab.yaml', addonVocabulary())).toThrow(
      'artifacts = "fast": is not where artifacts can come from; use one of: official, build, auto',
    );
  });
});

describe('kind release binaries', () => {
  it('are pinned per version, os and arch, with the .sha256sum beside them', () => {
    const source = kindRelease('v0.33.0', 'linux/arm64');
    expect(source?.kind).toBe('file');
    if (source?.kind !== 'file') return;
    expect(source.file('kind')).toEqual({
      url: 'https://github.com/kubernetes-sigs/kind/releases/download/v0.33.0/kind-linux-arm64',
      sumsUrl: 'https://github.com/kubernetes-sigs/kind/releases/download/v0.33.0/kind-linux-arm64.sha256sum',
      fileName: 'kind-linux-arm64',
      sha256: '20022bee6cfcd5086cb7234d218e3454e6090022f2a8f55d1fa7fcf42c3867a2',
    });
    // windows/amd64 is pinned since issue 38.4 (kind publishes no windows/arm64 binary): the asset has no .exe.
    const windows = kindRelease('v0.33.0', 'windows/amd64');
    expect(windows?.kind === 'file' && windows.file('kind').url).toBe('https://github.com/kubernetes-sigs/kind/releases/download/v0.33.0/kind-windows-amd64');
    expect(kindRelease('v0.33.0', 'windows/arm64')).toBeUndefined();
    expect(kindRelease('v0.32.0', 'linux/amd64')).toBeUndefined();
    expect(recipesFor().find((r) => r.family === 'kind')?.release).toBeDefined();
  });
});

describe('what this machine can run', () => {
  // The verdicts moved from provision/host-support.ts into each runtime's definition (runtime/kind/verdicts.ts,
  // runtime/local/verdicts.ts); the facts are host/facts.ts's, the cgroup version the engine's where it answers.
  const facts = (over: { cgroupV2?: boolean; docker?: { available: boolean }; root?: boolean; platform?: string } = {}): HostFacts => ({
    platform: { os: over.platform ?? 'linux', arch: 'amd64' },
    root: over.root ?? true,
    inotify: { maxUserWatches: null, maxUserInstances: null },
    memAvailableBytes: null,
    hostCgroupVersion: '2',
    engine: { available: over.docker?.available ?? true, cgroupVersion: over.cgroupV2 === false ? '1' : '2', architecture: 'amd64', osType: 'linux' },
  });

  it('says why not: cgroup v1 for kind images >= 1.35, Docker, root', async () => {
    const [kind, local] = await Promise.all([runtimeDefinition('kind'), runtimeDefinition('local')]);
    expect(officialNodeVerdict('v1.37.2', facts())).toEqual({ ok: true });
    expect(officialNodeVerdict('v1.37.2', facts({ cgroupV2: false }))).toEqual({
      ok: false,
      why: "kind's published images for Kubernetes >= 1.35 need cgroup v2 (the Docker engine runs v1)",
    });
    expect(officialNodeVerdict('v1.34.4', facts({ cgroupV2: false }))).toEqual({ ok: true });
    expect(officialNodeVerdict('v1.34.4', facts({ docker: { available: false } }))).toEqual({ ok: false, why: 'Docker does not answer' });
    expect(builtNodeVerdict(facts({ root: false })).why).toContain('needs root');
    expect(local.verdicts('v1.37.2', facts({ root: false, platform: 'darwin' }))[0]?.verdict.why).toBe(
      'network namespaces are Linux only; needs root (network namespaces, iptables)',
    );
    expect(kind.kubernetesSource?.('v1.36.3', facts())).toBe('official-node');
    expect(kind.kubernetesSource?.('v1.36.3', facts({ cgroupV2: false }))).toBe('built');
    expect(local.kubernetesSource).toBeUndefined();
  });

  it("takes the cgroup version from the engine when it answers, else the host's", () => {
    const v1Host: HostFacts = { ...facts(), hostCgroupVersion: '1', engine: null };
    expect(officialNodeVerdict('v1.37.2', v1Host).why).toContain('this host has v1');
    const v2EngineOnV1Host: HostFacts = { ...v1Host, engine: { available: true, cgroupVersion: '2', architecture: 'arm64', osType: 'linux' } };
    expect(officialNodeVerdict('v1.37.2', v2EngineOnV1Host)).toEqual({ ok: true });
  });
});
