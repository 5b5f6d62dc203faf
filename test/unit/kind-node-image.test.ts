import { describe, expect, it } from 'vitest';
import { requireKubernetesRelease } from '../../src/provision/versions.js';
import { componentDockerfile, componentImageKey, componentImageSpecs, pauseImage, XTABLES_AUTO } from '../../src/runtime/kind/images/component-images.js';
import { cniConflist } from '../../src/runtime/kind/images/cni.js';
import { imageKey, imageTarFile } from '../../src/images/docker-build.js';
import { kubeletCgroupV1DropIn, nodeContainerdConfig, nodeFinalDockerfile, nodeOwnFiles, nodeSetupScript } from '../../src/runtime/kind/images/node-files.js';
import { kindFileMode, nodeImageKey, nodeImageRef } from '../../src/runtime/kind/images/node-image.js';
import { BASE_ROOTFS, debootstrapArgs, NODE_ROOTFS, rootfsKey, rootfsTarFile } from '../../src/images/rootfs.js';

describe('debootstrap rootfs', () => {
  it('keys the tarball by suite, variant and the package set, not its order or duplicates', () => {
    const key = rootfsKey(NODE_ROOTFS);
    expect(key).toMatch(/^[0-9a-f]{16}$/);
    expect(rootfsKey({ ...NODE_ROOTFS, packages: [...NODE_ROOTFS.packages].reverse().concat('jq') })).toBe(key);
    expect(rootfsKey({ ...NODE_ROOTFS, packages: [...NODE_ROOTFS.packages, 'curl'] })).not.toBe(key);
    expect(rootfsKey({ ...NODE_ROOTFS, suite: 'trixie' })).not.toBe(key);
    expect(rootfsKey(BASE_ROOTFS)).not.toBe(key);
    expect(rootfsTarFile('/c', NODE_ROOTFS)).toBe(`/c/kind/rootfs/kind-node-${key}.tar`);
  });

  it('asks debootstrap for minbase with a sorted package list', () => {
    expect(debootstrapArgs({ name: 'x', suite: 'bookworm', variant: 'minbase', packages: ['runc', 'jq', 'jq'] }, '/t', 'http://m/debian')).toEqual([
      '--variant=minbase',
      '--include=jq,runc',
      'bookworm',
      '/t',
      'http://m/debian',
    ]);
  });

  it('gives the node what kind, kubelet and kube-proxy need; the base what kube-proxy execs', () => {
    for (const p of [
      'systemd',
      'systemd-sysv',
      'dbus',
      'containerd',
      'runc',
      'iptables',
      'iproute2',
      'conntrack',
      'ethtool',
      'socat',
      'kmod',
      'ca-certificates',
      'util-linux',
      'mount',
      'procps',
      'jq',
      'containernetworking-plugins',
      'libseccomp2',
      'bash',
    ]) {
      expect(NODE_ROOTFS.packages).toContain(p);
    }
    for (const p of ['iptables', 'conntrack', 'ca-certificates']) expect(BASE_ROOTFS.packages).toContain(p);
  });
});

describe('component images', () => {
  const v134 = requireKubernetesRelease('v1.34.4');
  it('are named exactly as kubeadm v1.34.4 and v1.37.2 list them', () => {
    expect(componentImageSpecs(requireKubernetesRelease('v1.37.2')).map((s) => s.ref)).toEqual([
      'registry.k8s.io/kube-apiserver:v1.37.2',
      'registry.k8s.io/kube-controller-manager:v1.37.2',
      'registry.k8s.io/kube-scheduler:v1.37.2',
      'registry.k8s.io/kube-proxy:v1.37.2',
      'registry.k8s.io/etcd:3.7.0-0',
      'registry.k8s.io/coredns/coredns:v1.14.6',
      'registry.k8s.io/pause:3.10.2',
    ]);
    expect(componentImageSpecs(v134).map((s) => s.ref)).toEqual([
      'registry.k8s.io/kube-apiserver:v1.34.4',
      'registry.k8s.io/kube-controller-manager:v1.34.4',
      'registry.k8s.io/kube-scheduler:v1.34.4',
      'registry.k8s.io/kube-proxy:v1.34.4',
      'registry.k8s.io/etcd:3.6.5-0',
      'registry.k8s.io/coredns/coredns:v1.12.1',
      'registry.k8s.io/pause:3.10.1',
    ]);
    expect(pauseImage(v134)).toBe('registry.k8s.io/pause:3.10.1');
  });

  it('put each binary where the upstream image has it', () => {
    const byRef = Object.fromEntries(componentImageSpecs().map((s) => [s.ref.split(':')[0], s]));
    const apiserver = componentDockerfile(byRef['registry.k8s.io/kube-apiserver']!, 'k1');
    expect(apiserver).toBe('FROM scratch\nENV PATH=/usr/local/bin:/usr/bin:/bin\nCOPY bin /usr/local/bin/\nLABEL dev.ocm-lab.image-key=k1\n');
    const coredns = componentDockerfile(byRef['registry.k8s.io/coredns/coredns']!, 'k2');
    expect(coredns).toContain('COPY bin /\n');
    expect(coredns).toContain('ENTRYPOINT ["/coredns"]');
    const proxy = componentDockerfile(byRef['registry.k8s.io/kube-proxy']!, 'k3');
    expect(proxy.split('\n')[0]).toBe('FROM ocm-lab/base:bookworm');
    expect(proxy).toContain('COPY xtables /usr/local/sbin/');
    expect(byRef['registry.k8s.io/etcd']!.dest).toBe('/usr/local/bin/etcd');
    expect(componentDockerfile(byRef['registry.k8s.io/pause']!, 'k4')).toContain('ENTRYPOINT ["/pause"]');
  });

  it('have keys that are stable and differ per image', () => {
    const keys = componentImageSpecs().map((s) => componentImageKey(s));
    expect(new Set(keys).size).toBe(keys.length);
    expect(componentImageSpecs().map((s) => componentImageKey(s))).toEqual(keys);
  });

  it('pick the iptables backend that holds rules, nft on a tie', () => {
    expect(XTABLES_AUTO).toContain('if [ "$(count legacy)" -gt "$(count nft)" ]; then mode=legacy; else mode=nft; fi');
    expect(XTABLES_AUTO).toContain('exec "/usr/sbin/xtables-$mode-multi" "${0##*/}" "$@"');
  });
});

describe('node image files', () => {
  it('containerd: F3 restrict_oom_score_adj, our pause as sandbox, overlayfs line for kind to edit, CNI in /opt/cni/bin', () => {
    const toml = nodeContainerdConfig();
    expect(toml).toContain('restrict_oom_score_adj = true');
    expect(toml).toContain('sandbox_image = "registry.k8s.io/pause:3.10.2"');
    expect(toml).toContain('snapshotter = "overlayfs"');
    expect(toml).toContain('bin_dir = "/opt/cni/bin"');
    expect(toml).toContain('SystemdCgroup = true');
    expect(toml).toMatch(/^version = 2$/m);
  });

  it('F2: the kubelet drop-in makes kubelet cgroups in every v1 hierarchy, escaping $ for systemd', () => {
    const dropIn = kubeletCgroupV1DropIn();
    expect(dropIn).toMatch(/^\[Service\]\nExecStartPre=/);
    expect(dropIn).toContain('mkdir -p "$$d/kubelet" "$$d/kubelet.slice"');
    expect(dropIn.replace(/\$\$/g, '')).not.toContain('$');
    expect(dropIn).not.toContain('%');
  });

  it('setup: kind units enabled, CNI plugins copied to /opt/cni/bin, product-files hook (F4) in the base spec', () => {
    const script = nodeSetupScript();
    expect(script).toContain('systemctl enable kubelet.service containerd.service undo-mount-hacks.service');
    expect(script).toContain('cp -a /usr/lib/cni/. /opt/cni/bin/');
    expect(script).toContain('/kind/bin/mount-product-files.sh');
    expect(script).toContain('ln -sf /usr/bin/$b /usr/local/bin/$b');
    const files = nodeOwnFiles(requireKubernetesRelease('v1.34.4'));
    expect(files['kind/version']!.content).toBe('v1.34.4\n');
    expect(nodeOwnFiles()['kind/version']!.content).toBe('v1.37.2\n');
    expect(Object.keys(files)).toContain('etc/systemd/system/kubelet.service.d/20-ocm-lab-cgroup-v1.conf');
  });

  it('final Dockerfile sets what docker import cannot', () => {
    expect(nodeFinalDockerfile('stage', 'abc', 'dev.ocm-lab.image-key')).toBe(
      'FROM stage\nENV container=docker\nSTOPSIGNAL SIGRTMIN+3\nENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]\nLABEL dev.ocm-lab.image-key=abc dev.ocm-lab.kind-node.cgroup-v1=true\n',
    );
  });

  it('kind base-image files keep their executables executable', () => {
    expect(kindFileMode('usr/local/bin/entrypoint')).toBe(0o755);
    expect(kindFileMode('kind/bin/mount-product-files.sh')).toBe(0o755);
    expect(kindFileMode('etc/systemd/system/kubelet.service')).toBe(0o644);
  });

  it('the node image key is stable and names the image', () => {
    expect(nodeImageRef()).toBe('ocm-lab/kind-node:v1.37.2');
    expect(nodeImageRef('v1.35.4')).toBe('ocm-lab/kind-node:v1.35.4');
    expect(nodeImageKey()).toBe(nodeImageKey());
    expect(nodeImageKey(requireKubernetesRelease('v1.36.3'))).not.toBe(nodeImageKey());
    expect(nodeImageKey()).toMatch(/^[0-9a-f]{16}$/);
  });
});

describe('image cache', () => {
  it('keys by content and names tarballs after the image', () => {
    expect(imageKey({ a: 1 })).toBe(imageKey({ a: 1 }));
    expect(imageKey({ a: 1 })).not.toBe(imageKey({ a: 2 }));
    expect(imageTarFile('/c', 'registry.k8s.io/coredns/coredns:v1.12.1', 'k')).toBe('/c/kind/images/registry.k8s.io-coredns-coredns-v1.12.1-k.tar');
  });
});

describe('CNI conflist', () => {
  it('bridges pods with a route to the service range only (the pod range is on the bridge), masqueraded', () => {
    const conf = JSON.parse(cniConflist('10.244.0.0/16')) as { cniVersion: string; plugins: Record<string, unknown>[] };
    expect(conf.cniVersion).toBe('0.4.0');
    const [bridge, portmap] = conf.plugins as [Record<string, unknown>, Record<string, unknown>];
    expect(bridge).toMatchObject({
      type: 'bridge',
      isGateway: true,
      ipMasq: true,
      ipam: { type: 'host-local', ranges: [[{ subnet: '10.244.0.0/16' }]], routes: [{ dst: '10.96.0.0/16' }] },
    });
    expect(portmap).toEqual({ type: 'portmap', capabilities: { portMappings: true } });
  });

  it('adds the routes the runtime names, once, and refuses a non-CIDR', () => {
    const conf = JSON.parse(
      cniConflist('10.250.0.0/16', { serviceSubnet: '10.97.0.0/16', extraRoutes: ['172.30.0.0/24', '10.97.0.0/16', '10.250.0.0/16'], ipMasq: false }),
    );
    expect(conf.plugins[0].ipam.routes).toEqual([{ dst: '10.97.0.0/16' }, { dst: '172.30.0.0/24' }]);
    expect(conf.plugins[0].ipMasq).toBe(false);
    expect(() => cniConflist('10.244.0.0')).toThrow(/CIDR/);
  });
});
