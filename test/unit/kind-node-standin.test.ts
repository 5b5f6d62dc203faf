import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { KINDEST_NODE_CNI_PLUGINS } from '../../src/runtime/kind/images/cni.js';
import { pauseImage } from '../../src/runtime/kind/images/component-images.js';
import {
  defaultCniManifest,
  KINDNETD_IMAGE,
  STANDIN_DIFFERENCES,
  STANDIN_REMOVED,
  standInContainerdConfig,
  standInFiles,
  standInImages,
  standInSetupScript,
  standInWrittenFiles,
} from '../support/connected-world/kind-node-standin.js';

/**
 * Issue 38, item 2: the simulated connected world's kindest/node is a stand-in built from kind's recipe. The recipe's list
 * is written out here from kind's source at commit fed2688 (file and line of each entry; the same facts with their
 * lines are in docs/notes.md, "what kindest/node holds"), and compared with what the stand-in's builder declares.
 */

/** Paths kind's recipe puts into kindest/node that the lab relies on, with where the recipe says so. */
const RECIPE_PATHS: Record<string, string> = {
  // images/base/Dockerfile: build-cni stage (171-189) builds four plugins; 226-230 copy exactly them.
  '/opt/cni/bin/host-local': 'images/base/Dockerfile:227',
  '/opt/cni/bin/loopback': 'images/base/Dockerfile:228',
  '/opt/cni/bin/ptp': 'images/base/Dockerfile:229',
  '/opt/cni/bin/portmap': 'images/base/Dockerfile:230',
  '/usr/local/bin/containerd': 'images/base/Dockerfile:209',
  '/usr/local/bin/ctr': 'images/base/Dockerfile:210',
  '/usr/local/bin/containerd-shim-runc-v2': 'images/base/Dockerfile:211',
  '/etc/containerd/cri-base.json': 'images/base/Dockerfile:212-215',
  '/usr/local/sbin/runc': 'images/base/Dockerfile:219',
  '/usr/local/bin/crictl': 'images/base/Dockerfile:223',
  '/usr/local/bin/containerd-fuse-overlayfs-grpc': 'images/base/Dockerfile:233',
  '/usr/local/bin/entrypoint': 'images/base/Dockerfile:29 (files/usr/local/bin/entrypoint)',
  '/etc/crictl.yaml': 'images/base/Dockerfile:37 (files/etc/crictl.yaml)',
  '/etc/containerd/config.toml': 'images/base/Dockerfile:38 (files/etc/containerd/config.toml)',
  '/etc/systemd/system/kubelet.service': 'images/base/Dockerfile:41, enabled at 94',
  '/etc/systemd/system/containerd.service': 'images/base/Dockerfile:41, enabled at 95',
  '/etc/systemd/system/kubelet.service.d/10-kubeadm.conf': 'images/base/Dockerfile:42',
  '/etc/systemd/system/kubelet.service.d/11-kind.conf': 'images/base/Dockerfile:42',
  // pkg/build/nodeimage: what the node-image build adds to the base image.
  '/usr/bin/kubeadm': 'pkg/build/nodeimage/buildcontext.go:101-114',
  '/usr/bin/kubelet': 'pkg/build/nodeimage/buildcontext.go:101-114',
  '/usr/bin/kubectl': 'pkg/build/nodeimage/buildcontext.go:101-114',
  '/kind/version': 'pkg/build/nodeimage/buildcontext.go:124, const.go:22',
  '/kind/manifests/default-cni.yaml': 'pkg/build/nodeimage/buildcontext.go:239-243, const.go:23',
  '/kind/manifests/default-storage.yaml': 'pkg/build/nodeimage/buildcontext.go:247-251, const.go:24',
};

/**
 * Images the node-image build imports into containerd's k8s.io namespace (pinned, content only: imageimporter.go:77-81;
 * there is no /kind/images directory of tarballs), by role.
 */
const RECIPE_IMAGES: Record<string, string> = {
  'kube-apiserver': 'buildcontext.go:207-213 (kubeadm config images list)',
  'kube-controller-manager': 'buildcontext.go:207-213',
  'kube-scheduler': 'buildcontext.go:207-213',
  'kube-proxy': 'buildcontext.go:207-213',
  etcd: 'buildcontext.go:207-213',
  coredns: 'buildcontext.go:207-213',
  'sandbox (containerd sandbox_image)': "buildcontext.go:215-231: kubeadm's pause replaced by the containerd config's",
  'default CNI (kindnetd)': 'buildcontext.go:245, const_cni.go:23-25',
  'default storage (local-path-provisioner)': 'buildcontext.go:253, const_storage.go:29-33',
  'default storage (local-path-helper)': 'buildcontext.go:253, const_storage.go:29-33',
};

/** Differences that are about the whole image rather than one entry of the lists above. */
const WHOLE_IMAGE = ['the userspace', 'cgroup v1'];

const absent = new Set(STANDIN_DIFFERENCES.filter((d) => d.absent).map((d) => d.recipe));

describe('the kindest/node stand-in of the simulated connected world', () => {
  it("declares every path of kind's recipe, or a difference that says it lacks it", () => {
    const declared = standInFiles().map((f) => f.path);
    expect(new Set(declared).size).toBe(declared.length);
    const lacking = Object.keys(RECIPE_PATHS).filter((p) => absent.has(p));
    expect([...declared, ...lacking].sort()).toEqual(Object.keys(RECIPE_PATHS).sort());
  });

  it("declares every preloaded image of kind's recipe, or a difference that says it lacks it", () => {
    const roles = standInImages().map((i) => i.role);
    const lacking = Object.keys(RECIPE_IMAGES).filter((r) => absent.has(r));
    expect([...roles, ...lacking].sort()).toEqual(Object.keys(RECIPE_IMAGES).sort());
    expect(standInImages().find((i) => i.role === 'default CNI (kindnetd)')).toEqual({
      role: 'default CNI (kindnetd)',
      ref: KINDNETD_IMAGE,
      from: 'built here from kind source',
    });
  });

  it('names a recipe entry (or the whole image) in every difference it declares', () => {
    for (const d of STANDIN_DIFFERENCES) expect([...Object.keys(RECIPE_PATHS), ...Object.keys(RECIPE_IMAGES), ...WHOLE_IMAGE]).toContain(d.recipe);
    // A path the stand-in declares is not also declared absent.
    for (const f of standInFiles()) expect(absent.has(f.path)).toBe(false);
  });

  it('/opt/cni/bin: the four plugins kind builds, the same the lab limits itself to on the official path', () => {
    const recipe = Object.keys(RECIPE_PATHS)
      .filter((p) => p.startsWith('/opt/cni/bin/'))
      .map((p) => p.slice('/opt/cni/bin/'.length));
    expect([...KINDEST_NODE_CNI_PLUGINS].sort()).toEqual(recipe.sort());
    const script = standInSetupScript();
    // Everything else in /opt/cni/bin goes (bridge among it), the four must be there, Debian's own copy goes too.
    expect(script).toContain(`case " ${KINDEST_NODE_CNI_PLUGINS.join(' ')} " in`);
    expect(script).toContain(`for p in ${KINDEST_NODE_CNI_PLUGINS.join(' ')}; do test -x "/opt/cni/bin/$p"; done`);
    expect(STANDIN_REMOVED).toContain('/usr/lib/cni');
    expect(script).toContain(`rm -rf ${STANDIN_REMOVED.join(' ')}`);
  });

  it('kindnetd: imported into containerd and pinned, as the build imports the other images', () => {
    expect(KINDNETD_IMAGE).toBe('docker.io/kindest/kindnetd:v20260820-69b56db7'); // const_cni.go:23
    const script = standInSetupScript();
    expect(script).toContain(`ctr --namespace=k8s.io images import --all-platforms --no-unpack --digests`);
    expect(script).toContain(`ctr --namespace=k8s.io images label ${KINDNETD_IMAGE} io.cri-containerd.pinned=pinned`);
  });

  it("default-cni.yaml: kind's markers, and a kindnet DaemonSet of the preloaded image with the env kind's template gives", () => {
    const text = defaultCniManifest();
    // installcni/cni.go:71 and :92 look for these two lines before templating and patching.
    expect(text).toContain('would you kindly template this file');
    expect(text).toContain('would you kindly patch this file');
    // kind runs the whole file through Go's text/template: the pod subnet is its only action.
    expect(text.match(/\{\{/g)).toEqual(['{{']);
    const docs = parseAllDocuments(text).map((d) => d.toJSON() as { kind: string; metadata: { name: string }; spec?: unknown });
    expect(docs.map((d) => `${d.kind}/${d.metadata.name}`).sort()).toEqual([
      'ClusterRole/kindnet',
      'ClusterRoleBinding/kindnet',
      'DaemonSet/kindnet',
      'ServiceAccount/kindnet',
    ]);
    const ds = docs.find((d) => d.kind === 'DaemonSet') as unknown as {
      metadata: { namespace: string };
      spec: { template: { spec: { hostNetwork: boolean; containers: { image: string; env: { name: string; value?: string }[] }[] } } };
    };
    expect(ds.metadata.namespace).toBe('kube-system');
    expect(ds.spec.template.spec.hostNetwork).toBe(true);
    const container = ds.spec.template.spec.containers[0]!;
    expect(container.image).toBe(KINDNETD_IMAGE);
    expect(container.env.map((e) => e.name)).toEqual(['HOST_IP', 'POD_IP', 'POD_SUBNET']);
    // cni.go:77-81 fills in .PodSubnet; kind's own file has the same placeholder.
    expect(container.env.find((e) => e.name === 'POD_SUBNET')?.value).toBe('{{ .PodSubnet }}');
  });

  it("containerd's config: kind's settings, the preloaded pause as sandbox, no registry config_path and no CNI section", () => {
    const config = standInContainerdConfig();
    expect(config).toContain(`sandbox_image = "${pauseImage()}"`);
    expect(standInImages().map((i) => i.ref)).toContain(pauseImage());
    for (const line of ['discard_unpacked_layers = true', 'SystemdCgroup = true', 'base_runtime_spec = "/etc/containerd/cri-base.json"', 'test-handler']) {
      expect(config).toContain(line);
    }
    // What only the built image's config has must not be here: the kind configs' containerdConfigPatches add config_path.
    expect(config).not.toMatch(/config_path|bin_dir|conf_dir/);
    expect(Object.keys(standInWrittenFiles()).sort()).toEqual(
      standInFiles()
        .filter((f) => f.from === 'written here')
        .map((f) => f.path)
        .sort(),
    );
  });
});
