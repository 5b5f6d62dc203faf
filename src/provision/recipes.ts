import { executableName, hostPlatform, platformName, type HostPlatform } from './platform.js';
import { KIND_RELEASE_SHA256, KIND_VERSION, KUBECTL_RELEASE_SHA256, KUBERNETES_VERSION, OCM_VERSION, requireKubernetesRelease } from './versions.js';

export type BinaryName =
  // Upstream's Go addons, for labs that choose `implementation: upstream` (never part of a plain `setup`):
  | 'cluster-proxy-manager'
  | 'cluster-proxy-agent'
  | 'proxy-server'
  | 'proxy-agent'
  | 'managed-serviceaccount'
  /** Upstream's Go cluster-gateway apiserver, only for `npm run bench -- gateway`'s side-by-side comparison (never part of a lab). */
  | 'cluster-gateway-upstream'
  | 'kube-apiserver'
  | 'kube-controller-manager'
  | 'kubectl'
  | 'etcd'
  | 'registration-operator'
  | 'registration'
  | 'work'
  | 'placement'
  | 'addon'
  // The kind runtime's node image and the images it preloads (never part of a plain `setup`):
  | 'kubeadm'
  | 'kubelet'
  | 'kube-scheduler'
  | 'kube-proxy'
  | 'crictl'
  | 'coredns'
  | 'kind'
  /** The GitHub Actions workflow linter the test suite runs over .github/workflows (never part of `setup`). */
  | 'actionlint'
  /** The workflow runner that runs the action and the workflows here (test:connected; never part of `setup`). */
  | 'act';

export const KUBERNETES_BINARIES: BinaryName[] = ['kube-apiserver', 'kube-controller-manager', 'kubectl', 'etcd'];
export const OCM_BINARIES: BinaryName[] = ['registration-operator', 'registration', 'work', 'placement', 'addon'];
export const ALL_BINARIES: BinaryName[] = [...KUBERNETES_BINARIES, ...OCM_BINARIES];
/** What `setup --runtime kind` adds: the node image's binaries, the preloaded images' binaries and kind itself. */
export const KIND_NODE_BINARIES: BinaryName[] = [
  'kubeadm',
  'kubelet',
  'kubectl',
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'kube-proxy',
  'etcd',
  'crictl',
  'coredns',
  'kind',
];

/** One published file of an official release, at its publisher's URL (downloads go through the mirrors' downloadUrl). */
export interface ReleaseFile {
  url: string;
  /** The checksum file that lists it: one `<hex>` or `<hex>  <fileName>` line per file. */
  sumsUrl: string;
  /** The name the checksum file lists it under. */
  fileName: string;
  /** Our own pin: the published checksum must also equal this (kind's binaries). */
  sha256?: string;
}

/** Where an official release of a binary can be fetched from, if anywhere. */
export type ReleaseSource =
  /** One plain file per binary with its checksum file beside it (dl.k8s.io's `.sha256`, kind's `.sha256sum`). */
  | { kind: 'file'; file: (name: BinaryName) => ReleaseFile }
  /** A tar.gz holding the binary, listed in a SHA256SUMS file (etcd's GitHub releases). */
  | { kind: 'tarball'; file: ReleaseFile; member: string }
  /**
   * One file of an official multi-arch image, taken out through the registry API (src/provision/oci/),
   * every blob checked against its digest; the top manifest against a required digest when there is one.
   */
  | { kind: 'image'; image: (name: BinaryName) => string; pathInImage: (name: BinaryName) => string };

/** How one Go module becomes binaries: one `go build` in one wrapper module for all of them. */
export interface Recipe {
  /** Also the cache directory name: `<cache>/bin/<id>/`. */
  id: string;
  family:
    | 'cluster-proxy'
    | 'apiserver-network-proxy'
    | 'managed-serviceaccount'
    | 'cluster-gateway'
    | 'kubernetes'
    | 'etcd'
    | 'ocm'
    | 'cri-tools'
    | 'coredns'
    | 'kind'
    | 'actionlint'
    | 'act';
  /** Names the group in progress output and errors. */
  title: string;
  module: string;
  version: string;
  /** Binary name → Go main package. */
  packages: Partial<Record<BinaryName, string>>;
  /** Module path prefixes the checksum database has no entries for (GONOSUMDB). */
  noSumDb: string[];
  /** Replace every `k8s.io/*` module the upstream go.mod requires at v0.0.0 with this published version. */
  stagingVersion?: string;
  /**
   * Keep the upstream go.mod's `replace` directives that name a module version (a wrapper module
   * otherwise drops them: only the main module's replaces count).
   */
  keepUpstreamReplaces?: boolean;
  /** `-X` stamps; `-s -w` are added by the build. */
  ldflags: string[];
  versionArgs: (name: BinaryName) => string[];
  /** The version as the binary prints it (`--version` output must contain it as a whole word). */
  versionText: string;
  /**
   * The binaries print no version of their own: the check reads the Go build
   * information instead, which must name `module` at `version` (src/provision/buildinfo.ts).
   */
  versionFromBuildInfo?: boolean;
  release?: ReleaseSource;
}

function semver(version: string): { major: string; minor: string; patch: string } {
  const m = /^v(\d+)\.(\d+)\.(\d+)/.exec(version);
  if (!m) throw new Error(`internal: not a version: ${version}`);
  return { major: m[1] as string, minor: m[2] as string, patch: m[3] as string };
}

/**
 * `-X` flags that make module-built Kubernetes binaries report `version`
 * (otherwise `v0.0.0-master+$Format:%H$`, which kube-apiserver's /version and
 * kubectl's skew check would repeat). Both version packages carry the same variables.
 */
export function kubernetesLdflags(version: string): string[] {
  const { major, minor } = semver(version);
  const flags: string[] = [];
  for (const pkg of ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version']) {
    flags.push(`-X ${pkg}.gitVersion=${version}`, `-X ${pkg}.gitMajor=${major}`, `-X ${pkg}.gitMinor=${minor}`, `-X ${pkg}.gitTreeState=clean`);
  }
  return flags;
}

/** OCM's own version package (`<binary> --version` prints `<unknown>` without it). */
export function ocmLdflags(version: string): string[] {
  const { major, minor } = semver(version);
  const pkg = 'open-cluster-management.io/ocm/pkg/version';
  return [`-X ${pkg}.versionFromGit=${version}`, `-X ${pkg}.majorFromGit=${major}`, `-X ${pkg}.minorFromGit=${minor}`];
}

function kubernetesRecipe(version: string = KUBERNETES_VERSION): Recipe {
  const { minor, patch } = semver(version);
  const cmd = (name: string) => `k8s.io/kubernetes/cmd/${name}`;
  return {
    id: `kubernetes-${version}`,
    family: 'kubernetes',
    title: `Kubernetes ${version}`,
    module: 'k8s.io/kubernetes',
    version,
    // ensureBinaries builds only the names asked for, so the kind-only ones cost nothing in a plain `setup`.
    packages: {
      'kube-apiserver': cmd('kube-apiserver'),
      'kube-controller-manager': cmd('kube-controller-manager'),
      kubectl: cmd('kubectl'),
      kubeadm: cmd('kubeadm'),
      kubelet: cmd('kubelet'),
      'kube-scheduler': cmd('kube-scheduler'),
      'kube-proxy': cmd('kube-proxy'),
    },
    noSumDb: [],
    stagingVersion: `v0.${minor}.${patch}`,
    ldflags: kubernetesLdflags(version),
    versionArgs: (name) => (name === 'kubectl' ? ['version', '--client'] : name === 'kubeadm' ? ['version', '-o', 'short'] : ['--version']),
    versionText: version,
    release: { kind: 'file', file: (name) => kubernetesReleaseFile(version, name) },
  };
}

/**
 * One binary of a Kubernetes release on dl.k8s.io, with its `.sha256` beside it. kubectl runs on this machine, so
 * it is the host platform's (`kubectl.exe` on Windows) and pinned where KUBECTL_RELEASE_SHA256 has it; the server
 * binaries run in Linux (the local runtime's processes, kind's node image), on this machine's architecture.
 */
export function kubernetesReleaseFile(version: string, name: BinaryName, platform: HostPlatform = hostPlatform()): ReleaseFile {
  const client = name === 'kubectl';
  const target = client ? platform : { os: 'linux', arch: platform.arch };
  const fileName = client ? executableName(name, platform) : name;
  const url = `https://dl.k8s.io/release/${version}/bin/${target.os}/${target.arch}/${fileName}`;
  const sha256 = client ? KUBECTL_RELEASE_SHA256[version]?.[platformName(platform)] : undefined;
  return { url, sumsUrl: `${url}.sha256`, fileName, ...(sha256 ? { sha256 } : {}) };
}

function etcdRecipe(version: string = requireKubernetesRelease().etcd): Recipe {
  const archive = `etcd-${version}-linux-${hostPlatform().arch}`;
  return {
    id: `etcd-${version}`,
    family: 'etcd',
    title: `etcd ${version}`,
    module: 'go.etcd.io/etcd/server/v3',
    version,
    packages: { etcd: 'go.etcd.io/etcd/server/v3' },
    noSumDb: [],
    ldflags: [],
    versionArgs: () => ['--version'],
    versionText: `etcd Version: ${version.replace(/^v/, '')}`,
    release: {
      kind: 'tarball',
      file: {
        url: `https://github.com/etcd-io/etcd/releases/download/${version}/${archive}.tar.gz`,
        sumsUrl: `https://github.com/etcd-io/etcd/releases/download/${version}/SHA256SUMS`,
        fileName: `${archive}.tar.gz`,
      },
      member: `${archive}/etcd`,
    },
  };
}

export function ocmRecipe(version: string = OCM_VERSION): Recipe {
  const cmd = (name: string) => `open-cluster-management.io/ocm/cmd/${name}`;
  return {
    id: `ocm-${version}`,
    family: 'ocm',
    title: `OCM ${version}`,
    module: 'open-cluster-management.io/ocm',
    version,
    packages: {
      'registration-operator': cmd('registration-operator'),
      registration: cmd('registration'),
      work: cmd('work'),
      placement: cmd('placement'),
      addon: cmd('addon'),
    },
    // sum.golang.org (through the proxy) answers 404 for these; see docs/notes.md#go-module-proxy-and-checksum-database.
    noSumDb: ['open-cluster-management.io', 'sigs.k8s.io/about-api'],
    ldflags: ocmLdflags(version),
    versionArgs: () => ['--version'],
    versionText: version,
    release: { kind: 'image', image: (name) => ocmImage(ocmImageOf(name).image, version), pathInImage: (name) => ocmImageOf(name).pathInImage },
  };
}

/** Registry path of OCM's images (`quay.io/open-cluster-management/<name>:<OCM version>`). */
export const OCM_IMAGE_REPOSITORY = 'quay.io/open-cluster-management';

/** One of OCM's upstream images at the lab's OCM version, e.g. `quay.io/open-cluster-management/registration:v1.2.1`. */
export function ocmImage(name: 'registration-operator' | 'registration' | 'work' | 'placement' | 'addon-manager', ocmVersion: string): string {
  return `${OCM_IMAGE_REPOSITORY}/${name}:${ocmVersion}`;
}

/**
 * OCM's upstream images and the binary each holds. Each is built FROM ubi-minimal
 * with one Go binary copied to `/` and `USER 10001`; none sets ENTRYPOINT, WORKDIR
 * or CMD of its own, so the Deployments OCM generates always give `command`
 * (build/Dockerfile.<name> in open-cluster-management-io/ocm; docs/notes.md#ocms-images-as-its-build-makes-them). The nodelet maps
 * these images to the binaries; the kind runtime builds them from the binaries; the OCM recipe
 * takes the binaries out of them.
 */
export const OCM_UPSTREAM_IMAGES: readonly { image: Parameters<typeof ocmImage>[0]; binary: BinaryName; pathInImage: string }[] = [
  { image: 'registration-operator', binary: 'registration-operator', pathInImage: '/registration-operator' },
  { image: 'registration', binary: 'registration', pathInImage: '/registration' },
  { image: 'work', binary: 'work', pathInImage: '/work' },
  { image: 'placement', binary: 'placement', pathInImage: '/placement' },
  { image: 'addon-manager', binary: 'addon', pathInImage: '/addon' },
];

function ocmImageOf(binary: BinaryName): (typeof OCM_UPSTREAM_IMAGES)[number] {
  const found = OCM_UPSTREAM_IMAGES.find((i) => i.binary === binary);
  if (!found) throw new Error(`internal: no OCM image holds ${binary}`);
  return found;
}

function crictlRecipe(version: string = requireKubernetesRelease().crictl): Recipe {
  return {
    id: `cri-tools-${version}`,
    family: 'cri-tools',
    title: `crictl ${version}`,
    module: 'sigs.k8s.io/cri-tools',
    version,
    packages: { crictl: 'sigs.k8s.io/cri-tools/cmd/crictl' },
    // sum.golang.org (through the proxy) answers 404 for it.
    noSumDb: ['sigs.k8s.io/cri-tools'],
    ldflags: [`-X sigs.k8s.io/cri-tools/pkg/version.Version=${version}`],
    versionArgs: () => ['--version'],
    versionText: version,
  };
}

function corednsRecipe(version: string = requireKubernetesRelease().coredns): Recipe {
  return {
    id: `coredns-${version}`,
    family: 'coredns',
    title: `CoreDNS ${version}`,
    module: 'github.com/coredns/coredns',
    version,
    packages: { coredns: 'github.com/coredns/coredns' },
    noSumDb: [],
    ldflags: [],
    versionArgs: () => ['-version'],
    // The version is a constant in coremain; `coredns -version` prints `CoreDNS-1.12.1`.
    versionText: `CoreDNS-${version.replace(/^v/, '')}`,
  };
}

/**
 * kind's release asset for this machine (`kind-<os>-<arch>`, no `.exe` even on Windows, with `.sha256sum` beside
 * it), when we pin its checksum (versions.ts); another platform builds kind from the Go module proxy.
 */
export function kindRelease(version: string = KIND_VERSION, platform = platformName(hostPlatform())): ReleaseSource | undefined {
  const sha256 = KIND_RELEASE_SHA256[version]?.[platform];
  if (!sha256) return undefined;
  const fileName = `kind-${platform.replace('/', '-')}`;
  const url = `https://github.com/kubernetes-sigs/kind/releases/download/${version}/${fileName}`;
  return { kind: 'file', file: () => ({ url, sumsUrl: `${url}.sha256sum`, fileName, sha256 }) };
}

function kindRecipe(version: string = KIND_VERSION): Recipe {
  const release = kindRelease(version);
  return {
    id: `kind-${version}`,
    family: 'kind',
    title: `kind ${version}`,
    module: 'sigs.k8s.io/kind',
    version,
    packages: { kind: 'sigs.k8s.io/kind' },
    noSumDb: [],
    ldflags: [],
    versionArgs: () => ['version'],
    versionText: version,
    ...(release ? { release } : {}),
  };
}

function actionlintRecipe(version = 'v1.7.12'): Recipe {
  return {
    id: `actionlint-${version}`,
    family: 'actionlint',
    title: `actionlint ${version}`,
    module: 'github.com/rhysd/actionlint',
    version,
    packages: { actionlint: 'github.com/rhysd/actionlint/cmd/actionlint' },
    noSumDb: [],
    // Built inside a wrapper module, actionlint would report the wrapper's version ("(devel)"); stamp it as its releases do (no "v").
    ldflags: [`-X github.com/rhysd/actionlint.version=${version.replace(/^v/, '')}`],
    versionArgs: () => ['-version'],
    versionText: version.replace(/^v/, ''),
  };
}

function actRecipe(version = 'v0.2.89'): Recipe {
  return {
    id: `act-${version}`,
    family: 'act',
    title: `act ${version}`,
    module: 'github.com/nektos/act',
    version,
    packages: { act: 'github.com/nektos/act' },
    noSumDb: [],
    ldflags: [],
    versionArgs: () => ['--version'],
    versionText: version.replace(/^v/, ''),
  };
}

/** Pinned versions of upstream's Go addons (the Go module proxy serves these; docs say which upstream each comparison used). */
export const CLUSTER_PROXY_VERSION = 'v0.10.0';
/** The apiserver-network-proxy cluster-proxy v0.10.0 requires in its go.mod (its image's proxy-server and proxy-agent). */
const APISERVER_NETWORK_PROXY_VERSION = 'v0.33.0';
export const MANAGED_SERVICEACCOUNT_VERSION = 'v0.10.0';

/** The binaries each upstream addon's image holds, by addon name. */
export const UPSTREAM_ADDON_BINARIES = {
  'cluster-proxy': ['cluster-proxy-manager', 'cluster-proxy-agent', 'proxy-server', 'proxy-agent'],
  'managed-serviceaccount': ['managed-serviceaccount'],
} as const satisfies Record<string, readonly BinaryName[]>;

/** The image the cluster-proxy manager names for its agents unless told otherwise (upstream stamps it the same way). */
export function clusterProxyImage(version: string = CLUSTER_PROXY_VERSION): string {
  return `quay.io/open-cluster-management/cluster-proxy:${version}`;
}

/** cluster-proxy's manager and addon agent (its image's `/manager` and `/agent`). */
export function clusterProxyRecipe(version: string = CLUSTER_PROXY_VERSION): Recipe {
  const cmd = (name: string) => `open-cluster-management.io/cluster-proxy/cmd/${name}`;
  return {
    id: `cluster-proxy-${version}`,
    family: 'cluster-proxy',
    title: `cluster-proxy ${version}`,
    module: 'open-cluster-management.io/cluster-proxy',
    version,
    packages: { 'cluster-proxy-manager': cmd('addon-manager'), 'cluster-proxy-agent': cmd('addon-agent') },
    noSumDb: ['open-cluster-management.io', 'sigs.k8s.io/about-api', 'sigs.k8s.io/apiserver-network-proxy'],
    ldflags: [`-X open-cluster-management.io/cluster-proxy/pkg/config.AgentImageName=${clusterProxyImage(version)}`],
    versionArgs: () => [],
    versionText: version,
    versionFromBuildInfo: true,
  };
}

/** apiserver-network-proxy's server and agent (cluster-proxy's image's `/proxy-server` and `/proxy-agent`). */
export function apiserverNetworkProxyRecipe(version: string = APISERVER_NETWORK_PROXY_VERSION): Recipe {
  return {
    id: `apiserver-network-proxy-${version}`,
    family: 'apiserver-network-proxy',
    title: `apiserver-network-proxy ${version}`,
    module: 'sigs.k8s.io/apiserver-network-proxy',
    version,
    packages: { 'proxy-server': 'sigs.k8s.io/apiserver-network-proxy/cmd/server', 'proxy-agent': 'sigs.k8s.io/apiserver-network-proxy/cmd/agent' },
    // sum.golang.org (through the proxy) answers 404 for it.
    noSumDb: ['sigs.k8s.io/apiserver-network-proxy'],
    ldflags: [],
    versionArgs: () => [],
    versionText: version,
    versionFromBuildInfo: true,
  };
}

/** managed-serviceaccount's one binary (`/msa manager`, `/msa agent`). */
export function managedServiceAccountRecipe(version: string = MANAGED_SERVICEACCOUNT_VERSION): Recipe {
  return {
    id: `managed-serviceaccount-${version}`,
    family: 'managed-serviceaccount',
    title: `managed-serviceaccount ${version}`,
    module: 'open-cluster-management.io/managed-serviceaccount',
    version,
    packages: { 'managed-serviceaccount': 'open-cluster-management.io/managed-serviceaccount/cmd' },
    noSumDb: ['open-cluster-management.io', 'sigs.k8s.io/about-api'],
    ldflags: [],
    versionArgs: () => [],
    versionText: version,
    versionFromBuildInfo: true,
  };
}

/**
 * Upstream's cluster-gateway (github.com/oam-dev/cluster-gateway): v1.9.1 is the newest the Go module proxy
 * serves here (it refuses `@v/list` and `@latest` for this module; v1.9.2 and v1.10.0 are refused too).
 */
export const CLUSTER_GATEWAY_UPSTREAM_VERSION = 'v1.9.1';

/** Upstream's cluster-gateway aggregated API server (its image's `/apiserver`), for the gateway bench only. */
export function clusterGatewayUpstreamRecipe(version: string = CLUSTER_GATEWAY_UPSTREAM_VERSION): Recipe {
  return {
    id: `cluster-gateway-${version}`,
    family: 'cluster-gateway',
    title: `cluster-gateway ${version}`,
    module: 'github.com/oam-dev/cluster-gateway',
    version,
    packages: { 'cluster-gateway-upstream': 'github.com/oam-dev/cluster-gateway/cmd/apiserver' },
    // Its go.mod replaces apiserver-runtime with a fork and pins konnectivity-client and cloud.google.com/go.
    keepUpstreamReplaces: true,
    noSumDb: [],
    ldflags: [],
    versionArgs: () => [],
    versionText: version,
    versionFromBuildInfo: true,
  };
}

export function recipesFor(versions: { kubernetes?: string; ocm?: string } = {}): Recipe[] {
  // Everything that belongs with a Kubernetes release moves with it (versions.ts).
  const release = requireKubernetesRelease(versions.kubernetes ?? KUBERNETES_VERSION);
  return [
    kubernetesRecipe(release.kubernetes),
    etcdRecipe(release.etcd),
    ocmRecipe(versions.ocm),
    crictlRecipe(release.crictl),
    corednsRecipe(release.coredns),
    kindRecipe(),
    actionlintRecipe(),
    actRecipe(),
    clusterProxyRecipe(),
    apiserverNetworkProxyRecipe(),
    managedServiceAccountRecipe(),
    clusterGatewayUpstreamRecipe(),
  ];
}

export function recipeOf(name: BinaryName, recipes: Recipe[]): Recipe {
  const recipe = recipes.find((r) => name in r.packages);
  if (!recipe) throw new Error(`internal: no recipe builds ${name}`);
  return recipe;
}

/** Does `printed` (a binary's version output) name the recipe's version as a whole word? `v1.34.4` must not match `v1.34.40` or `v1.34.4-dispatcher`. */
export function printsVersion(printed: string, recipe: Recipe): boolean {
  const escaped = recipe.versionText.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(?:^|\\s)${escaped}(?![\\w.+-])`, 'm').test(printed);
}
