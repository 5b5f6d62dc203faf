import { describe, expect, it } from 'vitest';
import {
  ALL_BINARIES,
  GoBuildProgress,
  KIND_NODE_BINARIES,
  KUBERNETES_BINARIES,
  recipeOf,
  goBinaryName,
  kubernetesLdflags,
  ocmLdflags,
  printsVersion,
  recipesFor,
  stagingModules,
  wrapperGoMod,
} from '../../src/provision/index.js';

const upstreamGoMod = `module k8s.io/kubernetes

go 1.24.0

godebug default=go1.24

require (
	github.com/foo/bar v1.2.3
	k8s.io/api v0.0.0
	k8s.io/apimachinery v0.0.0
	k8s.io/kube-aggregator v0.0.0 // indirect
	k8s.io/utils v0.0.0-20250604170112-4c0f3b243397
)

require k8s.io/client-go v0.0.0

replace k8s.io/api => ./staging/src/k8s.io/api
`;

describe('wrapper module', () => {
  const [k8s, etcd, ocm] = recipesFor({ kubernetes: 'v1.34.4' });

  it('replaces exactly the k8s.io modules the upstream go.mod requires at v0.0.0 with the published v0.<minor>.<patch>', () => {
    expect(stagingModules(upstreamGoMod)).toEqual(['k8s.io/api', 'k8s.io/apimachinery', 'k8s.io/client-go', 'k8s.io/kube-aggregator']);
    const mod = wrapperGoMod(k8s!, upstreamGoMod, '1.24.0');
    expect(mod).toMatch(/^module \S+\n\ngo 1\.24\.0\n\nrequire k8s\.io\/kubernetes v1\.34\.4\n/);
    for (const m of ['api', 'apimachinery', 'client-go', 'kube-aggregator']) expect(mod).toContain(`\tk8s.io/${m} => k8s.io/${m} v0.34.4\n`);
    expect(mod).not.toContain('k8s.io/utils');
    expect(mod).not.toContain('github.com/foo/bar');
    expect(mod).not.toContain('./staging');
  });

  it('derives the staging version from the Kubernetes version', () => {
    const other = recipesFor({ kubernetes: 'v1.36.3' })[0]!;
    expect(wrapperGoMod(other, upstreamGoMod, '1.24.0')).toContain('k8s.io/api => k8s.io/api v0.36.3');
  });

  it('adds no replace block for modules without staging modules', () => {
    expect(wrapperGoMod(etcd!, upstreamGoMod, '1.24.0')).not.toContain('replace');
    expect(wrapperGoMod(ocm!, '', '1.25.0')).toBe(`module ocm-lab.local/build/ocm-v1.2.1\n\ngo 1.25.0\n\nrequire open-cluster-management.io/ocm v1.2.1\n`);
  });

  it('stamps the version into both Kubernetes version packages and into OCM', () => {
    const flags = kubernetesLdflags('v1.34.4');
    for (const pkg of ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version']) {
      expect(flags).toContain(`-X ${pkg}.gitVersion=v1.34.4`);
      expect(flags).toContain(`-X ${pkg}.gitMajor=1`);
      expect(flags).toContain(`-X ${pkg}.gitMinor=34`);
    }
    expect(ocmLdflags('v1.2.1')).toEqual([
      '-X open-cluster-management.io/ocm/pkg/version.versionFromGit=v1.2.1',
      '-X open-cluster-management.io/ocm/pkg/version.majorFromGit=1',
      '-X open-cluster-management.io/ocm/pkg/version.minorFromGit=2',
    ]);
    expect(ocm!.noSumDb).toContain('open-cluster-management.io');
  });

  it('names built binaries like go build -o dir/ does', () => {
    expect(goBinaryName('k8s.io/kubernetes/cmd/kube-apiserver')).toBe('kube-apiserver');
    expect(goBinaryName('go.etcd.io/etcd/server/v3')).toBe('server');
  });
});

describe('version check', () => {
  const [k8s, etcd, ocm] = recipesFor({ kubernetes: 'v1.34.4' });
  it('accepts the pinned version only as a whole word', () => {
    expect(printsVersion('Kubernetes v1.34.4', k8s!)).toBe(true);
    expect(printsVersion('Client Version: v1.34.4\nKustomize Version: v5.7.1', k8s!)).toBe(true);
    expect(printsVersion('Client Version: v1.34.40', k8s!)).toBe(false);
    expect(printsVersion('Client Version: v1.34.4-dispatcher', k8s!)).toBe(false);
    expect(printsVersion('Kubernetes v0.0.0-master+$Format:%H$', k8s!)).toBe(false);
    expect(printsVersion('etcd Version: 3.6.5\nGit SHA: Not provided', etcd!)).toBe(true);
    expect(printsVersion('etcd Version: 3.6.50', etcd!)).toBe(false);
    expect(printsVersion('registration version v1.2.1', ocm!)).toBe(true);
    expect(printsVersion('registration version <unknown>', ocm!)).toBe(false);
  });
});

describe('go build progress', () => {
  it('counts downloads, names compiled packages, announces linking and throttles', () => {
    let now = 0;
    const lines: string[] = [];
    const p = new GoBuildProgress(
      (l) => lines.push(l),
      { 'k8s.io/kubernetes/cmd/kubectl': 'kubectl' },
      1000,
      () => now,
    );
    p.feed('go: downloading github.com/a/b v1.0.0\ngo: down');
    p.feed('loading github.com/c/d v1.0.0\n');
    expect(lines).toEqual(['downloading modules (1 so far)']); // the second came within the interval
    now = 1500;
    p.feed('go: downloading github.com/e/f v1.0.0\nk8s.io/api/core/v1\n');
    expect(lines).toEqual(['downloading modules (1 so far)', 'downloading modules (3 so far)']);
    now = 3000;
    p.feed('k8s.io/apimachinery/pkg/runtime\nsome/file.go:3:2: undefined: x\n');
    expect(lines.at(-1)).toBe('compiling k8s.io/apimachinery/pkg/runtime (2 packages)');
    p.feed('k8s.io/kubernetes/cmd/kubectl\n');
    expect(lines.at(-1)).toBe('linking kubectl');
    now = 65_000;
    p.heartbeat();
    expect(lines.at(-1)).toBe('linking kubectl — 1m05s so far');
  });
});

describe('kind node image recipes', () => {
  const recipes = recipesFor({ kubernetes: 'v1.34.4' });

  it('keeps the kind-only binaries out of the default setup', () => {
    for (const name of KIND_NODE_BINARIES.filter((n) => !KUBERNETES_BINARIES.includes(n))) expect(ALL_BINARIES).not.toContain(name);
    expect(KIND_NODE_BINARIES).toEqual(expect.arrayContaining(['kubeadm', 'kubelet', 'kube-scheduler', 'kube-proxy', 'etcd', 'crictl', 'coredns', 'kind']));
  });

  it('builds kubeadm, kubelet, kube-scheduler and kube-proxy with the Kubernetes recipe; one etcd, the one kubeadm names', () => {
    for (const name of ['kubeadm', 'kubelet', 'kube-scheduler', 'kube-proxy'] as const) {
      expect(recipeOf(name, recipes).id).toBe('kubernetes-v1.34.4');
      expect(recipeOf(name, recipes).packages[name]).toBe(`k8s.io/kubernetes/cmd/${name}`);
    }
    expect(recipeOf('kubeadm', recipes).versionArgs('kubeadm')).toEqual(['version', '-o', 'short']);
    expect(recipeOf('etcd', recipes).id).toBe('etcd-v3.6.5');
  });

  it('moves etcd, crictl and CoreDNS with the Kubernetes release; the default is the newest', () => {
    const ids = (kubernetes?: string) =>
      recipesFor(kubernetes ? { kubernetes } : {})
        .map((r) => r.id)
        .filter((id) => /^(kubernetes|etcd|ocm|cri-tools|coredns|kind)-v/.test(id));
    expect(ids()).toEqual(ids('v1.37.2'));
    expect(ids('v1.37.2')).toEqual(['kubernetes-v1.37.2', 'etcd-v3.7.0', 'ocm-v1.2.1', 'cri-tools-v1.36.0', 'coredns-v1.14.6', 'kind-v0.33.0']);
    expect(ids('v1.36.3')).toEqual(['kubernetes-v1.36.3', 'etcd-v3.6.8', 'ocm-v1.2.1', 'cri-tools-v1.36.0', 'coredns-v1.14.2', 'kind-v0.33.0']);
    expect(ids('v1.35.4').slice(0, 2)).toEqual(['kubernetes-v1.35.4', 'etcd-v3.6.6']);
    expect(() => recipesFor({ kubernetes: 'v1.33.2' })).toThrow(/v1\.33\.2 is not one of v1\.37\.2, v1\.36\.3/);
  });

  it('pins crictl, CoreDNS and kind, each recognising its own version output', () => {
    const crictl = recipeOf('crictl', recipes);
    expect([crictl.module, crictl.version, crictl.packages.crictl]).toEqual(['sigs.k8s.io/cri-tools', 'v1.34.0', 'sigs.k8s.io/cri-tools/cmd/crictl']);
    expect(crictl.ldflags).toEqual(['-X sigs.k8s.io/cri-tools/pkg/version.Version=v1.34.0']);
    expect(printsVersion('crictl version v1.34.0', crictl)).toBe(true);
    expect(printsVersion('crictl version unknown', crictl)).toBe(false);
    const coredns = recipeOf('coredns', recipes);
    expect([coredns.module, coredns.version]).toEqual(['github.com/coredns/coredns', 'v1.12.1']);
    expect(coredns.versionArgs('coredns')).toEqual(['-version']);
    expect(printsVersion('CoreDNS-1.12.1\nlinux/amd64, go1.26.8, ', coredns)).toBe(true);
    expect(printsVersion('CoreDNS-1.12.10', coredns)).toBe(false);
    const kind = recipeOf('kind', recipes);
    expect([kind.module, kind.packages.kind, goBinaryName(kind.packages.kind!)]).toEqual(['sigs.k8s.io/kind', 'sigs.k8s.io/kind', 'kind']);
    expect(printsVersion('kind v0.33.0 go1.26.8 linux/amd64', kind)).toBe(true);
    expect(printsVersion('kind v0.33.0-alpha+abc go1.26.8 linux/amd64', kind)).toBe(false);
  });
});
