import { describe, expect, it } from 'vitest';
import { ExitCode, InvalidInputError, MissingPrerequisiteError } from '../../src/errors.js';
import {
  decideEngine,
  engineAsked,
  engineChoice,
  engineLine,
  readVersionJson,
  type EngineName,
  type RecordedEngine,
  type VersionProbe,
} from '../../src/host/engine.js';
import { engineRecord, labEngineMissing, labEngineNote } from '../../src/host/recorded-engine.js';
import { parseDockerInfo, parsePodmanInfo, type HostFacts } from '../../src/host/facts.js';
import { dockerNetworkFacts } from '../../src/images/engine/docker.js';
import { engineNamed } from '../../src/images/engine/index.js';
import { kindNodeVolumes, podmanNetworkFacts } from '../../src/images/engine/podman.js';
import { kindCreateInvocation } from '../../src/runtime/kind/kind-cli.js';
import { podmanChecks, versionParts } from '../../src/runtime/kind/podman-checks.js';
import { kindPlatformChecks } from '../../src/runtime/kind/preflight.js';
import { requirePreflight } from '../../src/runtime/preflight.js';
import { KUBERNETES_VERSION } from '../../src/provision/versions.js';

// What this machine's CLIs printed (2026-12-02; docs/notes.md, kind: Podman 4.3.1 here): `podman version --format json`,
// and Docker 28.2.2's `docker version --format json` with no daemon (exit 1, Server null).
const PODMAN_VERSION =
  '{"Client":{"APIVersion":"4.3.1","Version":"4.3.1","GoVersion":"go1.19.8","GitCommit":"","BuiltTime":"Thu Jan  1 00:00:00 1970","Built":0,"OsArch":"linux/amd64","Os":"linux"}}';
const DOCKER_NO_DAEMON =
  '{"Client":{"Version":"28.2.2","ApiVersion":"1.50","DefaultAPIVersion":"1.50","GitCommit":"e6534b4","GoVersion":"go1.24.3","Os":"linux","Arch":"amd64","BuildTime":"Fri May 30 12:07:14 2025","Context":"default"},"Server":null}';
const DOCKER_UP = JSON.stringify({
  Client: { Version: '28.2.2', ApiVersion: '1.50', Os: 'linux', Arch: 'amd64', Context: 'default' },
  Server: { Platform: { Name: 'Docker Engine - Community' }, Components: [{ Name: 'Engine', Version: '28.2.2' }], Version: '28.2.2' },
});

const answered = (stdout: string): VersionProbe => ({ started: true, exitCode: 0, stdout, stderr: '' });
const NO_DAEMON: VersionProbe = {
  started: true,
  exitCode: 1,
  stdout: DOCKER_NO_DAEMON,
  stderr: 'Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?',
};
const ABSENT: VersionProbe = { started: false, exitCode: -1, stdout: '', stderr: 'spawn podman ENOENT' };

/** A probe answering from a table, recording which CLIs were asked. */
function probes(table: Partial<Record<EngineName, VersionProbe>>) {
  const asked: EngineName[] = [];
  return {
    asked,
    probe: (cli: EngineName) => {
      asked.push(cli);
      return Promise.resolve(table[cli] ?? ABSENT);
    },
  };
}

describe('engine detection: OCM_LAB_ENGINE', () => {
  it('takes docker, podman, auto; unset or empty is auto', () => {
    expect(engineChoice({})).toBe('auto');
    expect(engineChoice({ OCM_LAB_ENGINE: '' })).toBe('auto');
    expect(engineChoice({ OCM_LAB_ENGINE: 'auto' })).toBe('auto');
    expect(engineChoice({ OCM_LAB_ENGINE: 'docker' })).toBe('docker');
    expect(engineChoice({ OCM_LAB_ENGINE: 'podman' })).toBe('podman');
  });

  it('refuses another value with exit 2, naming the variable, the value and the choices', () => {
    let error: unknown;
    try {
      engineChoice({ OCM_LAB_ENGINE: 'nerdctl' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).exitCode).toBe(ExitCode.invalidInput);
    expect((error as InvalidInputError).message).toContain('OCM_LAB_ENGINE=nerdctl');
    expect((error as InvalidInputError).hint).toContain('docker, podman or auto');
  });
});

describe('engine detection: version JSON', () => {
  it("tells Docker's JSON from Podman's and reads the engine's version", () => {
    expect(readVersionJson(answered(DOCKER_UP))).toEqual({ printedBy: 'docker', version: '28.2.2' });
    expect(readVersionJson(answered(PODMAN_VERSION))).toEqual({ printedBy: 'podman', version: '4.3.1' });
    // A Podman remote client (a Podman machine): the server's version is the engine's.
    const remote = JSON.stringify({
      Client: { APIVersion: '5.0.0', Version: '5.0.0', OsArch: 'darwin/arm64' },
      Server: { APIVersion: '4.9.3', Version: '4.9.3' },
    });
    expect(readVersionJson(answered(remote))).toEqual({ printedBy: 'podman', version: '4.9.3' });
  });

  it('a Docker client whose daemon does not answer has no version; text that is not JSON is no reading', () => {
    expect(readVersionJson(NO_DAEMON)).toEqual({ printedBy: 'docker', version: null });
    expect(readVersionJson(answered('Docker version 28.2.2, build e6534b4'))).toBeNull();
    expect(readVersionJson(answered('{"Server":{}}'))).toBeNull();
  });
});

describe('engine detection: which engine', () => {
  it('auto: Docker when it answers, without asking Podman', async () => {
    const p = probes({ docker: answered(DOCKER_UP), podman: answered(PODMAN_VERSION) });
    const d = await decideEngine('auto', p.probe);
    expect(d.found).toEqual({ name: 'docker', cli: 'docker', version: '28.2.2', why: 'Docker answers' });
    expect(p.asked).toEqual(['docker']);
    expect(engineLine(d.found!)).toBe('docker 28.2.2');
  });

  it("auto: Podman where Docker's daemon does not answer, saying why", async () => {
    const p = probes({ docker: NO_DAEMON, podman: answered(PODMAN_VERSION) });
    const d = await decideEngine('auto', p.probe);
    expect(d.found?.name).toBe('podman');
    expect(d.found?.cli).toBe('podman');
    expect(engineLine(d.found!)).toBe('podman 4.3.1');
    expect(d.found?.why).toContain("no Docker engine answers 'docker version': Cannot connect to the Docker daemon");
    expect(p.asked).toEqual(['docker', 'podman']);
  });

  it("auto: Podman's docker shim is Podman, driven through podman", async () => {
    const d = await decideEngine('auto', probes({ docker: answered(PODMAN_VERSION), podman: answered(PODMAN_VERSION) }).probe);
    expect(d.found).toMatchObject({ name: 'podman', cli: 'podman', version: '4.3.1' });
    expect(d.found?.why).toContain("Podman's docker shim");
  });

  it("OCM_LAB_ENGINE=docker with Podman's shim as docker: not found, saying so and what to set", async () => {
    const p = probes({ docker: answered(PODMAN_VERSION), podman: answered(PODMAN_VERSION) });
    const d = await decideEngine('docker', p.probe);
    expect(d.found).toBeNull();
    expect(d.reason).toContain("Podman's docker shim");
    expect(d.reason).toContain('OCM_LAB_ENGINE=podman');
    expect(p.asked).toEqual(['docker']);
  });

  it('OCM_LAB_ENGINE=podman asks only Podman, even where Docker answers', async () => {
    const p = probes({ docker: answered(DOCKER_UP), podman: answered(PODMAN_VERSION) });
    const d = await decideEngine('podman', p.probe);
    expect(d.found).toMatchObject({ name: 'podman', version: '4.3.1', why: 'chosen with $OCM_LAB_ENGINE' });
    expect(p.asked).toEqual(['podman']);
  });

  it('neither answers: the reason names both', async () => {
    const d = await decideEngine('auto', probes({ docker: NO_DAEMON }).probe);
    expect(d.found).toBeNull();
    expect(d.reason).toContain("no Docker engine answers 'docker version'");
    expect(d.reason).toContain('the podman CLI could not be started');
  });
});

const PODMAN_LAB: RecordedEngine = { name: 'podman', endpoint: {} };

describe("engine detection: a lab's recorded engine", () => {
  it('a lab brought up on Podman is looked for in Podman where Docker answers, whatever OCM_LAB_ENGINE says', async () => {
    for (const env of [{}, { OCM_LAB_ENGINE: 'auto' }, { OCM_LAB_ENGINE: 'docker' }, { OCM_LAB_ENGINE: 'podman' }]) {
      const p = probes({ docker: answered(DOCKER_UP), podman: answered(PODMAN_VERSION) });
      const d = await decideEngine(engineAsked(PODMAN_LAB, env), p.probe);
      expect(d.found).toMatchObject({ name: 'podman', cli: 'podman', version: '4.3.1' });
      expect(p.asked).toEqual(['podman']);
    }
  });

  it('a lab brought up on Docker is looked for in Docker under OCM_LAB_ENGINE=podman', async () => {
    const p = probes({ docker: answered(DOCKER_UP), podman: answered(PODMAN_VERSION) });
    const d = await decideEngine(engineAsked({ name: 'docker', endpoint: {} }, { OCM_LAB_ENGINE: 'podman' }), p.probe);
    expect(d.found).toMatchObject({ name: 'docker', version: '28.2.2' });
    expect(p.asked).toEqual(['docker']);
  });

  it('a state that records no engine: OCM_LAB_ENGINE or auto, as before', async () => {
    expect(engineAsked(null, {})).toBe('auto');
    expect(engineAsked(null, { OCM_LAB_ENGINE: 'podman' })).toBe('podman');
    const d = await decideEngine(engineAsked(null, {}), probes({ docker: answered(DOCKER_UP), podman: answered(PODMAN_VERSION) }).probe);
    expect(d.found?.name).toBe('docker');
  });

  it('a bad OCM_LAB_ENGINE is bad input even where the lab records its engine', () => {
    expect(() => engineAsked(PODMAN_LAB, { OCM_LAB_ENGINE: 'nerdctl' })).toThrow(InvalidInputError);
  });

  it('the recorded Podman does not answer, Docker does: not found, Docker not asked; exit 3 naming Podman and what to do', async () => {
    const p = probes({ docker: answered(DOCKER_UP) });
    const d = await decideEngine(engineAsked(PODMAN_LAB, {}), p.probe);
    expect(d.found).toBeNull();
    expect(p.asked).toEqual(['podman']);
    const error = labEngineMissing(
      'lab1',
      { name: 'podman', endpoint: { CONTAINER_HOST: 'ssh://core@127.0.0.1:2222/run/podman/podman.sock' } },
      d.reason,
      'down',
    );
    expect(error).toBeInstanceOf(MissingPrerequisiteError);
    expect(error.exitCode).toBe(ExitCode.missingPrerequisite);
    expect(error.message).toBe(
      "lab 'lab1' was brought up on Podman (CONTAINER_HOST=ssh://core@127.0.0.1:2222/run/podman/podman.sock), and Podman does not answer: " +
        'the podman CLI could not be started; nothing was changed',
    );
    expect(error.hint).toContain('start Podman');
    expect(error.hint).toContain("then run 'ocm-lab down' again");
    expect(error.hint).toContain('whatever OCM_LAB_ENGINE says');
  });

  it('one line when the environment asks for another engine or endpoint than the recorded one; none when they agree', () => {
    expect(labEngineNote('lab1', PODMAN_LAB, { OCM_LAB_ENGINE: 'docker' })).toBe(
      "engine: podman, the one lab 'lab1' was brought up with (not OCM_LAB_ENGINE=docker)",
    );
    expect(labEngineNote('lab1', PODMAN_LAB, {})).toBeNull();
    expect(labEngineNote('lab1', PODMAN_LAB, { OCM_LAB_ENGINE: 'podman' })).toBeNull();
    expect(labEngineNote('lab1', null, { OCM_LAB_ENGINE: 'docker' })).toBeNull();
    const remote: RecordedEngine = { name: 'docker', endpoint: { DOCKER_HOST: 'ssh://me@build1' } };
    expect(labEngineNote('lab1', remote, { DOCKER_HOST: 'ssh://me@build1' })).toBeNull();
    expect(labEngineNote('lab1', remote, {})).toBe(
      "engine: docker, the one lab 'lab1' was brought up with (DOCKER_HOST=ssh://me@build1 as at up, not DOCKER_HOST unset)",
    );
  });

  it("up records the engine's name and the endpoint variables of its CLI that are set, never a URL's password", () => {
    const env = {
      DOCKER_HOST: 'tcp://10.0.0.5:2376',
      DOCKER_TLS_VERIFY: '1',
      DOCKER_CERT_PATH: '/home/me/.docker/remote',
      CONTAINER_HOST: 'ssh://core@127.0.0.1:2222/run/podman/podman.sock',
      OCM_LAB_ENGINE: 'docker',
    };
    expect(engineRecord('docker', env)).toEqual({
      name: 'docker',
      endpoint: { DOCKER_HOST: 'tcp://10.0.0.5:2376', DOCKER_TLS_VERIFY: '1', DOCKER_CERT_PATH: '/home/me/.docker/remote' },
    });
    expect(engineRecord('podman', env)).toEqual({ name: 'podman', endpoint: { CONTAINER_HOST: 'ssh://core@127.0.0.1:2222/run/podman/podman.sock' } });
    expect(engineRecord('podman', {})).toEqual({ name: 'podman', endpoint: {} });
    expect(engineRecord('podman', { CONTAINER_HOST: 'ssh://core:hunter2@host/run/podman/podman.sock' })).toEqual({ name: 'podman', endpoint: {} });
  });
});

// `podman info --format json` of this machine, cut to what is read (rootful Podman 4.3.1, cgroup v1, netavark).
const PODMAN_INFO = JSON.stringify({
  host: {
    arch: 'amd64',
    cgroupVersion: 'v1',
    cgroupManager: 'cgroupfs',
    kernel: '6.18.44-fc-v657',
    os: 'linux',
    networkBackend: 'netavark',
    security: { rootless: false, seccompEnabled: true },
  },
  version: { APIVersion: '4.3.1', Version: '4.3.1', OsArch: 'linux/amd64', Os: 'linux' },
});

describe("host facts: Podman's info", () => {
  it('reads the cgroup version, architecture, OS, kernel, rootless and the network backend', () => {
    expect(parsePodmanInfo(PODMAN_INFO)).toEqual({
      available: true,
      cgroupVersion: '1',
      architecture: 'amd64',
      osType: 'linux',
      kernel: '6.18.44-fc-v657',
      networkBackend: 'netavark',
      version: '4.3.1',
    });
    const rootless = JSON.parse(PODMAN_INFO) as { host: Record<string, unknown> };
    rootless.host.cgroupVersion = 'v2';
    rootless.host.arch = 'arm64';
    rootless.host.security = { rootless: true };
    expect(parsePodmanInfo(JSON.stringify(rootless))).toMatchObject({ cgroupVersion: '2', architecture: 'arm64', rootless: true });
  });

  it('no host facts: unavailable', () => {
    expect(parsePodmanInfo('not json').available).toBe(false);
    expect(parsePodmanInfo('{}').available).toBe(false);
  });

  it("Docker's info reading is Docker's alone: Podman's JSON is no Docker answer", () => {
    expect(parseDockerInfo(PODMAN_INFO).available).toBe(false);
  });
});

const plan = { name: 'lab-vpc-1', subnet: '10.232.0.0/20', gateway: '10.232.0.1', labels: { 'dev.ocm-lab.lab': 'lab', 'dev.ocm-lab.role': 'vpc' } };

describe('engine seam: the argument lists', () => {
  it('Docker: a plain bridge (dockerd isolates its bridges), the same arguments as before the seam', () => {
    expect(engineNamed('docker').networkCreateArgs(plan)).toEqual([
      'network',
      'create',
      '--driver',
      'bridge',
      '--subnet',
      '10.232.0.0/20',
      '--gateway',
      '10.232.0.1',
      '--label',
      'dev.ocm-lab.lab=lab',
      '--label',
      'dev.ocm-lab.role=vpc',
      'lab-vpc-1',
    ]);
  });

  it("Podman: netavark's isolate option on every VPC network; without a subnet Podman picks one", () => {
    const args = engineNamed('podman').networkCreateArgs(plan);
    expect(args.slice(0, 6)).toEqual(['network', 'create', '--driver', 'bridge', '--opt', 'isolate=true']);
    expect(args.at(-1)).toBe('lab-vpc-1');
    expect(engineNamed('podman').networkCreateArgs({ name: 'n', labels: {} })).toEqual([
      'network',
      'create',
      '--driver',
      'bridge',
      '--opt',
      'isolate=true',
      'n',
    ]);
  });

  it("kind create: Docker's network variable on Docker; on Podman the podman provider and its own variable, never Docker's", () => {
    const opts = { name: 'lab-hub', configFile: '/l/hub.yaml', kubeconfig: '/l/hub.kubeconfig', network: 'lab-vpc-1', proxyEnv: { NO_PROXY: 'x' } };
    const docker = kindCreateInvocation(engineNamed('docker'), opts);
    expect(docker.args).toEqual(['create', 'cluster', '--name', 'lab-hub', '--config', '/l/hub.yaml', '--kubeconfig', '/l/hub.kubeconfig']);
    expect(docker.env).toEqual({ NO_PROXY: 'x', KIND_EXPERIMENTAL_DOCKER_NETWORK: 'lab-vpc-1' });
    const podman = kindCreateInvocation(engineNamed('podman'), opts);
    expect(podman.args).toEqual(docker.args);
    expect(podman.env).toEqual({ NO_PROXY: 'x', KIND_EXPERIMENTAL_PROVIDER: 'podman', KIND_EXPERIMENTAL_PODMAN_NETWORK: 'lab-vpc-1' });
    // kind get/delete: the provider alone on Podman, nothing on Docker.
    expect(engineNamed('podman').kindEnv()).toEqual({ KIND_EXPERIMENTAL_PROVIDER: 'podman' });
    expect(engineNamed('docker').kindEnv()).toEqual({});
  });

  it("the lab registry's push: plain HTTP on loopback needs --tls-verify=false on Podman; image IDs as digests", () => {
    expect(engineNamed('docker').pushToLabRegistryArgs('127.0.0.1:5000/a:b')).toEqual(['push', '--quiet', '127.0.0.1:5000/a:b']);
    expect(engineNamed('podman').pushToLabRegistryArgs('127.0.0.1:5000/a:b')).toEqual(['push', '--quiet', '--tls-verify=false', '127.0.0.1:5000/a:b']);
    const hex = 'c5f3bf6b10c0c552ca519eb28f0a3eb4c416865bac4ce6649a1c44e4a405d2cc';
    expect(engineNamed('podman').imageDigest(hex)).toBe(`sha256:${hex}`);
    expect(engineNamed('podman').imageDigest(`sha256:${hex}`)).toBe(`sha256:${hex}`);
    expect(engineNamed('docker').imageDigest(`sha256:${hex}`)).toBe(`sha256:${hex}`);
  });
});

describe('engine seam: the name kind is given for an image built here', () => {
  it("Podman: localhost/ before a name without a registry, as podman build and load store it (kind would look for docker.io's)", () => {
    const podman = engineNamed('podman');
    expect(podman.storedImageRef('ocm-lab/kind-node:v1.37.2')).toBe('localhost/ocm-lab/kind-node:v1.37.2');
    expect(podman.storedImageRef('registry:2')).toBe('localhost/registry:2');
    expect(podman.storedImageRef('localhost/ocm-lab/kind-node:v1.37.2')).toBe('localhost/ocm-lab/kind-node:v1.37.2');
    expect(podman.storedImageRef('quay.io/open-cluster-management/work:v1.2.1')).toBe('quay.io/open-cluster-management/work:v1.2.1');
    expect(podman.storedImageRef('127.0.0.1:5001/demo:dev')).toBe('127.0.0.1:5001/demo:dev');
  });

  it('Docker: the name as it is', () => {
    expect(engineNamed('docker').storedImageRef('ocm-lab/kind-node:v1.37.2')).toBe('ocm-lab/kind-node:v1.37.2');
  });
});

describe("engine seam: the node volumes kind's podman provider leaves", () => {
  // `podman volume ls --format json` (podman 4.3.1 here) after a kind create that failed at `podman run`.
  const listed: { Name: string; Labels: Record<string, string> | null }[] = [
    { Name: '2a0060ca', Labels: { 'kindlab-cluster1-control-plane': 'true' } },
    { Name: '77513', Labels: { 'kindlab-hub-control-plane': 'true' } },
    { Name: 'd5e7f', Labels: { 'kindlab-cluster1-worker2': 'true' } },
    { Name: 'cluster10', Labels: { 'kindlab-cluster10-control-plane': 'true' } },
    { Name: 'ocm-lab-registry-data', Labels: {} },
    { Name: 'someone-elses', Labels: { 'kindlab-cluster1-control-plane': 'false' } },
    { Name: 'no-labels', Labels: null },
  ];

  it("are the volumes labelled '<node>=true' for one cluster's nodes, no other cluster's and nothing else", () => {
    expect(kindNodeVolumes(listed, 'kindlab-cluster1')).toEqual(['2a0060ca', 'd5e7f']);
    expect(kindNodeVolumes(listed, 'kindlab-hub')).toEqual(['77513']);
    expect(kindNodeVolumes(listed, 'kindlab-cluster2')).toEqual([]);
  });

  it('a cluster name is matched as written, not as a pattern', () => {
    expect(kindNodeVolumes([{ Name: 'x', Labels: { 'aXb-control-plane': 'true' } }], 'a.b')).toEqual([]);
  });

  it('Docker leaves none: its engine removes a node with its volume', async () => {
    expect(await engineNamed('docker').removeKindNodeVolumes('kindlab-cluster1')).toEqual([]);
  });
});

describe('engine seam: network inspect in one shape', () => {
  it("Docker: the Containers map's addresses without their prefix length", () => {
    const facts = dockerNetworkFacts({
      Name: 'lab-vpc-1',
      Labels: { 'dev.ocm-lab.lab': 'lab' },
      IPAM: { Config: [{ Subnet: 'fd00::/64' }, { Subnet: '10.232.0.0/20', Gateway: '10.232.0.1' }] },
      Containers: { abc: { Name: 'lab-hub-control-plane', IPv4Address: '10.232.0.2/20' } },
    });
    expect(facts).toEqual({
      name: 'lab-vpc-1',
      subnet: '10.232.0.0/20',
      containers: { 'lab-hub-control-plane': '10.232.0.2' },
      labels: { 'dev.ocm-lab.lab': 'lab' },
    });
  });

  it("Podman: netavark's lower-case JSON (as inspected here), the containers from their own inspects", () => {
    const network = {
      name: 'ocmlab-probe-41',
      driver: 'bridge',
      subnets: [{ subnet: '10.251.7.0/24', gateway: '10.251.7.1' }],
      labels: { 'dev.ocm-lab.lab': 'probe', 'dev.ocm-lab.role': 'vpc' },
      options: { isolate: 'true' },
    };
    const containers: Parameters<typeof podmanNetworkFacts>[1] = [
      { Name: 'probe-hub-control-plane', NetworkSettings: { Networks: { 'ocmlab-probe-41': { IPAddress: '10.251.7.2' }, other: { IPAddress: '10.9.0.2' } } } },
      { Name: 'elsewhere', NetworkSettings: { Networks: { other: { IPAddress: '10.9.0.3' } } } },
    ];
    expect(podmanNetworkFacts(network, containers)).toEqual({
      name: 'ocmlab-probe-41',
      subnet: '10.251.7.0/24',
      containers: { 'probe-hub-control-plane': '10.251.7.2' },
      labels: { 'dev.ocm-lab.lab': 'probe', 'dev.ocm-lab.role': 'vpc' },
    });
  });
});

const podmanEngine = {
  available: true,
  name: 'podman' as const,
  version: '4.3.1',
  cgroupVersion: '1' as const,
  architecture: 'amd64',
  osType: 'linux',
  networkBackend: 'netavark',
};
const stops = (checks: { check: string; level: string }[]) => checks.filter((c) => c.level === 'stop').map((c) => c.check);

/** The kind preflight's platform checks on a non-root Linux host with room to spare, on `engine`. */
function platformChecksOn(engine: HostFacts['engine'], hostCgroupVersion: '1' | '2', more: Partial<HostFacts> = {}) {
  const facts: HostFacts = {
    platform: { os: 'linux', arch: 'amd64' },
    root: false,
    inotify: { maxUserWatches: 524288, maxUserInstances: 512 },
    memAvailableBytes: 16 * 1024 ** 3,
    hostCgroupVersion,
    engine,
    ...more,
  };
  return kindPlatformChecks({ kubernetesVersion: KUBERNETES_VERSION, artifacts: 'auto', newClusters: 3, facts, inotifyInUse: null, builtImageCached: false });
}

describe('kind preflight on Podman: bad input before anything is created', () => {
  it("this machine's Podman (4.3.1, rootful, netavark, cgroup v1) passes", () => {
    expect(podmanChecks(podmanEngine)).toEqual([{ check: 'podman', level: 'ok', line: 'podman 4.3.1, rootful, network backend netavark' }]);
  });

  it("kind's minimum, 1.8.0: older is a stop naming the version and what to do", () => {
    expect(versionParts('1.7.1-dev')).toEqual([1, 7, 1]);
    const old = podmanChecks({ ...podmanEngine, version: '1.7.1-dev' });
    expect(stops(old)).toEqual(['podman version']);
    expect(old[0]?.line).toBe("podman 1.7.1-dev is older than kind's podman provider takes (1.8.0 or later)");
    expect(old[0]?.fix).toContain('upgrade podman');
    expect(stops(podmanChecks({ ...podmanEngine, version: '1.8.0' }))).toEqual([]);
    expect(stops(podmanChecks({ ...podmanEngine, version: '0.12.9' }))).toEqual(['podman version']);
    expect(stops(podmanChecks({ ...podmanEngine, version: 'dev' }))).toEqual(['podman version']);
  });

  it('rootless on a cgroup v1 host: a stop; rootless on cgroup v2 passes', () => {
    const v1 = podmanChecks({ ...podmanEngine, rootless: true });
    expect(stops(v1)).toEqual(['podman rootless']);
    expect(v1[0]?.line).toContain('rootless on a cgroup v1 host');
    expect(v1[0]?.fix).toContain('as root');
    expect(stops(podmanChecks({ ...podmanEngine, rootless: true, cgroupVersion: '2' }))).toEqual([]);
  });

  it('a network backend other than netavark cannot isolate the VPC networks: a stop', () => {
    const cni = podmanChecks({ ...podmanEngine, networkBackend: 'cni' });
    expect(stops(cni)).toEqual(['podman network']);
    expect(cni[0]?.line).toContain("Podman's network backend is cni");
  });

  it("the kind preflight stops at once with exit 3, the preflight's 'this platform cannot run the lab'", () => {
    const checks = platformChecksOn({ ...podmanEngine, rootless: true }, '1');
    expect(checks.map((c) => [c.check, c.level])).toEqual([
      ['engine', 'ok'],
      ['podman rootless', 'stop'],
    ]);
    expect(checks[0]?.line).toBe('podman 4.3.1 answers (linux, amd64)');
    let error: unknown;
    try {
      requirePreflight(checks, "the lab's kind clusters");
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(MissingPrerequisiteError);
    expect((error as MissingPrerequisiteError).exitCode).toBe(ExitCode.missingPrerequisite);
    expect((error as MissingPrerequisiteError).message).toContain('rootless on a cgroup v1 host');
  });

  it("a host without /lib/modules, which kind's podman provider mounts into every node: a stop saying how to make it", () => {
    // The node image's verdict on this unprivileged host is not what this case is about.
    const podmanStops = (checks: { check: string; level: string }[]) => stops(checks).filter((c) => c.startsWith('podman'));
    const checks = platformChecksOn(podmanEngine, '2', { libModules: false });
    expect(podmanStops(checks)).toEqual(['podman /lib/modules']);
    expect(checks.find((c) => c.level === 'stop')?.fix).toContain('mkdir -p /lib/modules');
    expect(podmanStops(platformChecksOn(podmanEngine, '2', { libModules: true }))).toEqual([]);
    // Not read, or another kernel than this machine's (a Podman machine's VM): not this host's /lib/modules that counts.
    expect(podmanStops(platformChecksOn(podmanEngine, '2'))).toEqual([]);
    expect(podmanStops(platformChecksOn({ ...podmanEngine, kernel: '6.5.0-vm' }, '2', { libModules: false, kernel: '6.18.44' }))).toEqual([]);
    // Docker makes a missing mount source itself.
    expect(podmanStops(platformChecksOn({ available: true, cgroupVersion: '2', architecture: 'amd64', osType: 'linux' }, '2', { libModules: false }))).toEqual(
      [],
    );
  });

  it("a Docker engine's checks are as before: no Podman check among them", () => {
    const checks = platformChecksOn({ available: true, cgroupVersion: '2', architecture: 'amd64', osType: 'linux', rootless: true }, '2');
    expect(checks[0]?.line).toBe('a Docker engine answers (linux, amd64)');
    expect(checks.some((c) => c.check.startsWith('podman'))).toBe(false);
  });
});
