/**
 * The Kubernetes releases a lab can run, newest first; the first is the default.
 * Each names what belongs with it, as kubeadm of that release names it
 * (cmd/kubeadm/app/constants: DefaultEtcdVersion, CoreDNSVersion, PauseVersion):
 * the lab's etcd is that etcd, and the kind node image preloads those images.
 * The Go module proxy here serves exactly these patches (v1.35.4, v1.36.3, v1.37.2);
 * v1.34 is kept for labs that pinned it.
 */
export interface KubernetesRelease {
  kubernetes: string;
  etcd: string;
  coredns: string;
  pause: string;
  /** crictl of the same minor where the module proxy serves its source (not 1.35 or 1.37: the one below). */
  crictl: string;
}

export const KUBERNETES_RELEASES: readonly KubernetesRelease[] = [
  { kubernetes: 'v1.37.2', etcd: 'v3.7.0', coredns: 'v1.14.6', pause: '3.10.2', crictl: 'v1.36.0' },
  { kubernetes: 'v1.36.3', etcd: 'v3.6.8', coredns: 'v1.14.2', pause: '3.10.2', crictl: 'v1.36.0' },
  { kubernetes: 'v1.35.4', etcd: 'v3.6.6', coredns: 'v1.13.1', pause: '3.10.1', crictl: 'v1.34.0' },
  { kubernetes: 'v1.34.4', etcd: 'v3.6.5', coredns: 'v1.12.1', pause: '3.10.1', crictl: 'v1.34.0' },
];

export const DEFAULT_KUBERNETES_RELEASE: KubernetesRelease = KUBERNETES_RELEASES[0]!;
/** The default lab's Kubernetes version. */
export const KUBERNETES_VERSION = DEFAULT_KUBERNETES_RELEASE.kubernetes;

/** The release of `version`, or undefined when the lab cannot run it. */
function kubernetesRelease(version: string): KubernetesRelease | undefined {
  return KUBERNETES_RELEASES.find((r) => r.kubernetes === version);
}

/** The release of a version the config already validated; an unknown one is a bug. */
export function requireKubernetesRelease(version: string = KUBERNETES_VERSION): KubernetesRelease {
  const release = kubernetesRelease(version);
  if (!release) throw new Error(`internal: Kubernetes ${version} is not one of ${KUBERNETES_RELEASES.map((r) => r.kubernetes).join(', ')}`);
  return release;
}

/**
 * The OCM releases a lab can run, newest first. `kubernetesLibraries` is the k8s.io/client-go minor of
 * its go.mod, `api` the open-cluster-management.io/api (and addon-framework) release it builds with.
 */
export interface OcmRelease {
  ocm: string;
  kubernetesLibraries: string;
  api: string;
}

/** The Go module OCM's binaries (and its operators' manifests, deploy/) come from. */
export const OCM_MODULE = 'open-cluster-management.io/ocm';

export const OCM_RELEASES: readonly OcmRelease[] = [
  { ocm: 'v1.3.1', kubernetesLibraries: 'v1.35', api: 'v1.3.0' },
  { ocm: 'v1.2.1', kubernetesLibraries: 'v1.34', api: 'v1.2.0' },
];

/**
 * The default lab's OCM: still v1.2.1, not the newest, until v1.3.1 has passed the lab's conformance
 * (its source must come from the Go module proxy for the built-here path; see docs/notes.md#ocm-v131-beside-v121).
 */
export const OCM_VERSION = 'v1.2.1';

/**
 * sha256 of OCM's source archive per release, for the built path where the Go module proxy does not serve the
 * module (`--ocm-source FILE`, `ocmSource:`, $OCM_LAB_OCM_SOURCE; docs/provisioning.md, "Mirrors"): the tree at
 * the release tag as `git archive` makes it, with its `vendor/` (v1.3.1: commit 805fa6103d8bc1761dbc9cb4e420def42703ec53,
 * prefix `ocm-v1.3.1/`). A mirrors file's `sources:` entry with its own sha256 replaces the pin.
 */
export const OCM_SOURCE_ARCHIVE_SHA256: Readonly<Record<string, string>> = {
  'v1.3.1': '0a2cd29d000ef182f927bb94a170b82bb6572acd4e1b9d47c219f29cabb86c42',
};

/** 37 of "v1.37" or "v1.37.2" */
function minorNumber(version: string): number {
  return Number(minorOf(version).split('.')[1]);
}

/**
 * Why OCM `ocm` does not run on Kubernetes `kubernetes`, or undefined when it does. OCM's controllers
 * are clients of the cluster: like kubectl (Kubernetes' version skew policy) they may be one minor newer
 * than the cluster, not more; a newer cluster still serves every GA API they use.
 */
export function ocmOnKubernetesProblem(ocm: string, kubernetes: string): string | undefined {
  const release = OCM_RELEASES.find((r) => r.ocm === ocm);
  if (!release) return `OCM ${ocm} is not one of ${OCM_RELEASES.map((r) => r.ocm).join(', ')}`;
  const ahead = minorNumber(release.kubernetesLibraries) - minorNumber(kubernetes);
  if (ahead > 1) {
    const libraries = `Kubernetes ${release.kubernetesLibraries} client libraries`;
    return `OCM ${ocm} is built with ${libraries}, ${ahead} minors newer than Kubernetes ${kubernetes} (at most one)`;
  }
  return undefined;
}

/** Oldest Go toolchain that builds every recipe (Kubernetes v1.36+ and etcd v3.7 say go 1.26 in go.mod). */
export const MIN_GO: readonly [number, number] = [1, 26];

export const KIND_VERSION = 'v0.33.0';

/**
 * sha256 of kind's release binaries (`kind-<os>-<arch>`), by kind version and `<os>/<arch>`: what each
 * `.sha256sum` beside them publishes (sources in docs/notes.md#kind-v0330-node-image-digests-and-release-checksums).
 * A platform not listed builds kind here; kind publishes no windows/arm64 binary.
 */
export const KIND_RELEASE_SHA256: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  'v0.33.0': {
    'linux/amd64': 'aee6151561422756b764a4ae28e7f44cda5af5a9eead3cc9985112b1de8d8e0d',
    'linux/arm64': '20022bee6cfcd5086cb7234d218e3454e6090022f2a8f55d1fa7fcf42c3867a2',
    'darwin/amd64': '5a99f26f57246dc9319dd294803313197a0f34d33c525b3ea8b655db5916ece0',
    'darwin/arm64': '0c8c7dbe5e23594a198b786c4bc13dacc101fa6196b0cb0b23a1ca44e61f4b4f',
    'windows/amd64': '4b22adaa135368c5a465d56bbd8e520cbea87272a06ca00b6078e7b81515c9fc',
  },
};

/**
 * sha256 of kubectl on dl.k8s.io, by Kubernetes patch and `<os>/<arch>`: only digests read in public pinned
 * install scripts that agree (sources in docs/notes.md#kind-v0330-windowsamd64-and-kubectl-release-checksums).
 * A download must match both its published `.sha256` and this pin; where there is no pin, the published
 * `.sha256` alone is checked, as before.
 */
export const KUBECTL_RELEASE_SHA256: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  'v1.36.3': {
    'linux/amd64': 'ebbd080e7c2e275093b55915722043257eb24004363e20acb3c4d71919f88336',
  },
};

/** A node image kind publishes for one of its releases, pinned by digest (kind supports it only with that release). */
export interface OfficialNodeImage {
  /** The Kubernetes patch the image runs: kind picks its own, not necessarily ours. */
  kubernetes: string;
  /** `kindest/node:<kubernetes>` */
  tag: string;
  /** sha256 of the multi-arch index (amd64 and arm64). */
  digest: string;
}

/**
 * kind's published node images, by kind release (its release notes list them with digests;
 * sources in docs/notes.md#kind-v0330-node-image-digests-and-release-checksums).
 */
const KIND_NODE_IMAGES: Readonly<Record<string, readonly OfficialNodeImage[]>> = {
  'v0.33.0': [
    nodeImage('v1.37.0', 'sha256:a1ed56cfb0e7b93589bdf97c8cd566405a265939e3620fc4f5de89adff580ae5'),
    nodeImage('v1.36.4', 'sha256:099e049362a1526b2db71494e1947aae99bd16290d7c895f2b7ea312e3cbfaed'),
    nodeImage('v1.35.8', 'sha256:07b2536e30b803ed61d1677a79df6115f798ce64c80f9e22f6ed45afd09323c0'),
    nodeImage('v1.34.11', 'sha256:44e222ee2132dab25ff87301682f89eb82c7880ea3a1bf543bfe9708fd08d67d'),
  ],
};

function nodeImage(kubernetes: string, digest: string): OfficialNodeImage {
  return { kubernetes, tag: `kindest/node:${kubernetes}`, digest };
}

/** "v1.36" of "v1.36.3" */
export function minorOf(version: string): string {
  return version.split('.').slice(0, 2).join('.');
}

/** The official kind node image (of the pinned kind release) for the minor of `kubernetes`, if kind publishes one. */
export function officialNodeImage(kubernetes: string, kindVersion: string = KIND_VERSION): OfficialNodeImage | undefined {
  return KIND_NODE_IMAGES[kindVersion]?.find((i) => minorOf(i.kubernetes) === minorOf(kubernetes));
}

/** Which source gives a lab's Kubernetes: built here (and dl.k8s.io, same patch) or kind's published node image. */
export type KubernetesSource = 'built' | 'official-node';

/**
 * What `kubernetesVersion:` may name: a minor (`v1.36`: whichever patch the source gives), the patch built
 * here (`v1.36.3`), or the patch of kind's published node image (`v1.36.4`).
 */
export function acceptedKubernetesVersions(): string[] {
  return KUBERNETES_RELEASES.flatMap((r) => {
    const official = officialNodeImage(r.kubernetes)?.kubernetes;
    return [minorOf(r.kubernetes), r.kubernetes, ...(official && official !== r.kubernetes ? [official] : [])];
  });
}

/** The release row of a minor or of either source's patch; undefined when no row has it. */
export function releaseOfRequest(request: string): KubernetesRelease | undefined {
  const release = KUBERNETES_RELEASES.find((r) => minorOf(r.kubernetes) === minorOf(request));
  return release && acceptedKubernetesVersions().includes(request) ? release : undefined;
}

/** "v1.36.3 built here, v1.36.4 from kind v0.33.0's node image" */
export function describeOffers(release: KubernetesRelease): string {
  const official = officialNodeImage(release.kubernetes);
  return `${release.kubernetes} built here${official ? `, ${official.kubernetes} from kind ${KIND_VERSION}'s node image` : ''}`;
}

/**
 * The Kubernetes patch `request` gets from `source`: a minor gets the source's patch, a patch exactly
 * that one, or an explanation (naming what each source offers) when the source does not give it.
 */
export function kubernetesPatchFor(request: string, source: KubernetesSource): { version: string } | { problem: string } {
  const release = releaseOfRequest(request);
  if (!release) return { problem: `${request} is not a Kubernetes version ocm-lab can run (it runs ${acceptedKubernetesVersions().join(', ')})` };
  const offered = source === 'official-node' ? (officialNodeImage(release.kubernetes)?.kubernetes ?? release.kubernetes) : release.kubernetes;
  if (request === minorOf(request) || request === offered) return { version: offered };
  const from = source === 'official-node' ? `kind ${KIND_VERSION}'s node image` : 'the build here (and dl.k8s.io)';
  return {
    problem:
      `Kubernetes ${request} is not what this lab's source gives: ${from} gives ${offered} ` +
      `(${describeOffers(release)}); write ${minorOf(request)} to take either`,
  };
}
