import fs from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultLabConfig, renderLabConfig } from '../../src/config/index.js';
import { OCM_LAB_IMAGE, OCM_UPSTREAM_IMAGES, ocmImage } from '../../src/images/catalogue.js';
import { ensureLabImages } from '../../src/images/lab-images.js';
import { locateKind } from '../../src/runtime/kind/kind-cli.js';
import { builtRegistryImage, REGISTRY_IMAGE } from '../../src/images/registry/index.js';
import { cniConflist, ensureKindNodeImage } from '../../src/runtime/kind/images/index.js';
import { clusterSnapshot } from '../support/cluster-snapshot.js';
import { hubAvailability } from '../support/hub-availability.js';
import { freePort } from '../support/connected-world/registry.js';
import { startDockerEngine, type DockerEngine } from '../support/docker-engine.js';
import { raiseKindSysctls } from '../support/kind-sysctls.js';
import { isolatedLabHome } from '../support/lab.js';

/**
 * `--runtime existing` on clusters made the way users make them (issue 31): three plain `kind create cluster`
 * clusters on kind's one Docker network, a registry container wired to them as kind's local-registry guide does
 * (containerd's hosts.toml for localhost:<port>, the registry on the `kind` network), and `up --image-registry
 * localhost:<port>` pushing our image there. Every cluster and addon Available, the conformance suite passes
 * every document that does not need VPC isolation (those are skipped, saying so), and `down` leaves the clusters
 * as they were. Needs root, Debian's docker.io and the kind binary and images of `ocm-lab setup --runtime kind`
 * (the cache). Runs in `npm run test:kind`; its Docker engine is its own, started and stopped here.
 */
const LAB = 'plainkind';
const REGISTRY = 'kind-registry';
/** Contexts `kind create cluster --name X` makes (kind-X), named in the lab as the documents name their clusters. */
const CLUSTERS = [
  { kind: 'hub', name: 'hub' },
  { kind: 'c1', name: 'cluster1' },
  { kind: 'c2', name: 'cluster2' },
];
const ADDONS = ['cluster-proxy', 'managed-serviceaccount', 'cluster-gateway'];
const OCM_VERSION = 'v1.2.1';

/**
 * What a user writes for `kind create cluster --config`: containerd reads registry hosts from certs.d (kind's
 * local-registry guide). The rest is this machine's: the node image built here has no kindnet, so a bridge CNI
 * config is mounted (kind's published images need none of it), and the host's cgroup v1 needs `failCgroupV1: false`.
 */
function kindConfig(nodeImage: string, cniFile: string): string {
  return `kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
containerdConfigPatches:
  - |-
    [plugins."io.containerd.grpc.v1.cri".registry]
      config_path = "/etc/containerd/certs.d"
networking:
  disableDefaultCNI: true
nodes:
  - role: control-plane
    image: ${nodeImage}
    extraMounts:
      - hostPath: ${cniFile}
        containerPath: /etc/cni/net.d/10-bridge.conflist
        readOnly: true
kubeadmConfigPatches:
  - |
    kind: KubeletConfiguration
    failCgroupV1: false
`;
}

/** hosts.toml files per registry host, as kind's guide writes them into each node. */
function registryHosts(port: number): Record<string, string> {
  return {
    [`localhost:${port}`]: `[host."http://${REGISTRY}:5000"]\n`,
    // OCM's images from quay.io, which no test may reach: the registry stands in as a mirror (as a pull-through cache would).
    'quay.io': `server = "https://quay.io"\n\n[host."http://${REGISTRY}:5000"]\n  capabilities = ["pull", "resolve"]\n`,
  };
}

describe('existing runtime on three plain kind clusters with a local registry', () => {
  let engine: DockerEngine | undefined;
  let restoreSysctls: (() => Promise<void>) | undefined;
  let home: Awaited<ReturnType<typeof isolatedLabHome>>;
  let kindBinary: string;
  let kubeconfig: string;
  let labFile: string;
  let port: number;
  let before: Record<string, Record<string, string[]>>;
  const savedDockerHost = process.env.DOCKER_HOST;
  const times: Record<string, string> = {};

  const timed = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
    const started = Date.now();
    try {
      return await fn();
    } finally {
      times[what] = `${((Date.now() - started) / 1000).toFixed(1)} s`;
    }
  };
  const ocmLab = async (args: string[], timeout = 1_800_000) => {
    const r = await execa(process.execPath, [path.resolve('dist/cli/main.js'), ...args, '--config', labFile], {
      reject: false,
      env: { ...engine?.env, CI: 'true', OCM_LAB_HOME: home.home },
      timeout,
    });
    return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr), all: `${String(r.stdout)}\n${String(r.stderr)}` };
  };
  const docker = async (args: string[], input?: string) => {
    const r = await execa('docker', args, { reject: false, env: engine?.env, timeout: 300_000, ...(input === undefined ? {} : { input }) });
    if (r.exitCode !== 0) throw new Error(`docker ${args.join(' ')} exited ${r.exitCode ?? '?'}: ${String(r.stderr)}`);
    return String(r.stdout).trim();
  };
  const kind = async (args: string[]) => {
    const r = await execa(kindBinary, args, { reject: false, env: engine?.env, all: true, timeout: 600_000 });
    if (r.exitCode !== 0) throw new Error(`kind ${args.join(' ')} exited ${r.exitCode ?? '?'}:\n${String(r.all).slice(-4000)}`);
  };
  const snapshot = async () => {
    const all: Record<string, Record<string, string[]>> = {};
    for (const c of CLUSTERS) all[c.name] = await clusterSnapshot(kubeconfig, `kind-${c.kind}`);
    return all;
  };

  beforeAll(async () => {
    restoreSysctls = await raiseKindSysctls();
    engine = await startDockerEngine();
    // src/images/ runs the docker CLI with this process's environment.
    process.env.DOCKER_HOST = engine.host;
    home = await isolatedLabHome('plain-kind');
    kubeconfig = path.join(home.home, 'kind.kubeconfig');
    labFile = path.join(home.home, 'lab.yaml');
    // The default lab's versions and addons; its VPCs and clusters give way to the contexts.
    await fs.writeFile(labFile, renderLabConfig({ ...defaultLabConfig(), name: LAB, ocmVersion: OCM_VERSION }));
    const found = await locateKind();
    if (!found) throw new Error('no kind CLI ($OCM_LAB_KIND, PATH, the ocm-lab cache): run ocm-lab setup --runtime kind first');
    kindBinary = found;
    // The images a user would have: kind's node image, a registry image; OCM's stand in for quay.io's.
    const nodeImage = await ensureKindNodeImage();
    await builtRegistryImage({});
    await ensureLabImages({ ocmVersion: OCM_VERSION });

    port = await freePort();
    await docker(['run', '-d', '--restart=always', '-p', `127.0.0.1:${port}:5000`, '--name', REGISTRY, REGISTRY_IMAGE]);
    const cniFile = path.join(home.home, 'bridge.conflist');
    await fs.writeFile(cniFile, cniConflist('10.244.0.0/16', { extraRoutes: ['0.0.0.0/0'] }));
    const configFile = path.join(home.home, 'kind.yaml');
    await fs.writeFile(configFile, kindConfig(nodeImage, cniFile));
    await timed('kind create cluster ×3', async () => {
      for (const c of CLUSTERS) await kind(['create', 'cluster', '--name', c.kind, '--config', configFile, '--kubeconfig', kubeconfig]);
    });
    // kind's guide: hosts.toml per node, then the registry joins the clusters' network.
    for (const c of CLUSTERS) {
      const script = Object.entries(registryHosts(port))
        .map(([host, toml]) => `mkdir -p '/etc/containerd/certs.d/${host}' && printf '%s' '${toml}' > '/etc/containerd/certs.d/${host}/hosts.toml'`)
        .join('\n');
      await docker(['exec', '-i', `${c.kind}-control-plane`, 'sh', '-eu'], script);
    }
    await docker(['network', 'connect', 'kind', REGISTRY]);
    for (const image of OCM_UPSTREAM_IMAGES.map((i) => ocmImage(i.image, OCM_VERSION))) {
      const mirrored = image.replace(/^quay\.io\//, `localhost:${port}/`);
      await docker(['tag', image, mirrored]);
      await docker(['push', '--quiet', mirrored]);
    }
    before = await snapshot();
  });

  afterAll(async () => {
    console.log(`times: ${JSON.stringify(times)}`);
    if (engine) {
      if (labFile) await ocmLab(['down'], 600_000).catch(() => undefined);
      for (const c of CLUSTERS) if (kindBinary) await kind(['delete', 'cluster', '--name', c.kind, '--kubeconfig', kubeconfig]).catch(() => undefined);
      await docker(['rm', '-f', REGISTRY]).catch(() => undefined);
      // Stopping removes whatever else is left in it (containers, networks) and its data root.
      await engine.stop().catch((err: unknown) => console.error(`stopping the test's Docker engine: ${String(err)}`));
    }
    if (savedDockerHost === undefined) delete process.env.DOCKER_HOST;
    else process.env.DOCKER_HOST = savedDockerHost;
    await restoreSysctls?.();
    await home?.cleanup();
  });

  it('brings OCM and the addons up with our image pushed to the registry: every cluster and addon Available', async () => {
    const contexts = CLUSTERS.map((c) => `kind-${c.kind}=${c.name}`);
    const r = await timed('up', () =>
      ocmLab([
        'up',
        '--runtime',
        'existing',
        '--kubeconfig',
        kubeconfig,
        '--hub-context',
        contexts[0]!,
        ...contexts.slice(1).flatMap((c) => ['--spoke-context', c]),
        '--image-registry',
        `localhost:${port}`,
      ]),
    );
    expect(r.exitCode, r.all).toBe(0);
    // The hub as kind's other clusters reach it: its internal endpoint, not the laptop's 127.0.0.1.
    expect(r.all).toContain('https://hub-control-plane:6443: the internal endpoint of kind-hub');
    const labKubeconfig = path.join(home.home, LAB, 'kubeconfig');
    const hub = await hubAvailability(labKubeconfig);
    expect(hub.clusters).toEqual([
      ['cluster1', true],
      ['cluster2', true],
    ]);
    expect(hub.availableAddons).toEqual(['cluster1', 'cluster2'].flatMap((c) => ADDONS.map((a) => `${c}/${a}`)).sort());
    // Every node pulled our image from the registry as localhost:<port>/ocm-lab:<version>.
    const ours = `localhost:${port}/${OCM_LAB_IMAGE}`;
    for (const c of CLUSTERS) {
      const images = await docker(['exec', `${c.kind}-control-plane`, 'crictl', 'images', '-o', 'json']);
      const tags = (JSON.parse(images) as { images: { repoTags: string[] }[] }).images.flatMap((i) => i.repoTags);
      expect(tags, c.kind).toContain(ours);
    }
    const status = JSON.parse((await ocmLab(['status', '--output', 'json'])).stdout) as { runtime: string; capabilities: string[] };
    expect(status.runtime).toBe('existing');
    expect(status.capabilities).toEqual(expect.arrayContaining(['ocm', 'pods']));
  });

  it('passes every document it can run; those needing VPC isolation are skipped, saying why', async () => {
    const listed = JSON.parse((await ocmLab(['scenario', 'list', '--output', 'json'])).stdout) as { name: string; requires: { capabilities: string[] } }[];
    const needIsolation = listed.filter((s) => s.requires.capabilities.includes('vpc-isolation')).map((s) => s.name);
    expect(needIsolation.length).toBeGreaterThan(0);
    const r = await timed('conformance', () => ocmLab(['conformance', '--output', 'json'], 2_400_000));
    const report = JSON.parse(r.stdout) as {
      passed: number;
      failed: number;
      skipped: number;
      scenarios: { name: string; status: string; skipReason: string | null }[];
    };
    expect(r.exitCode, r.all).toBe(0);
    const skipped = report.scenarios.filter((s) => s.status === 'skipped');
    expect(skipped.map((s) => s.name).sort()).toEqual(needIsolation.sort());
    for (const s of skipped) expect(s.skipReason).toContain('vpc-isolation');
    expect({ passed: report.passed, failed: report.failed }).toEqual({ passed: listed.length - needIsolation.length, failed: 0 });
    // The reason is printed for a reader too.
    expect(r.stderr).toMatch(/lacks[^\n]*vpc-isolation/);
  });

  it('goes down leaving the clusters as they were before up', async () => {
    const r = await timed('down', () => ocmLab(['down'], 600_000));
    expect(r.exitCode, r.all).toBe(0);
    await expect(fs.access(path.join(home.home, LAB))).rejects.toThrow();
    expect(await snapshot()).toEqual(before);
  });
});
