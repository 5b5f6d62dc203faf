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

export const OCM_RELEASES: readonly OcmRelease[] = [
  { ocm: 'v1.3.1', kubernetesLibraries: 'v1.35', api: 'v1.3.0' },
  { ocm: 'v1.2.1', kubernetesLibraries: 'v1.34', api: 'v1.2.0' },
];

/**
 * The default lab's OCM: still v1.2.1, not the newest, until v1.3.1 has passed the lab's conformance
 * (its source must come from the Go module proxy for the built-here path; see docs/notes.md).
 */
export const OCM_VERSION = 'v1.2.1';

function minorOf(version: string): number {
  return Number(/^v\d+\.(\d+)/.exec(version)?.[1] ?? NaN);
}

/**
 * Why OCM `ocm` does not run on Kubernetes `kubernetes`, or undefined when it does. OCM's controllers
 * are clients of the cluster: like kubectl (Kubernetes' version skew policy) they may be one minor newer
 * than the cluster, not more; a newer cluster still serves every GA API they use.
 */
export function ocmOnKubernetesProblem(ocm: string, kubernetes: string): string | undefined {
  const release = OCM_RELEASES.find((r) => r.ocm === ocm);
  if (!release) return `OCM ${ocm} is not one of ${OCM_RELEASES.map((r) => r.ocm).join(', ')}`;
  const ahead = minorOf(release.kubernetesLibraries) - minorOf(kubernetes);
  if (ahead > 1) {
    const libraries = `Kubernetes ${release.kubernetesLibraries} client libraries`;
    return `OCM ${ocm} is built with ${libraries}, ${ahead} minors newer than Kubernetes ${kubernetes} (at most one)`;
  }
  return undefined;
}

/** Oldest Go toolchain that builds every recipe (Kubernetes v1.36+ and etcd v3.7 say go 1.26 in go.mod). */
export const MIN_GO: readonly [number, number] = [1, 26];

export const KIND_VERSION = 'v0.33.0';
