import fs from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { DEFAULT_KUBERNETES_RELEASE, type KubernetesRelease } from '../../../src/provision/versions.js';
import { KINDEST_NODE_CNI_PLUGINS } from '../../../src/runtime/kind/images/cni.js';
import { componentImageSpecs, pauseImage } from '../../../src/runtime/kind/images/component-images.js';
import { NODE_CGROUP_V1_LABEL } from '../../../src/runtime/kind/images/node-files.js';
import type { Ran } from './namespace.js';

/**
 * A stand-in for kind's published node image (kindest/node), made from the node image built here so that the simulated
 * connected world never serves our own image under kind's name. What kind's recipe puts in the image (its base image's
 * Dockerfile and its node-image build, facts in docs/notes.md, "what kindest/node holds") is declared below as data:
 * each path and preloaded image, and where the stand-in's comes from. `test/unit/kind-node-standin.test.ts` compares
 * that declaration with the recipe's list; STANDIN_DIFFERENCES says what the stand-in still does differently, and why.
 */

/** The default CNI's image kind v0.33.0 (commit fed2688) preloads and names in its default-cni.yaml. */
export const KINDNETD_IMAGE = 'docker.io/kindest/kindnetd:v20260820-69b56db7';

/** Where one thing of the stand-in comes from. */
type StandInSource =
  | 'built image' // already in the node image built here, as kind's recipe has it (kind's base-image files, our Go builds)
  | 'Debian package' // Debian's containernetworking-plugins, as the built image gets it (/usr/lib/cni copied to /opt/cni/bin)
  | 'written here' // text of ours, from the facts of kind's recipe
  | 'built here from kind source'; // kindnetd, `go build -mod=vendor ./cmd/kindnetd` of kind's images/kindnetd

export interface StandInFile {
  path: string;
  from: StandInSource;
}

export interface StandInImage {
  /** What the image is for (the recipe's list names images by role: kubeadm's, the sandbox, the default CNI's). */
  role: string;
  ref: string;
  from: StandInSource;
}

/** The files of kind's recipe the stand-in has, each from where. */
export function standInFiles(): StandInFile[] {
  return [
    ...KINDEST_NODE_CNI_PLUGINS.map((p) => ({ path: `/opt/cni/bin/${p}`, from: 'Debian package' as const })),
    { path: '/etc/containerd/config.toml', from: 'written here' },
    { path: '/etc/containerd/cri-base.json', from: 'built image' },
    { path: '/etc/crictl.yaml', from: 'built image' },
    { path: '/usr/local/bin/crictl', from: 'built image' },
    { path: '/usr/local/bin/containerd', from: 'built image' },
    { path: '/usr/local/bin/ctr', from: 'built image' },
    { path: '/usr/local/bin/containerd-shim-runc-v2', from: 'built image' },
    { path: '/usr/local/bin/entrypoint', from: 'built image' },
    { path: '/etc/systemd/system/kubelet.service', from: 'built image' },
    { path: '/etc/systemd/system/kubelet.service.d/10-kubeadm.conf', from: 'built image' },
    { path: '/etc/systemd/system/kubelet.service.d/11-kind.conf', from: 'built image' },
    { path: '/etc/systemd/system/containerd.service', from: 'built image' },
    { path: '/usr/bin/kubeadm', from: 'built image' },
    { path: '/usr/bin/kubelet', from: 'built image' },
    { path: '/usr/bin/kubectl', from: 'built image' },
    { path: '/kind/version', from: 'built image' },
    { path: '/kind/manifests/default-cni.yaml', from: 'written here' },
    { path: '/kind/manifests/default-storage.yaml', from: 'built image' },
  ];
}

/** The images preloaded into the node's containerd (namespace k8s.io, pinned), as kind's node-image build imports them. */
export function standInImages(release: KubernetesRelease = DEFAULT_KUBERNETES_RELEASE): StandInImage[] {
  const roles: Record<string, string> = {
    'kube-apiserver': 'kube-apiserver',
    'kube-controller-manager': 'kube-controller-manager',
    'kube-scheduler': 'kube-scheduler',
    'kube-proxy': 'kube-proxy',
    etcd: 'etcd',
    coredns: 'coredns',
    pause: 'sandbox (containerd sandbox_image)',
  };
  return [
    ...componentImageSpecs(release).map((s) => ({ role: roles[s.binary] ?? s.binary, ref: s.ref, from: 'built image' as const })),
    { role: 'default CNI (kindnetd)', ref: KINDNETD_IMAGE, from: 'built here from kind source' },
  ];
}

/** What the stand-in still does differently from kindest/node, by recipe entry (a path, or an image's role). */
export const STANDIN_DIFFERENCES: { recipe: string; absent?: true; standIn: string; why: string }[] = [
  {
    recipe: 'default storage (local-path-provisioner)',
    absent: true,
    standIn: 'no local-path images; default-storage.yaml is the built image’s (a no-provisioner StorageClass)',
    why: 'the lab uses no volumes; nothing here builds local-path-provisioner',
  },
  {
    recipe: 'default storage (local-path-helper)',
    absent: true,
    standIn: 'see local-path-provisioner',
    why: 'as above',
  },
  {
    recipe: '/usr/local/sbin/runc',
    absent: true,
    standIn: 'Debian’s runc at /usr/sbin/runc (found by PATH)',
    why: 'the built image takes runc from Debian bookworm, not a build of runc v1.4.3',
  },
  {
    recipe: '/usr/local/bin/containerd-fuse-overlayfs-grpc',
    absent: true,
    standIn: 'none (the config’s fuse-overlayfs proxy plugin has no socket behind it)',
    why: 'only rootless nodes use it; the lab runs rootful Docker',
  },
  {
    recipe: '/usr/local/bin/containerd',
    standIn: 'a link to Debian bookworm’s containerd 1.6 (likewise ctr and the runc shim)',
    why: 'the built image’s containerd; kind builds containerd v2.3.4. Containerd 1.6 has no default config_path, as kind’s config has none',
  },
  {
    recipe: '/etc/containerd/config.toml',
    standIn: 'kind’s settings, but restrict_oom_score_adj = true and sandbox_image = the pause image preloaded here',
    why: 'this machine’s capability bounding set lacks CAP_SYS_RESOURCE (docs/notes.md); kind names the pause it preloads, so do we',
  },
  {
    recipe: 'default CNI (kindnetd)',
    standIn: 'an image FROM scratch with kindnetd alone (no distroless-iptables base)',
    why: 'the lab keeps kind’s CNI disabled, so kindnetd is preloaded and never run; a run of it would lack iptables',
  },
  {
    recipe: 'the userspace',
    standIn: 'Debian bookworm (debootstrap) with the built image’s packages; kind’s is trixie-slim',
    why: 'the built image is the base; the CNI plugins are Debian’s build of the same four',
  },
  {
    recipe: 'cgroup v1',
    standIn: `the built image’s kubelet drop-in for cgroup v1, and the label ${NODE_CGROUP_V1_LABEL}=true`,
    why: 'this machine runs cgroup v1, under which kind’s images for Kubernetes ≥ 1.35 do not run (the kind configs’ failCgroupV1: false too)',
  },
];

/** containerd's config with kind's settings (docs/notes.md), and the two this machine and the built image need. */
export function standInContainerdConfig(release: KubernetesRelease = DEFAULT_KUBERNETES_RELEASE): string {
  return `# ocm-lab stand-in for kindest/node: kind's containerd settings (v2 format), no registry hosts directory named (kind's names none)
version = 2

[proxy_plugins]
[proxy_plugins."fuse-overlayfs"]
  type = "snapshot"
  address = "/run/containerd-fuse-overlayfs.sock"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${pauseImage(release)}"
  tolerate_missing_hugepages_controller = true
  restrict_oom_score_adj = true

[plugins."io.containerd.grpc.v1.cri".containerd]
  discard_unpacked_layers = true
  snapshotter = "overlayfs"
  default_runtime_name = "runc"

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
  base_runtime_spec = "/etc/containerd/cri-base.json"

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
  SystemdCgroup = true

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.test-handler]
  runtime_type = "io.containerd.runc.v2"
  base_runtime_spec = "/etc/containerd/cri-base.json"

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.test-handler.options]
  SystemdCgroup = true
`;
}

/**
 * kind's default CNI manifest, in our words: what `kind create cluster` applies with disableDefaultCNI false. kind reads
 * it from the node, fills in the pod subnet where the file asks for templating and adds the control plane's endpoint
 * to the DaemonSet's env where it asks for patching (both by marker lines).
 */
export function defaultCniManifest(): string {
  return `# ocm-lab stand-in for kind's default CNI (kindnet)
# would you kindly template this file
# would you kindly patch this file
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: kindnet
  namespace: kube-system
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: kindnet
rules:
  - apiGroups: [""]
    resources: [nodes, pods, namespaces]
    verbs: [list, watch]
  - apiGroups: [networking.k8s.io]
    resources: [networkpolicies]
    verbs: [list, watch]
  - apiGroups: [policy]
    resources: [podsecuritypolicies]
    resourceNames: [kindnet]
    verbs: [use]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: kindnet
subjects:
  - kind: ServiceAccount
    name: kindnet
    namespace: kube-system
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: kindnet
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: kindnet
  namespace: kube-system
  labels: {app: kindnet, k8s-app: kindnet, tier: node}
spec:
  selector:
    matchLabels: {app: kindnet}
  template:
    metadata:
      labels: {app: kindnet, k8s-app: kindnet, tier: node}
    spec:
      serviceAccountName: kindnet
      hostNetwork: true
      priorityClassName: system-node-critical
      nodeSelector: {kubernetes.io/os: linux}
      tolerations: [{operator: Exists}]
      containers:
        - name: kindnet-cni
          image: ${KINDNETD_IMAGE}
          env:
            - {name: HOST_IP, valueFrom: {fieldRef: {fieldPath: status.hostIP}}}
            - {name: POD_IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}
            - {name: POD_SUBNET, value: "{{ .PodSubnet }}"}
          resources:
            requests: {cpu: 100m, memory: 50Mi}
          securityContext:
            privileged: false
            capabilities: {add: [NET_RAW, NET_ADMIN]}
          volumeMounts:
            - {name: cni-cfg, mountPath: /etc/cni/net.d}
            - {name: xtables-lock, mountPath: /run/xtables.lock}
            - {name: lib-modules, mountPath: /lib/modules, readOnly: true}
            - {name: nri-plugin, mountPath: /var/run/nri}
      volumes:
        - {name: cni-cfg, hostPath: {path: /etc/cni/net.d}}
        - {name: xtables-lock, hostPath: {path: /run/xtables.lock, type: FileOrCreate}}
        - {name: lib-modules, hostPath: {path: /lib/modules}}
        - {name: nri-plugin, hostPath: {path: /var/run/nri}}
`;
}

/** Files of the built image kindest/node does not have, which the stand-in removes. */
export const STANDIN_REMOVED = ['/usr/lib/cni', '/etc/sysctl.d/20-ocm-lab-forwarding.conf'] as const;

/** Where the kindnetd image's tarball is put in the build container. */
const KINDNETD_TAR_IN_NODE = '/tmp/ocm-lab-kindnetd.tar';

/**
 * Run in a container of the built node image (privileged, no network): leaves /opt/cni/bin with the declared plugins
 * only, removes STANDIN_REMOVED, imports kindnetd's image into containerd as the built image's other images were
 * (content only, pinned), with a containerd of its own on an empty config, stopped again before the commit.
 */
export function standInSetupScript(): string {
  const plugins = standInFiles()
    .filter((f) => f.path.startsWith('/opt/cni/bin/'))
    .map((f) => path.posix.basename(f.path));
  return `set -eu
for f in /opt/cni/bin/*; do
  case " ${plugins.join(' ')} " in *" $(basename "$f") "*) ;; *) rm -rf "$f" ;; esac
done
for p in ${plugins.join(' ')}; do test -x "/opt/cni/bin/$p"; done
rm -rf ${STANDIN_REMOVED.join(' ')}
printf 'version = 2\\n' > /tmp/ocm-lab-import.toml
containerd --config /tmp/ocm-lab-import.toml --log-level warn >/tmp/ocm-lab-import.log 2>&1 &
pid=$!
i=0; until ctr version >/dev/null 2>&1; do i=$((i+1)); [ "$i" -lt 60 ] || { cat /tmp/ocm-lab-import.log; exit 1; }; sleep 1; done
ctr --namespace=k8s.io images import --all-platforms --no-unpack --digests ${KINDNETD_TAR_IN_NODE}
ctr --namespace=k8s.io images label ${KINDNETD_IMAGE} io.cri-containerd.pinned=pinned
ctr --namespace=k8s.io images ls -q | grep -qx '${KINDNETD_IMAGE}'
kill -TERM "$pid"; wait "$pid" || true
rm -f ${KINDNETD_TAR_IN_NODE} /tmp/ocm-lab-import.toml /tmp/ocm-lab-import.log
`;
}

/** The files the stand-in writes, path → content (all 0644). */
export function standInWrittenFiles(release: KubernetesRelease = DEFAULT_KUBERNETES_RELEASE): Record<string, string> {
  return {
    '/etc/containerd/config.toml': standInContainerdConfig(release),
    '/kind/manifests/default-cni.yaml': defaultCniManifest(),
  };
}

/**
 * kindnetd built from kind's vendored source (a tarball with `kindnetd/` at its top, go.mod and vendor/ inside), offline:
 * `go build -mod=vendor ./cmd/kindnetd`, static. Kept at `<cache>/kindnetd/<tag>/kindnetd`, built once.
 */
export async function ensureKindnetdBinary(o: { cacheDir: string; sourceTarball: string; signal?: AbortSignal }): Promise<string> {
  const tag = KINDNETD_IMAGE.split(':').pop() as string;
  const out = path.join(o.cacheDir, 'kindnetd', tag, 'kindnetd');
  if (
    await fs.stat(out).then(
      (s) => s.isFile(),
      () => false,
    )
  )
    return out;
  await fs.mkdir(path.dirname(out), { recursive: true });
  const work = await fs.mkdtemp(path.join(path.dirname(path.dirname(out)), '.build-'));
  try {
    await execa('tar', ['-xzf', o.sourceTarball, '-C', work]);
    const env = { ...process.env, GOFLAGS: '-mod=vendor', GOPROXY: 'off', GOTOOLCHAIN: 'local', CGO_ENABLED: '0' };
    const built = await execa('nice', ['-n', '19', 'go', 'build', '-o', `${out}.tmp`, './cmd/kindnetd'], {
      cwd: path.join(work, 'kindnetd'),
      env,
      reject: false,
      all: true,
      ...(o.signal ? { cancelSignal: o.signal } : {}),
    });
    if (built.exitCode !== 0) throw new Error(`go build ./cmd/kindnetd (from ${o.sourceTarball}) exited ${built.exitCode}: ${String(built.all).slice(-3000)}`);
    await fs.rename(`${out}.tmp`, out);
    return out;
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
}

type Docker = (args: readonly string[]) => Promise<Ran>;

/**
 * Makes the stand-in `tag` in the engine `docker` talks to, from the built node image `builtImage`: kindnetd's image
 * (FROM scratch, the binary at /bin/kindnetd) saved to a tarball and imported into the node's containerd, the
 * written files copied in, the setup script run, and the container committed with kind's entrypoint and the cgroup v1
 * label. `workDir` is scratch space the engine's `docker` CLI can read.
 */
export async function buildKindNodeStandIn(
  docker: Docker,
  o: { builtImage: string; tag: string; kindnetdBinary: string; workDir: string; release?: KubernetesRelease },
): Promise<void> {
  const must = async (args: readonly string[]): Promise<string> => {
    const r = await docker(args);
    if (r.exitCode !== 0) throw new Error(`docker ${args.join(' ')} (kindest/node stand-in) exited ${r.exitCode}: ${r.all}`);
    return r.stdout;
  };
  const dir = path.join(o.workDir, 'kindest-node-standin');
  await fs.rm(dir, { recursive: true, force: true });
  await fs.mkdir(path.join(dir, 'kindnetd'), { recursive: true });
  await fs.copyFile(o.kindnetdBinary, path.join(dir, 'kindnetd', 'kindnetd'));
  await fs.chmod(path.join(dir, 'kindnetd', 'kindnetd'), 0o755);
  await fs.writeFile(path.join(dir, 'kindnetd', 'Dockerfile'), 'FROM scratch\nCOPY kindnetd /bin/kindnetd\nCMD ["/bin/kindnetd"]\n');
  const root = path.join(dir, 'root');
  for (const [file, content] of Object.entries(standInWrittenFiles(o.release))) {
    await fs.mkdir(path.join(root, path.dirname(file)), { recursive: true });
    await fs.writeFile(path.join(root, file), content, { mode: 0o644 });
  }
  const container = `ocm-lab-kindest-node-standin-${process.pid}`;
  try {
    await must(['build', '-q', '-t', KINDNETD_IMAGE, path.join(dir, 'kindnetd')]);
    await must(['save', '-o', path.join(dir, 'kindnetd.tar'), KINDNETD_IMAGE]);
    await must(['run', '-d', '--name', container, '--network', 'none', '--privileged', '--entrypoint', 'sleep', o.builtImage, 'infinity']);
    await must(['cp', `${root}/.`, `${container}:/`]);
    await must(['cp', path.join(dir, 'kindnetd.tar'), `${container}:${KINDNETD_TAR_IN_NODE}`]);
    await must(['exec', container, 'sh', '-c', standInSetupScript()]);
    await must([
      'commit',
      '--change',
      'ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]',
      '--change',
      `LABEL ${NODE_CGROUP_V1_LABEL}=true`,
      container,
      o.tag,
    ]);
  } finally {
    await docker(['rm', '-f', container]);
    await docker(['rmi', KINDNETD_IMAGE]);
    await fs.rm(dir, { recursive: true, force: true });
  }
}
