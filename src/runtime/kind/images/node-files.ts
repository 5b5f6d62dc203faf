import { DEFAULT_KUBERNETES_RELEASE, type KubernetesRelease } from '../../../provision/versions.js';
import { pauseImage } from './component-images.js';

/**
 * The files of the kind node image that are ours (kind's own base-image files
 * come from the kind module at build time). Pure: their text is part of the
 * node image's key.
 */

/**
 * containerd's config in the node (v2 format, what Debian's containerd 1.6 reads).
 * F3: a negative oom_score_adj needs CAP_SYS_RESOURCE, which some machines'
 * bounding set lacks; restricting it costs nothing in a lab. `config_path`:
 * containerd reads a registry's hosts.toml there at each pull (kind's node
 * images do the same), which is how nodes reach the lab's image registry.
 */
export function nodeContainerdConfig(release: KubernetesRelease = DEFAULT_KUBERNETES_RELEASE): string {
  return `# ocm-lab kind node: containerd (Debian) for the CRI; snapshotter line kept as kind's entrypoint edits it.
version = 2

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${pauseImage(release)}"
  tolerate_missing_hugepages_controller = true
  restrict_oom_score_adj = true

[plugins."io.containerd.grpc.v1.cri".containerd]
  snapshotter = "overlayfs"
  default_runtime_name = "runc"

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
  base_runtime_spec = "/etc/containerd/cri-base.json"

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
  SystemdCgroup = true

[plugins."io.containerd.grpc.v1.cri".cni]
  bin_dir = "/opt/cni/bin"
  conf_dir = "/etc/cni/net.d"

[plugins."io.containerd.grpc.v1.cri".registry]
  config_path = "/etc/containerd/certs.d"
`;
}

/**
 * F2: on cgroup v1 hosts kubelet checks that its cgroups exist in every
 * hierarchy, and kind's entrypoint only makes them in those /proc/self/cgroup
 * lists. Some hierarchies can be read-only mounts (e.g. a `cpu,cpuacct` left
 * beside separate `cpu` and `cpuacct`): skipped. (systemd unit syntax: $$ is a literal $.)
 */
export function kubeletCgroupV1DropIn(): string {
  return (
    '[Service]\n' +
    "ExecStartPre=/bin/sh -euc 'if [ ! -f /sys/fs/cgroup/cgroup.controllers ]; then for d in /sys/fs/cgroup/*; do " +
    'if [ -d "$$d" ] && [ ! -L "$$d" ]; then mkdir -p "$$d/kubelet" "$$d/kubelet.slice" 2>/dev/null || true; fi; done; fi\'\n'
  );
}

/** Pods are routed through the node's network namespace (the CNI makes the node their gateway), which needs forwarding on. */
function nodeSysctls(): string {
  return 'net.ipv4.ip_forward=1\n';
}

/** kind applies /kind/manifests/default-storage.yaml when it exists (and warns otherwise): a default class with no provisioner pod. */
function defaultStorageManifest(): string {
  return `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
  annotations:
    storageclass.kubernetes.io/is-default-class: "true"
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
`;
}

/**
 * Run once in the build container (what kind's base Dockerfile does in RUN
 * steps, and what Debian's packaging differs in): trim systemd to what a node
 * needs, enable the node's units, put Debian's CNI plugins and containerd
 * where kind's files expect them, and write the OCI base spec with kind's
 * product-files hook (F4: the hook needs jq, which the rootfs has).
 */
export function nodeSetupScript(): string {
  return `set -eu
find /lib/systemd/system/sysinit.target.wants/ -name systemd-tmpfiles-setup.service -delete
rm -f /lib/systemd/system/multi-user.target.wants/* /etc/systemd/system/*.wants/* /lib/systemd/system/local-fs.target.wants/* \\
  /lib/systemd/system/sockets.target.wants/*udev* /lib/systemd/system/sockets.target.wants/*initctl* /lib/systemd/system/basic.target.wants/*
echo ReadKMsg=no >> /etc/systemd/journald.conf
ln -sf /usr/lib/systemd/systemd /sbin/init
for b in containerd containerd-shim-runc-v2 ctr; do ln -sf /usr/bin/$b /usr/local/bin/$b; done
systemctl enable kubelet.service containerd.service undo-mount-hacks.service >/dev/null
systemctl mask systemd-binfmt.service >/dev/null
mkdir -p /etc/kubernetes/manifests /opt/cni/bin /etc/cni/net.d
cp -a /usr/lib/cni/. /opt/cni/bin/
ctr oci spec | jq '.hooks.createContainer += [{"path": "/kind/bin/mount-product-files.sh"}] | del(.process.rlimits)' > /etc/containerd/cri-base.json
rm -rf /var/cache/apt/archives/*.deb /var/lib/apt/lists/* /tmp/* /var/log/*.log
`;
}

/** Our files in the node, path (relative to /) → content and mode. */
export function nodeOwnFiles(release: KubernetesRelease = DEFAULT_KUBERNETES_RELEASE): Record<string, { content: string; mode: number }> {
  return {
    'etc/containerd/config.toml': { content: nodeContainerdConfig(release), mode: 0o644 },
    'etc/systemd/system/kubelet.service.d/20-ocm-lab-cgroup-v1.conf': { content: kubeletCgroupV1DropIn(), mode: 0o644 },
    'etc/sysctl.d/20-ocm-lab-forwarding.conf': { content: nodeSysctls(), mode: 0o644 },
    'kind/version': { content: `${release.kubernetes}\n`, mode: 0o644 },
    'kind/manifests/default-storage.yaml': { content: defaultStorageManifest(), mode: 0o644 },
    'kind/ocm-lab-setup.sh': { content: nodeSetupScript(), mode: 0o755 },
  };
}

/** Where our binaries go in the node (kind's layout: kubeadm, kubelet and kubectl in /usr/bin). */
export const NODE_BINARY_PATHS = {
  kubeadm: 'usr/bin/kubeadm',
  kubelet: 'usr/bin/kubelet',
  kubectl: 'usr/bin/kubectl',
  crictl: 'usr/local/bin/crictl',
} as const;

/** The Dockerfile that lays kind's files, ours and the binaries (all in the context's `root/`) over the imported rootfs. */
export function nodeFilesDockerfile(rootfsImage: string): string {
  return `FROM ${rootfsImage}\nCOPY root/ /\n`;
}

/** The last step: what `docker import --change` cannot set (STOPSIGNAL), on the committed image with the preloaded images. */
/**
 * Says that the image runs on a cgroup v1 engine (its kubelet is configured for it, see kubeletCgroupV1DropIn): read
 * through the registry API before kind's published node images are passed over on such an engine.
 */
export const NODE_CGROUP_V1_LABEL = 'dev.ocm-lab.kind-node.cgroup-v1';

export function nodeFinalDockerfile(committedImage: string, key: string, labelKey: string): string {
  return [
    `FROM ${committedImage}`,
    'ENV container=docker',
    'STOPSIGNAL SIGRTMIN+3',
    'ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]',
    `LABEL ${labelKey}=${key} ${NODE_CGROUP_V1_LABEL}=true`,
    '',
  ].join('\n');
}
