import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MissingPrerequisiteError } from '../../src/errors.js';
import { entryFromKindKubeconfig } from '../../src/runtime/kind/kubeconfigs.js';
import { parseMemAvailable, type HostFacts, type InotifyUse } from '../../src/host/facts.js';
import {
  INOTIFY_PER_KIND_NODE,
  KIND_RECOMMENDED_INOTIFY,
  kindCapacityChecks,
  kindPlatformChecks,
  kindPreflight,
  MEMORY_PER_CLUSTER_BYTES,
  nodesUid,
  type KindPreflightInput,
} from '../../src/runtime/kind/preflight.js';
import { requirePreflight, type PreflightCheck } from '../../src/runtime/preflight.js';
import { KUBERNETES_VERSION } from '../../src/provision/versions.js';

/** The host facts (src/host/facts.ts) with the fields kind's preflight reads given flat; a Linux cgroup v2 amd64 engine. */
function host(f: { platform: string; maxUserWatches: number | null; maxUserInstances: number | null; memAvailableBytes: number | null }): HostFacts {
  return {
    platform: { os: f.platform, arch: 'amd64' },
    root: false,
    inotify: { maxUserWatches: f.maxUserWatches, maxUserInstances: f.maxUserInstances },
    memAvailableBytes: f.memAvailableBytes,
    hostCgroupVersion: '2',
    engine: { available: true, cgroupVersion: '2', architecture: 'amd64', osType: 'linux' },
  };
}

const use = (instances: number, watches: number): InotifyUse => ({ uid: 0, instances, watches, processes: [] });

function input(facts: HostFacts, newClusters: number, more: Partial<KindPreflightInput> = {}): KindPreflightInput {
  return { kubernetesVersion: KUBERNETES_VERSION, artifacts: 'auto', newClusters, facts, inotifyInUse: use(20, 300), builtImageCached: false, ...more };
}

const roomy = { platform: 'linux', maxUserWatches: 524288, maxUserInstances: 512, memAvailableBytes: 16 * 1024 ** 3 };
const levels = (checks: PreflightCheck[]) => Object.fromEntries(checks.map((c) => [c.check, c.level]));
/** What the default lab's 3 new nodes need of max_user_instances with 20 in use: the figure `up` stops below. */
const NEED_3 = 20 + 3 * INOTIFY_PER_KIND_NODE['2'].instances + 8;

describe('kind preflight: capacity', () => {
  it('reads MemAvailable from /proc/meminfo', () => {
    expect(parseMemAvailable('MemTotal:       32871232 kB\nMemFree:         1000 kB\nMemAvailable:   24134956 kB\n')).toBe(24134956 * 1024);
    expect(parseMemAvailable('MemTotal: 1 kB\n')).toBeNull();
  });

  it("accepts a host with kind's recommended limits: every check ok", () => {
    expect(levels(kindCapacityChecks(input(host(roomy), 3)))).toEqual({
      'fs.inotify.max_user_instances': 'ok',
      'fs.inotify.max_user_watches': 'ok',
      memory: 'ok',
    });
  });

  it('below what the new nodes need: stop, naming the limit, its value, the need and the exact sysctl line; the memory shortfall too', () => {
    const checks = kindCapacityChecks(input(host({ ...roomy, maxUserWatches: 4000, maxUserInstances: NEED_3 - 1, memAvailableBytes: 2 * 1024 ** 3 }), 3));
    expect(levels(checks)).toEqual({ 'fs.inotify.max_user_instances': 'stop', 'fs.inotify.max_user_watches': 'stop', memory: 'stop' });
    const instances = checks.find((c) => c.check === 'fs.inotify.max_user_instances')!;
    expect(instances.line).toBe(
      `fs.inotify.max_user_instances is ${NEED_3 - 1}; the lab's 3 new kind nodes need at least ${NEED_3} ` +
        `(20 in use, ${INOTIFY_PER_KIND_NODE['2'].instances} per new cluster × 3, 8 spare)`,
    );
    expect(instances.fix).toBe(`sudo sysctl -w fs.inotify.max_user_instances=${Math.max(512, 2 * NEED_3)}`);
    expect(checks.map((c) => c.fix)).toEqual([
      expect.stringMatching(/^sudo sysctl -w fs\.inotify\.max_user_instances=\d+$/),
      'sudo sysctl -w fs.inotify.max_user_watches=524288',
      expect.stringContaining('free memory'),
    ]);
    expect(checks[2]!.line).toMatch(/2\.0 GiB of memory is available; 3 new kind clusters need about 4\.5 GiB/);
  });

  it("enough for the lab but below kind's advice (a stock Debian's 128 instances and this machine's 192536 watches, one node): ONE warning line, up goes on", () => {
    const facts = host({ ...roomy, maxUserWatches: 192536, maxUserInstances: 128 });
    const checks = kindCapacityChecks(input(facts, 1));
    expect(levels(checks)).toEqual({ 'fs.inotify.max_user_instances': 'warning', 'fs.inotify.max_user_watches': 'warning', memory: 'ok' });
    const warning = requirePreflight(checks, "the lab's kind clusters");
    expect(warning).not.toContain('\n');
    expect(warning).toMatch(/^warning: fs\.inotify\.max_user_instances is 128: enough for this lab \(\d+ needed\), below the 512 kind advises/);
    expect(warning).toContain(': sudo sysctl -w fs.inotify.max_user_instances=512 fs.inotify.max_user_watches=524288');
  });

  it("a stock 128 instances on this machine's cgroup v1 engine: 4 nodes start (warning), a 5th does not (stop); under cgroup v2 the shims' instances make 3 too many", () => {
    const v1 = { ...host({ ...roomy, maxUserInstances: 128 }), hostCgroupVersion: '1' as const };
    const engineV1 = { ...v1, engine: { ...v1.engine!, cgroupVersion: '1' as const } };
    const idle = { inotifyInUse: use(0, 0) };
    const instancesLevel = (facts: HostFacts, n: number) => levels(kindCapacityChecks(input(facts, n, idle)))['fs.inotify.max_user_instances'];
    expect(instancesLevel(engineV1, 3)).toBe('warning');
    expect(instancesLevel(engineV1, 4)).toBe('warning');
    expect(instancesLevel(engineV1, 5)).toBe('stop');
    expect(instancesLevel(host({ ...roomy, maxUserInstances: 128 }), 2)).toBe('warning');
    expect(instancesLevel(host({ ...roomy, maxUserInstances: 128 }), 3)).toBe('stop');
  });

  it('counts what is held now: the same limit is enough on an idle machine and a stop beside another lab', () => {
    const facts = host({ ...roomy, maxUserInstances: NEED_3 + 10 });
    expect(levels(kindCapacityChecks(input(facts, 3)))['fs.inotify.max_user_instances']).toBe('warning');
    expect(levels(kindCapacityChecks(input(facts, 3, { inotifyInUse: use(200, 300) })))['fs.inotify.max_user_instances']).toBe('stop');
  });

  it('counts memory only for clusters still to create, and checks nothing off Linux', () => {
    const tight = { ...roomy, memAvailableBytes: MEMORY_PER_CLUSTER_BYTES * 1.2 };
    expect(levels(kindCapacityChecks(input(host(tight), 1))).memory).toBe('ok');
    expect(levels(kindCapacityChecks(input(host(tight), 2))).memory).toBe('stop');
    expect(kindCapacityChecks(input(host(tight), 0)).filter((c) => c.level !== 'ok')).toEqual([]);
    const mac = kindCapacityChecks(input(host({ ...tight, platform: 'darwin', maxUserWatches: null }), 5));
    expect(mac).toEqual([{ check: 'inotify and memory', level: 'ok', line: expect.stringContaining("the engine's VM") as string }]);
  });

  it("an engine on another kernel (Docker Desktop for Linux, a Podman machine, a remote engine): this machine's limits are not the nodes'", () => {
    const facts = { ...host({ ...roomy, maxUserInstances: 1, maxUserWatches: 1, memAvailableBytes: 1 }), kernel: '6.1.0-26-amd64' };
    const vm = { ...facts, engine: { ...facts.engine!, kernel: '6.10.14-linuxkit' } };
    expect(kindCapacityChecks(input(vm, 3))).toEqual([
      {
        check: 'inotify and memory',
        level: 'ok',
        line: "not checked: the engine runs kernel 6.10.14-linuxkit, not this machine's 6.1.0-26-amd64 (a VM or a remote engine)",
      },
    ]);
    expect(kindCapacityChecks(input({ ...facts, engine: { ...facts.engine!, kernel: '6.1.0-26-amd64' } }, 3)).filter((c) => c.level === 'stop')).toHaveLength(
      3,
    );
  });

  it('fails with exit 3 and every fix at once', () => {
    let err: unknown;
    try {
      requirePreflight(kindCapacityChecks(input(host({ ...roomy, maxUserWatches: 100, maxUserInstances: 50 }), 1)), "the lab's kind clusters");
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(MissingPrerequisiteError);
    expect((err as MissingPrerequisiteError).exitCode).toBe(3);
    expect((err as MissingPrerequisiteError).message).toMatch(
      /^this machine cannot run the lab's kind clusters: fs\.inotify\.max_user_instances is 50; the lab's 1 new kind node needs at least /,
    );
    expect((err as MissingPrerequisiteError).hint).toContain('sudo sysctl -w fs.inotify.max_user_watches=524288');
    expect((err as MissingPrerequisiteError).hint).toContain('sudo sysctl -w fs.inotify.max_user_instances=512');
  });

  it("counts the instances of the user the nodes run as: root for a rootful engine, the user's own for a rootless one", () => {
    const facts = host(roomy);
    expect(nodesUid(facts, 1000)).toBe(0);
    expect(nodesUid({ ...facts, engine: { ...facts.engine!, rootless: true } }, 1000)).toBe(1000);
    expect(KIND_RECOMMENDED_INOTIFY).toEqual({ instances: 512, watches: 524288 });
  });
});

describe('kind preflight: platforms the lab cannot run on (exit 3 naming what is missing)', () => {
  const linux = host(roomy);
  const stopOf = (checks: PreflightCheck[]) => checks.find((c) => c.level === 'stop');

  it('no engine: stop before anything else is checked', () => {
    const checks = kindPreflight(
      input(
        { ...linux, engine: { available: false, reason: "no Docker engine answers 'docker info'", cgroupVersion: null, architecture: null, osType: null } },
        3,
      ),
    );
    expect(checks).toHaveLength(1);
    expect(stopOf(checks)).toMatchObject({
      check: 'engine',
      line: expect.stringContaining('needs a Docker engine') as string,
      fix: expect.stringContaining('start Docker') as string,
    });
  });

  it('an engine of Windows containers', () => {
    const checks = kindPreflight(input({ ...linux, engine: { ...linux.engine!, osType: 'windows' } }, 3));
    expect(stopOf(checks)).toMatchObject({
      check: 'engine',
      line: expect.stringContaining('windows containers') as string,
      fix: expect.stringContaining('Linux containers') as string,
    });
  });

  it('an engine of an architecture no node image exists for', () => {
    const checks = kindPreflight(input({ ...linux, engine: { ...linux.engine!, architecture: 's390x' } }, 3));
    expect(stopOf(checks)).toMatchObject({ check: 'architecture', line: "kind's node images exist for amd64 and arm64; the engine runs s390x" });
    // A node image the user names is theirs to match.
    expect(stopOf(kindPreflight(input({ ...linux, engine: { ...linux.engine!, architecture: 's390x' } }, 3, { nodeImage: 'me/node:s390x' })))).toBeUndefined();
  });

  it('cgroup v1 with a Kubernetes whose kindest/node needs v2, and no build possible (not root, nothing cached): stop with both reasons and the way out', () => {
    const v1 = { ...linux, engine: { ...linux.engine!, cgroupVersion: '1' as const } };
    const stop = stopOf(kindPreflight(input(v1, 3)));
    expect(stop?.check).toBe('node image');
    expect(stop?.line).toMatch(
      /^no node image can run here: kind's published one: .*need cgroup v2 \(the Docker engine runs v1\); the one built here: building the node image needs root/,
    );
    expect(stop?.fix).toContain('sudo ocm-lab setup --runtime kind');
    // As root the build is possible, and a node image built before needs only Docker.
    expect(stopOf(kindPreflight(input({ ...v1, root: true }, 3)))).toBeUndefined();
    expect(kindPreflight(input(v1, 3, { builtImageCached: true })).find((c) => c.check === 'node image')).toMatchObject({
      level: 'ok',
      line: expect.stringContaining('in the engine or the cache already') as string,
    });
  });

  it('cgroup v1, no build possible, but the image served as kindest/node says it runs under v1 (served by a mirror): ok, as chooseNodeImage decides', () => {
    const v1 = { ...linux, engine: { ...linux.engine!, cgroupVersion: '1' as const } };
    expect(kindPreflight(input(v1, 3, { publishedRunsOnCgroupV1: true })).find((c) => c.check === 'node image')).toMatchObject({
      level: 'ok',
      line: expect.stringContaining('labelled to run under cgroup v1') as string,
    });
    // Not with --artifacts build: the published image is not considered there.
    expect(stopOf(kindPreflight(input(v1, 3, { publishedRunsOnCgroupV1: true, artifacts: 'build' })))?.check).toBe('node image');
  });

  it('macOS with an engine of cgroup v1 (nothing can build there): stop, pointing at a cgroup v2 engine', () => {
    const mac: HostFacts = {
      ...linux,
      platform: { os: 'darwin', arch: 'arm64' },
      hostCgroupVersion: null,
      engine: { ...linux.engine!, cgroupVersion: '1', architecture: 'arm64' },
    };
    const stop = stopOf(kindPreflight(input(mac, 3)));
    expect(stop?.line).toContain('the node image is built with debootstrap, on Linux only');
    expect(stop?.fix).toContain('cgroup v2');
  });

  it('an engine of another architecture than this machine: the published image serves it, the build here would not', () => {
    const arm = { ...linux, root: true, engine: { ...linux.engine!, architecture: 'arm64' } };
    expect(stopOf(kindPreflight(input(arm, 3)))).toBeUndefined();
    const stop = stopOf(kindPreflight(input(arm, 3, { artifacts: 'build' })));
    expect(stop?.line).toContain('it would carry amd64 binaries and the engine runs arm64');
  });

  it('Docker Desktop on a Mac (cgroup v2, arm64): every check ok', () => {
    const mac: HostFacts = {
      ...linux,
      platform: { os: 'darwin', arch: 'arm64' },
      hostCgroupVersion: null,
      engine: { ...linux.engine!, architecture: 'arm64' },
    };
    expect(kindPreflight(input(mac, 3, { inotifyInUse: null })).filter((c) => c.level !== 'ok')).toEqual([]);
    // What up checks before it fetches kind: the engine and the node image, not the machine's capacity.
    expect(kindPlatformChecks(input(mac, 3)).map((c) => c.check)).toEqual(['engine', 'node image']);
  });
});

describe('kind kubeconfigs', () => {
  it("renames kind's context to the lab cluster's name and keeps the credentials", () => {
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const text = [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- cluster:',
      `    certificate-authority-data: ${b64('CA PEM')}`,
      '    server: https://127.0.0.1:40123',
      '  name: kind-hb-hub',
      'contexts:',
      '- context:',
      '    cluster: kind-hb-hub',
      '    user: kind-hb-hub',
      '  name: kind-hb-hub',
      'current-context: kind-hb-hub',
      'users:',
      '- name: kind-hb-hub',
      '  user:',
      `    client-certificate-data: ${b64('CERT')}`,
      `    client-key-data: ${b64('KEY')}`,
    ].join('\n');
    expect(entryFromKindKubeconfig(text, 'hub')).toEqual({
      name: 'hub',
      server: 'https://127.0.0.1:40123',
      caPem: 'CA PEM',
      clientCertPem: 'CERT',
      clientKeyPem: 'KEY',
    });
    expect(() => entryFromKindKubeconfig('apiVersion: v1\nkind: Config\n', 'hub')).toThrow(/without a complete current context/);
  });
});

describe('kind failures', () => {
  it('keep the lines that say why, not the Go stack trace', async () => {
    const { kindFailureSummary } = await import('../../src/runtime/kind/kind-cli.js');
    const out = [
      'Creating cluster "hb-hub" ...',
      'ERROR: failed to create cluster: failed to init node with kubeadm: command "docker exec --privileged hb-hub-control-plane kubeadm init" failed with error: exit status 1',
      '[kubelet-check] The kubelet is not healthy after 4m0s',
      'k8s.io/kubernetes/cmd/kubeadm/app/cmd/phases/workflow.(*Runner).Run',
      '\tk8s.io/kubernetes@v1.34.4/cmd/kubeadm/app/cmd/phases/workflow/runner.go:234',
      'main.main',
      '\tk8s.io/kubernetes@v1.34.4/cmd/kubeadm/kubeadm.go:25',
    ].join('\n');
    const summary = kindFailureSummary(out);
    expect(summary).toContain('ERROR: failed to create cluster');
    expect(summary).not.toContain('runner.go');
    expect(summary).not.toContain('main.main');
  });
});

describe('kind preflight: what it reads besides the facts', () => {
  it("the node image counts as cached with its tarball for today's inputs, or with the root filesystem it is built from", async () => {
    const { nodeImageCached, nodeImageKey, nodeImageRef } = await import('../../src/runtime/kind/images/node-image.js');
    const { imageTarFile } = await import('../../src/images/docker-build.js');
    const { NODE_ROOTFS, rootfsTarFile } = await import('../../src/images/rootfs.js');
    const { requireKubernetesRelease } = await import('../../src/provision/versions.js');
    const cache = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-node-cache-'));
    try {
      expect(await nodeImageCached(KUBERNETES_VERSION, cache)).toBe(false);
      const rootfs = rootfsTarFile(cache, NODE_ROOTFS);
      await fs.mkdir(path.dirname(rootfs), { recursive: true });
      await fs.writeFile(rootfs, '');
      expect(await nodeImageCached(KUBERNETES_VERSION, cache)).toBe(true);
      await fs.rm(rootfs);
      const image = imageTarFile(cache, nodeImageRef(KUBERNETES_VERSION), nodeImageKey(requireKubernetesRelease(KUBERNETES_VERSION)));
      await fs.mkdir(path.dirname(image), { recursive: true });
      await fs.writeFile(image, '');
      expect(await nodeImageCached(KUBERNETES_VERSION, cache)).toBe(true);
      // A tarball of other inputs (an older build) is not today's image.
      await fs.rename(image, imageTarFile(cache, nodeImageRef(KUBERNETES_VERSION), '0123456789abcdef'));
      expect(await nodeImageCached(KUBERNETES_VERSION, cache)).toBe(false);
    } finally {
      await fs.rm(cache, { recursive: true, force: true });
    }
  });

  it("kind's published image runs under cgroup v1 only when its configuration says so; a registry that does not answer is a no", async () => {
    const { publishedNodeRunsOnCgroupV1 } = await import('../../src/runtime/kind/images/official-node.js');
    const { NO_MIRRORS } = await import('../../src/provision/mirrors.js');
    const facts = (labels: () => Promise<Record<string, string>>) => ({ cgroupVersion: async () => '1', labels });
    expect(
      await publishedNodeRunsOnCgroupV1(
        KUBERNETES_VERSION,
        NO_MIRRORS,
        facts(async () => ({ 'dev.ocm-lab.kind-node.cgroup-v1': 'true' })),
      ),
    ).toBe(true);
    expect(
      await publishedNodeRunsOnCgroupV1(
        KUBERNETES_VERSION,
        NO_MIRRORS,
        facts(async () => ({})),
      ),
    ).toBe(false);
    expect(
      await publishedNodeRunsOnCgroupV1(
        KUBERNETES_VERSION,
        NO_MIRRORS,
        facts(async () => {
          throw new Error('connection refused');
        }),
      ),
    ).toBe(false);
  });
});
