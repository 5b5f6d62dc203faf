export type BinaryName =
  | 'kube-apiserver'
  | 'kube-controller-manager'
  | 'kubectl'
  | 'etcd'
  | 'registration-operator'
  | 'registration'
  | 'work'
  | 'placement'
  | 'addon';

export const KUBERNETES_BINARIES: BinaryName[] = ['kube-apiserver', 'kube-controller-manager', 'kubectl', 'etcd'];
export const OCM_BINARIES: BinaryName[] = ['registration-operator', 'registration', 'work', 'placement', 'addon'];

export const KUBERNETES_VERSION = 'v1.34.4';
export const ETCD_VERSION = 'v3.6.4';
export const OCM_VERSION = 'v1.2.1';

/** How one Go module is turned into binaries: one `go build` for all of them. */
export interface Recipe {
  id: string;
  module: string;
  version: string;
  /** Binary name → Go package path. */
  packages: Partial<Record<BinaryName, string>>;
  /** Oldest Go toolchain the module builds with. */
  minGo: [number, number];
  /** Module path prefixes the checksum database here has no entries for. */
  noSumDb: string[];
  /** Replace every staging module the upstream go.mod requires at v0.0.0 with this published version. */
  stagingVersion?: string;
  ldflags: string[];
  /** What `<binary> <versionArgs>` prints when it is the right version. */
  versionArgs: (name: BinaryName) => string[];
  versionText: string;
  /** Official download URL of a binary, where one exists. */
  downloadUrl?: (name: BinaryName) => string;
}

function kubernetesRecipe(version: string): Recipe {
  const [major, minor] = version.replace(/^v/, '').split('.');
  const x = (pkg: string, name: string, value: string) => `-X ${pkg}.${name}=${value}`;
  const stamp = (pkg: string) => [
    x(pkg, 'gitVersion', version),
    x(pkg, 'gitMajor', major ?? ''),
    x(pkg, 'gitMinor', minor ?? ''),
    x(pkg, 'gitTreeState', 'clean'),
    x(pkg, 'buildDate', '1970-01-01T00:00:00Z'),
  ];
  return {
    id: `kubernetes-${version}`,
    module: 'k8s.io/kubernetes',
    version,
    packages: {
      'kube-apiserver': 'k8s.io/kubernetes/cmd/kube-apiserver',
      'kube-controller-manager': 'k8s.io/kubernetes/cmd/kube-controller-manager',
      kubectl: 'k8s.io/kubernetes/cmd/kubectl',
    },
    minGo: [1, 24],
    noSumDb: [],
    stagingVersion: `v0.${minor ?? '0'}.${version.split('.')[2] ?? '0'}`,
    ldflags: [...stamp('k8s.io/component-base/version'), ...stamp('k8s.io/client-go/pkg/version')],
    versionArgs: (name) => (name === 'kubectl' ? ['version', '--client'] : ['--version']),
    versionText: version,
    downloadUrl: (name) => `https://dl.k8s.io/release/${version}/bin/linux/amd64/${name}`,
  };
}

function etcdRecipe(version: string): Recipe {
  return {
    id: `etcd-${version}`,
    module: 'go.etcd.io/etcd/server/v3',
    version,
    packages: { etcd: 'go.etcd.io/etcd/server/v3' },
    minGo: [1, 24],
    noSumDb: [],
    ldflags: [],
    versionArgs: () => ['--version'],
    versionText: `etcd Version: ${version.replace(/^v/, '')}`,
  };
}

function ocmRecipe(version: string): Recipe {
  const [major, minor] = version.replace(/^v/, '').split('.');
  const pkg = 'open-cluster-management.io/ocm/pkg/version';
  return {
    id: `ocm-${version}`,
    module: 'open-cluster-management.io/ocm',
    version,
    packages: {
      'registration-operator': 'open-cluster-management.io/ocm/cmd/registration-operator',
      registration: 'open-cluster-management.io/ocm/cmd/registration',
      work: 'open-cluster-management.io/ocm/cmd/work',
      placement: 'open-cluster-management.io/ocm/cmd/placement',
      addon: 'open-cluster-management.io/ocm/cmd/addon',
    },
    minGo: [1, 25],
    // The checksum database reachable here has no entries for these (seen 2026-11-22).
    noSumDb: ['open-cluster-management.io', 'sigs.k8s.io/about-api'],
    ldflags: [`-X ${pkg}.versionFromGit=${version}`, `-X ${pkg}.majorFromGit=${major ?? ''}`, `-X ${pkg}.minorFromGit=${minor ?? ''}`],
    versionArgs: () => ['--version'],
    versionText: version,
  };
}

export function recipesFor(versions: { kubernetes?: string; ocm?: string } = {}): Recipe[] {
  return [kubernetesRecipe(versions.kubernetes ?? KUBERNETES_VERSION), etcdRecipe(ETCD_VERSION), ocmRecipe(versions.ocm ?? OCM_VERSION)];
}

export function recipeOf(name: BinaryName, recipes: Recipe[]): Recipe {
  const recipe = recipes.find((r) => name in r.packages);
  if (!recipe) throw new Error(`internal: no recipe builds ${name}`);
  return recipe;
}
