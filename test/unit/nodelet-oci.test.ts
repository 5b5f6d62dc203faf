import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OCM_LAB_IMAGE } from '../../src/images/catalogue.js';
import { cliLauncherScript, ImageCatalog, OCM_LAB_ON_PATH, OCM_UPSTREAM_IMAGES, parseImageBinaries } from '../../src/nodelet/images.js';
import { inClusterEndpoint, KubeClient } from '../../src/kube/client.js';
import { capabilitySet, ociConfig, sharedDirMounts, writeBundle, writePodEtcFiles, type BundleInput, type HostView } from '../../src/nodelet/oci/bundle.js';
import { processUser, volumeOwner } from '../../src/nodelet/oci/security.js';
import type { Pod } from '../../src/nodelet/types.js';
import { volumeBinds } from '../../src/nodelet/volumes.js';

const execFileAsync = promisify(execFile);

const catalog = new ImageCatalog({
  ocmVersion: 'v1.2.1',
  binaries: {
    'registration-operator': '/cache/bin/ocm-v1.2.1/registration-operator',
    registration: '/cache/bin/ocm-v1.2.1/registration',
    work: '/cache/bin/ocm-v1.2.1/work',
    placement: '/cache/bin/ocm-v1.2.1/placement',
    addon: '/cache/bin/ocm-v1.2.1/addon',
  },
  cli: { nodeBinary: '/usr/bin/node', cliMain: '/opt/ocm-lab/dist/cli/main.js', packageRoot: '/opt/ocm-lab' },
});

describe('image map', () => {
  it("maps OCM's five images at the lab's version to the provisioned binaries at their paths in the image", () => {
    const refs = OCM_UPSTREAM_IMAGES.map((u) => `quay.io/open-cluster-management/${u.image}:v1.2.1`);
    expect(refs.map((r) => catalog.resolve(r)?.files)).toEqual([
      [{ source: '/cache/bin/ocm-v1.2.1/registration-operator', destination: '/registration-operator' }],
      [{ source: '/cache/bin/ocm-v1.2.1/registration', destination: '/registration' }],
      [{ source: '/cache/bin/ocm-v1.2.1/work', destination: '/work' }],
      [{ source: '/cache/bin/ocm-v1.2.1/placement', destination: '/placement' }],
      [{ source: '/cache/bin/ocm-v1.2.1/addon', destination: '/addon' }],
    ]);
    expect(catalog.resolve('quay.io/open-cluster-management/work:v1.2.1')?.user).toEqual({ uid: 10001, gid: 0 });
  });

  it('runs our image (ocm-lab:<version>) as node + the CLI with the package root mounted at its own path', () => {
    const img = catalog.resolve(`docker.io/library/${OCM_LAB_IMAGE}`);
    expect(img?.ref).toBe(`docker.io/library/${OCM_LAB_IMAGE}`);
    expect(catalog.resolve(`index.docker.io/${OCM_LAB_IMAGE}`)?.entrypoint).toEqual(img?.entrypoint);
    expect(img?.entrypoint).toEqual(['/usr/bin/node', '/opt/ocm-lab/dist/cli/main.js']);
    expect(img?.files).toEqual([{ source: '/opt/ocm-lab', destination: '/opt/ocm-lab' }]);
    const elsewhere = new ImageCatalog({
      ocmVersion: 'v1',
      binaries: {},
      cli: { nodeBinary: '/opt/node/bin/node', cliMain: '/p/dist/cli/main.js', packageRoot: '/p' },
    });
    expect(elsewhere.resolve(OCM_LAB_IMAGE)?.files).toContainEqual({ source: '/opt/node/bin/node', destination: '/opt/node/bin/node' });
  });

  it('has `ocm-lab` on PATH as the Dockerfile links it: a launcher script of this node and CLI at /usr/local/bin/ocm-lab', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-launcher-'));
    try {
      const main = path.join(dir, "it's main.mjs");
      await fs.writeFile(main, 'console.log(JSON.stringify(process.argv.slice(2)));\n');
      const launcher = path.join(dir, 'launcher');
      await fs.writeFile(launcher, cliLauncherScript(process.execPath, main), { mode: 0o755 });
      const withLauncher = new ImageCatalog({
        ocmVersion: 'v1',
        binaries: {},
        cli: { nodeBinary: process.execPath, cliMain: main, packageRoot: dir, launcher },
      });
      expect(withLauncher.resolve(OCM_LAB_IMAGE)?.files).toContainEqual({ source: launcher, destination: OCM_LAB_ON_PATH });
      expect(OCM_LAB_ON_PATH).toBe('/usr/local/bin/ocm-lab');
      const { stdout } = await execFileAsync(launcher, ['internal', "a b'c"]);
      expect(JSON.parse(stdout)).toEqual(['internal', "a b'c"]);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('installed by npm, mounts the node_modules folder that holds the package and its hoisted dependencies', () => {
    const cli = { nodeBinary: '/usr/bin/node', cliMain: '/app/node_modules/ocm-lab/dist/cli/main.js', packageRoot: '/app/node_modules/ocm-lab' };
    const installed = new ImageCatalog({ ocmVersion: 'v1', binaries: {}, cli });
    expect(installed.resolve(OCM_LAB_IMAGE)?.files).toEqual([{ source: '/app/node_modules', destination: '/app/node_modules' }]);
    expect(installed.resolve(OCM_LAB_IMAGE)?.entrypoint).toEqual(['/usr/bin/node', '/app/node_modules/ocm-lab/dist/cli/main.js']);
  });

  it('a checkout whose node_modules links elsewhere (a git worktree sharing an install) mounts that folder at its own path too', () => {
    const cli = { nodeBinary: '/usr/bin/node', cliMain: '/work/wt/dist/cli/main.js', packageRoot: '/work/wt', linkedDependencies: '/work/main/node_modules' };
    expect(new ImageCatalog({ ocmVersion: 'v1', binaries: {}, cli }).resolve(OCM_LAB_IMAGE)?.files).toEqual([
      { source: '/work/wt', destination: '/work/wt' },
      { source: '/work/main/node_modules', destination: '/work/main/node_modules' },
    ]);
  });

  it('does not run other tags, other images, or images whose binary it was not given, and says why', () => {
    expect(catalog.runs('quay.io/open-cluster-management/work:latest')).toBe(false);
    expect(catalog.whyNot('quay.io/open-cluster-management/work:latest')).toContain("only at the lab's OCM version v1.2.1");
    expect(catalog.runs('nginx:1.27')).toBe(false);
    expect(catalog.whyNot('nginx:1.27')).toContain(
      `image "nginx:1.27" is not available on this node: the ocm-lab nodelet runs only ${OCM_LAB_IMAGE}, quay.io/`,
    );
    const partial = new ImageCatalog({
      ocmVersion: 'v1.2.1',
      binaries: { work: '/w' },
      cli: { nodeBinary: '/usr/bin/node', cliMain: '/p/dist/cli/main.js', packageRoot: '/p' },
    });
    expect(partial.runs('quay.io/open-cluster-management/placement:v1.2.1')).toBe(false);
    expect(partial.whyNot('quay.io/open-cluster-management/placement:v1.2.1')).toContain('needs the provisioned binary placement');
  });

  it('parses --image-binary name=path flags', () => {
    expect(parseImageBinaries(['work=/c/work', 'addon=/c/addon'], ['work', 'addon'])).toEqual({ work: '/c/work', addon: '/c/addon' });
    expect(() => parseImageBinaries(['kubectl=/c/kubectl'], ['work'])).toThrow('expected <name>=<absolute path>');
    expect(() => parseImageBinaries(['work=rel/work'], ['work'])).toThrow('expected <name>=<absolute path>');
  });
});

const operatorPod: Pod = {
  metadata: { name: 'klusterlet-7d9', namespace: 'open-cluster-management', uid: '1b4e28ba-2fa1-11d2-883f-0016d3cca427' },
  spec: {
    containers: [
      {
        name: 'klusterlet',
        image: 'quay.io/open-cluster-management/registration-operator:v1.2.1',
        command: ['/registration-operator', 'klusterlet'],
        volumeMounts: [
          { name: 'kube-api-access-x', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true },
          { name: 'tmp', mountPath: '/tmp/scratch' },
        ],
        securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
      } as Pod['spec']['containers'][number],
    ],
    volumes: [
      { name: 'kube-api-access-x', projected: { sources: [] } },
      { name: 'tmp', emptyDir: {} },
    ],
  },
};

function bundleInput(over: Partial<BundleInput> = {}): BundleInput {
  const c = operatorPod.spec.containers[0]!;
  const img = catalog.resolve(c.image)!;
  return {
    hostname: operatorPod.metadata.name,
    args: ['/registration-operator', 'klusterlet'],
    env: { PATH: '/usr/bin:/bin', KUBERNETES_SERVICE_HOST: '10.0.1.2' },
    cwd: '/',
    user: processUser(operatorPod, c, img),
    capabilities: { drop: ['ALL'] },
    noNewPrivileges: true,
    hostDirs: ['/usr', '/lib', '/bin', '/sbin', '/etc'],
    etcFiles: { hosts: '/pods/p/etc/hosts', hostname: '/pods/p/etc/hostname' },
    imageFiles: img.files,
    volumes: volumeBinds('/pods/p', operatorPod, c),
    netnsPath: '/var/run/netns/ocmlab.lab.pod-1',
    cgroupsPath: '/ocm-lab-1b4e28ba-2fa1-11d2-883f-0016d3cca427-klusterlet',
    ...over,
  };
}

describe('OCI bundle', () => {
  it('turns a pod spec into a runc config: read-only empty root, host dirs, image binary, volumes at their mountPaths', () => {
    const config = ociConfig(bundleInput());
    expect(config.root).toEqual({ path: 'rootfs', readonly: true });
    expect(config.hostname).toBe('klusterlet-7d9');
    expect(config.process).toMatchObject({
      terminal: false,
      user: { uid: 10001, gid: 0 },
      args: ['/registration-operator', 'klusterlet'],
      env: ['PATH=/usr/bin:/bin', 'KUBERNETES_SERVICE_HOST=10.0.1.2'],
      cwd: '/',
      noNewPrivileges: true,
      capabilities: { bounding: [], effective: [], permitted: [] },
    });
    const byDest = Object.fromEntries(config.mounts.map((m) => [m.destination, m]));
    expect(config.mounts.map((m) => m.destination)).toEqual([
      '/proc',
      '/dev',
      '/dev/pts',
      '/dev/shm',
      '/dev/mqueue',
      '/sys',
      '/sys/fs/cgroup',
      '/usr',
      '/lib',
      '/bin',
      '/sbin',
      '/etc',
      '/etc/hosts',
      '/etc/hostname',
      '/tmp',
      '/registration-operator',
      '/tmp/scratch',
      '/var/run/secrets/kubernetes.io/serviceaccount',
    ]);
    expect(byDest['/usr']).toEqual({ destination: '/usr', type: 'bind', source: '/usr', options: ['rbind', 'ro'] });
    expect(byDest['/registration-operator']).toMatchObject({ source: '/cache/bin/ocm-v1.2.1/registration-operator', options: expect.arrayContaining(['ro']) });
    expect(byDest['/var/run/secrets/kubernetes.io/serviceaccount']).toMatchObject({
      source: '/pods/p/volumes/kube-api-access-x',
      options: expect.arrayContaining(['ro']),
    });
    expect(byDest['/tmp/scratch']).toMatchObject({ source: '/pods/p/volumes/tmp', options: expect.arrayContaining(['rw']) });
    expect(byDest['/tmp']).toMatchObject({ type: 'tmpfs' });
    expect(config.linux.namespaces).toEqual([
      { type: 'pid' },
      { type: 'ipc' },
      { type: 'uts' },
      { type: 'mount' },
      { type: 'network', path: '/var/run/netns/ocmlab.lab.pod-1' },
    ]);
    expect(config.linux.cgroupsPath).toBe('/ocm-lab-1b4e28ba-2fa1-11d2-883f-0016d3cca427-klusterlet');
    expect(config.linux).not.toHaveProperty('resources');
  });

  it('builds a shared host directory from its entries when a mount point inside it does not exist on the host', () => {
    const tree: Record<string, string[] | 'file'> = {
      '/etc': ['hostname', 'hosts', 'passwd', 'ssl', 'gone'],
      '/etc/hosts': 'file',
      '/etc/hostname': 'file',
      '/etc/passwd': 'file',
      '/etc/ssl': ['certs', 'openssl.cnf'],
      '/etc/ssl/certs': [],
      '/etc/ssl/openssl.cnf': 'file',
      '/usr': ['bin'],
      '/usr/bin': [],
    };
    const view: HostView = {
      exists: (p) => p in tree,
      isDir: (p) => Array.isArray(tree[p]),
      list: (d) => (Array.isArray(tree[d]) ? (tree[d] as string[]) : []),
    };
    // Everything the container needs exists: bound whole.
    expect(sharedDirMounts('/etc', ['/etc/hosts', '/etc/ssl/certs'], view)).toEqual({
      mounts: [{ destination: '/etc', type: 'bind', source: '/etc', options: ['rbind', 'ro'] }],
      readonlyPaths: [],
    });
    // A volume at /etc/ssl/private/key: /etc and /etc/ssl become read-only tmpfs with the host entries bound in; dangling entries and replaced files are left out.
    const split = sharedDirMounts('/etc', ['/etc/hosts', '/etc/ssl/private/key'], view);
    expect(split.mounts.map((m) => `${m.type} ${m.destination}`)).toEqual([
      'tmpfs /etc',
      'bind /etc/hostname',
      'bind /etc/passwd',
      'tmpfs /etc/ssl',
      'bind /etc/ssl/certs',
      'bind /etc/ssl/openssl.cnf',
    ]);
    expect(split.readonlyPaths).toEqual(['/etc', '/etc/ssl']);
    const config = ociConfig(
      bundleInput({ hostView: view, hostDirs: ['/usr', '/etc'], volumes: [{ source: '/pods/p/volumes/hub', destination: '/etc/hub', readOnly: true }] }),
    );
    expect(config.mounts.find((m) => m.destination === '/etc')?.type).toBe('tmpfs');
    expect(config.mounts.find((m) => m.destination === '/usr')?.type).toBe('bind');
    expect(config.linux.readonlyPaths).toContain('/etc');
  });

  it("without a netns path the container stays in the caller's network namespace", () => {
    const { netnsPath: _n, ...rest } = bundleInput();
    expect(ociConfig(rest).linux.namespaces.map((n) => n.type)).toEqual(['pid', 'ipc', 'uts', 'mount']);
  });

  it('never asks for CAP_SYS_RESOURCE; add/drop work like a securityContext', () => {
    expect(capabilitySet(undefined)).toContain('CAP_NET_BIND_SERVICE');
    expect(capabilitySet({ add: ['SYS_RESOURCE', 'NET_ADMIN'] })).toContain('CAP_NET_ADMIN');
    expect(capabilitySet({ add: ['SYS_RESOURCE'] })).not.toContain('CAP_SYS_RESOURCE');
    expect(capabilitySet({ drop: ['ALL'], add: ['NET_BIND_SERVICE'] })).toEqual(['CAP_NET_BIND_SERVICE']);
    expect(capabilitySet({ drop: ['KILL'] })).not.toContain('CAP_KILL');
  });

  it('runs as runAsUser of the container, then the pod, then the image; fsGroup joins the groups and owns shared volumes', () => {
    const img = catalog.resolve('quay.io/open-cluster-management/work:v1.2.1');
    const c = { name: 'c', image: 'quay.io/open-cluster-management/work:v1.2.1' };
    const pod = (sc: object, csc?: object): Pod => ({
      metadata: { name: 'p' },
      spec: { securityContext: sc, containers: [{ ...c, ...(csc ? { securityContext: csc } : {}) }] } as Pod['spec'],
    });
    expect(processUser(pod({}), c, img)).toEqual({ uid: 10001, gid: 0, additionalGids: [] });
    expect(processUser(pod({ runAsUser: 2000, fsGroup: 3000 }), c, img)).toEqual({ uid: 2000, gid: 0, additionalGids: [3000] });
    const p = pod({ runAsUser: 2000, runAsGroup: 2001 }, { runAsUser: 4000 });
    expect(processUser(p, p.spec.containers[0]!, img)).toEqual({ uid: 4000, gid: 2001, additionalGids: [] });
    expect(volumeOwner(pod({ fsGroup: 3000 }), (i) => catalog.resolve(i))).toEqual({ uid: 10001, gid: 3000 });
    const mixed: Pod = { metadata: { name: 'm' }, spec: { containers: [c, { name: 'd', image: OCM_LAB_IMAGE }] } };
    expect(volumeOwner(mixed, (i) => catalog.resolve(i))).toBe('shared');
  });

  describe('on disk', () => {
    let dir: string;
    beforeEach(async () => {
      dir = await fs.mkdtemp(path.join(os.tmpdir(), 'nodelet-oci-'));
    });
    afterEach(async () => {
      await fs.rm(dir, { recursive: true, force: true });
    });

    it('writes config.json (0600) and an empty rootfs with the working directory in it', async () => {
      await writeBundle(dir, ociConfig(bundleInput({ cwd: '/srv/app' })));
      expect(JSON.parse(await fs.readFile(path.join(dir, 'config.json'), 'utf8')).process.cwd).toBe('/srv/app');
      expect((await fs.stat(path.join(dir, 'config.json'))).mode & 0o777).toBe(0o600);
      expect((await fs.stat(path.join(dir, 'rootfs', 'srv', 'app'))).isDirectory()).toBe(true);
    });
  });
});

describe('in-cluster credentials', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'nodelet-sa-'));
  });
  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('finds the API server from KUBERNETES_SERVICE_HOST/PORT and the ServiceAccount files', async () => {
    await fs.writeFile(path.join(dir, 'ca.crt'), 'CA');
    await fs.writeFile(path.join(dir, 'token'), 'tok-1\n');
    await fs.writeFile(path.join(dir, 'namespace'), 'team');
    const e = await inClusterEndpoint({ KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '6443' }, dir);
    expect(e).toEqual({ server: 'https://[fd00::1]:6443', caPem: 'CA', tokenFile: path.join(dir, 'token'), namespace: 'team' });
    await expect(inClusterEndpoint({}, dir)).rejects.toThrow('KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set');
    await expect(inClusterEndpoint({ KUBERNETES_SERVICE_HOST: 'h', KUBERNETES_SERVICE_PORT: '1' }, path.join(dir, 'none'))).rejects.toThrow(
      'no ServiceAccount credentials mounted',
    );
  });

  it('sends the token file as it is now: a renewed token is used on the next request', async () => {
    await fs.writeFile(path.join(dir, 'token'), 'tok-1\n');
    const client = new KubeClient({ server: 'https://127.0.0.1:1', caPem: '', tokenFile: path.join(dir, 'token') });
    const bearer = () => (client as unknown as { bearer(): string | undefined }).bearer();
    expect(bearer()).toBe('tok-1');
    await fs.writeFile(path.join(dir, 'token.new'), 'tok-2-longer\n');
    await fs.rename(path.join(dir, 'token.new'), path.join(dir, 'token'));
    expect(bearer()).toBe('tok-2-longer');
    await fs.rm(path.join(dir, 'token'));
    expect(bearer()).toBe('tok-2-longer');
    client.close();
  });
});

describe('pod /etc files', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'nodelet-etc-'));
  });
  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('writes hosts with the pod IP and hostAliases, and hostname', async () => {
    const files = await writePodEtcFiles(dir, 'web-0', '10.0.1.20', [{ ip: '10.0.0.2', hostnames: ['hub', 'hub.lab'] }, { ip: '10.0.0.3' }]);
    expect(await fs.readFile(files.hosts, 'utf8')).toBe(
      '# Kubernetes-managed hosts file (ocm-lab nodelet).\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n10.0.1.20\tweb-0\n\n# Entries added by HostAliases.\n10.0.0.2\thub\thub.lab\n',
    );
    expect(await fs.readFile(files.hostname, 'utf8')).toBe('web-0\n');
  });
});
