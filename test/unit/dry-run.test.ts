import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { defaultLabConfig, parseLabConfig, type LabConfig } from '../../src/config/index.js';
import { labDryRun, planLab } from '../../src/cli/dry-run/lab-plan.js';
import type { HostFacts } from '../../src/host/facts.js';
import { clusterSpecs } from '../../src/runtime/existing/contexts.js';
import { renderExistingDownPlan } from '../../src/runtime/existing/dry-run.js';
import { planExistingDown } from '../../src/runtime/existing/plan.js';
import { ExistingRuntime, existingLabConfig } from '../../src/runtime/existing/runtime.js';
import { KindRuntime } from '../../src/runtime/kind/runtime.js';
import { renderLocalDownPlan, renderLocalPlan } from '../../src/runtime/local/dry-run.js';
import { planInput } from '../../src/runtime/local/lab-network.js';
import { planLoopback, planNetworkIn } from '../../src/runtime/local/network/index.js';
import { planLocalDown, planLocalLab } from '../../src/runtime/local/plan-lab.js';
import { LocalRuntime } from '../../src/runtime/local/runtime.js';
import type { LocalLabState } from '../../src/runtime/local/state.js';
import type { ResolvedRuntime } from '../../src/runtime/registry.js';
import type { PlanOptions, Runtime, RuntimePlan } from '../../src/runtime/types.js';
import { UPSTREAM_MANAGER_DEPLOYMENT, UPSTREAM_RELEASE_NAMESPACE } from '../../src/addons/upstream/index.js';
import { OCM_LAB_IMAGE, upstreamAddonImage } from '../../src/images/catalogue.js';
import { UPSTREAM_ADDON_BINARIES } from '../../src/provision/recipes.js';
import { expectGolden } from '../support/golden.js';
import { addonVocabulary } from '../../src/addons/registry.js';

const EXAMPLES = fileURLToPath(new URL('../../examples/', import.meta.url));
/** Where labs live in the goldens: the default of a user named `user`. */
const LABS = '/home/user/.local/state/ocm-lab/labs';
const USER_KUBECONFIG = '/home/user/.kube/config';
const CHOSEN: Omit<ResolvedRuntime, 'name'> = { reason: 'chosen with --runtime' };

/** A Linux host with a cgroup v2 Docker engine, for plans that would read the machine. */
const TEST_HOST: HostFacts = {
  platform: { os: 'linux', arch: 'amd64' },
  root: false,
  inotify: { maxUserWatches: 524288, maxUserInstances: 512 },
  memAvailableBytes: 16 * 1024 ** 3,
  hostCgroupVersion: '2',
  engine: { available: true, cgroupVersion: '2', architecture: 'amd64', osType: 'linux' },
};

const golden = (name: string, actual: string): Promise<void> => expectGolden(name, actual, 'test/unit/dry-run.test.ts');

/** The text and JSON of one dry run, each against its golden file. */
async function goldenPair(base: string, result: { dryRun: object; text: string }): Promise<void> {
  await golden(`${base}.txt`, result.text);
  await golden(`${base}.json`, `${JSON.stringify(result.dryRun, null, 2)}\n`);
}

async function threeSpokes(): Promise<LabConfig> {
  const file = path.join(EXAMPLES, 'three-spokes.yaml');
  return parseLabConfig(await fs.readFile(file, 'utf8'), file, addonVocabulary());
}

const LABS_TO_PLAN: { id: string; config: () => Promise<LabConfig> }[] = [
  { id: 'default', config: async () => defaultLabConfig() },
  { id: 'three-spokes', config: threeSpokes },
];

/** `Runtime.plan` with the labs under LABS (none is up there): the path `up --dry-run` takes. */
async function planOf(runtime: Pick<Runtime, 'plan'>, config: LabConfig, options: PlanOptions, env: Record<string, string> = {}): Promise<RuntimePlan> {
  vi.stubEnv('OCM_LAB_HOME', LABS);
  for (const [k, v] of Object.entries(env)) vi.stubEnv(k, v);
  try {
    return await runtime.plan(config, options);
  } finally {
    vi.unstubAllEnvs();
  }
}

/** The local runtime on a machine where namespaces can be made and nothing uses the first candidate range. */
function localUp(config: LabConfig): Promise<RuntimePlan> {
  return planOf(new LocalRuntime(), config, { action: 'up', facts: { freeCidr: '10.213.0.0/16' } });
}

/** The kind runtime's plan on `engine` (the one asked for; the goldens are Docker's whatever this machine runs). */
function kindUp(config: LabConfig, action: 'up' | 'down' = 'up', engine: 'docker' | 'podman' = 'docker'): Promise<RuntimePlan> {
  return planOf(new KindRuntime(), config, { action }, { OCM_LAB_ENGINE: engine });
}

/** The lab's clusters as contexts `kind-<name>` of the user's kubeconfig, authenticated with client certificates. */
function existingInput(config: LabConfig) {
  const hub = config.clusters.find((c) => c.hub)!;
  return {
    kubeconfig: USER_KUBECONFIG,
    hubContext: `kind-${hub.name}=${hub.name}`,
    spokeContexts: config.clusters.filter((c) => !c.hub).map((c) => `kind-${c.name}=${c.name}`),
  };
}

async function existingUp(base: LabConfig): Promise<{ config: LabConfig; runtime: RuntimePlan }> {
  const input = existingInput(base);
  const contexts = Object.fromEntries(
    [input.hubContext, ...input.spokeContexts].map((spec, i) => [
      spec.split('=')[0],
      { server: `https://127.0.0.1:${40001 + i}`, credentials: 'client certificate' },
    ]),
  );
  const runtime = await planOf(new ExistingRuntime(input), base, { action: 'up', facts: { contexts } });
  return { config: runtime.config!, runtime };
}

describe('up --dry-run: golden text and JSON per runtime', () => {
  for (const lab of LABS_TO_PLAN) {
    it(`local, ${lab.id} lab`, async () => {
      const config = await lab.config();
      await goldenPair(`dry-run-local-${lab.id}`, labDryRun(config, 'up', false, { name: 'local', ...CHOSEN }, await localUp(config)));
    });

    it(`kind, ${lab.id} lab`, async () => {
      const config = await lab.config();
      await goldenPair(`dry-run-kind-${lab.id}`, labDryRun(config, 'up', false, { name: 'kind', ...CHOSEN }, await kindUp(config)));
    });

    it(`existing, ${lab.id} lab`, async () => {
      const { config, runtime } = await existingUp(await lab.config());
      await goldenPair(`dry-run-existing-${lab.id}`, labDryRun(config, 'up', false, { name: 'existing', ...CHOSEN }, runtime, true));
    });
  }
});

describe('up --dry-run on kind names the engine the lab would run on', () => {
  it("on Podman: Podman's networks, the rest as on Docker", async () => {
    const config = defaultLabConfig();
    const [docker, podman] = [await kindUp(config), await kindUp(config, 'up', 'podman')];
    expect(docker.text).toContain('Docker networks (one per VPC):');
    expect(podman.text).toContain('Podman networks (one per VPC):');
    expect(podman.text).not.toMatch(/Docker/);
    expect(podman.text.replaceAll('Podman', 'Docker')).toBe(docker.text);
  });
});

describe('down --dry-run: golden text and JSON per runtime (three-spokes lab, up)', () => {
  it('local: the processes, the recorded network resources, the leftovers by name, the lab directory', async () => {
    const config = await threeSpokes();
    const network = planNetworkIn(planInput(config), '10.213.0.0/16');
    const state: LocalLabState = {
      version: 1,
      lab: config.name,
      runtime: 'local',
      createdAt: '2026-01-01T00:00:00.000Z',
      config,
      runtimeState: {
        network,
        networkResources: [
          ...network.vpcs.flatMap((v) => [
            { kind: 'netns' as const, name: v.netns },
            { kind: 'link' as const, name: v.hostIf },
          ]),
          { kind: 'iptables-chain', table: 'filter', chain: network.chain, jumpFrom: ['FORWARD'] },
          { kind: 'sysctl', key: 'net.ipv4.ip_forward', previous: '0' },
        ],
      },
    };
    const plan = planLocalDown(config.name, path.join(LABS, config.name), state, false);
    expect(plan.processes).toHaveLength(config.clusters.length * 4);
    await goldenPair(
      'dry-run-local-three-spokes-down',
      labDryRun(config, 'down', true, { name: 'local', ...CHOSEN }, { runtime: 'local', steps: [], plan, text: renderLocalDownPlan(plan) }),
    );
  });

  it('kind', async () => {
    const config = await threeSpokes();
    await goldenPair('dry-run-kind-three-spokes-down', labDryRun(config, 'down', true, { name: 'kind', ...CHOSEN }, await kindUp(config, 'down')));
  });

  it('existing: the installs come off, the clusters stay', async () => {
    const { config } = await existingUp(await threeSpokes());
    const specs = clusterSpecs(existingInput(config));
    const plan = planExistingDown(config.name, { OCM_LAB_HOME: LABS }, { kubeconfig: USER_KUBECONFIG, clusters: specs }, false);
    const result = labDryRun(
      config,
      'down',
      true,
      { name: 'existing', ...CHOSEN },
      { runtime: 'existing', steps: [], plan, text: renderExistingDownPlan(plan) },
      true,
    );
    expect(result.text).toMatch(/Installs taken off the clusters first/);
    await goldenPair('dry-run-existing-three-spokes-down', result);
  });
});

describe('dry-run plans', () => {
  it('print the JSON keys in one fixed order', async () => {
    const config = defaultLabConfig();
    const { dryRun } = labDryRun(config, 'up', false, { name: 'local', ...CHOSEN }, await localUp(config));
    expect(Object.keys(dryRun)).toEqual(['lab', 'action', 'exists', 'runtime', 'plan', 'installs']);
    expect(Object.keys(dryRun.runtime)).toEqual(['name', 'reason', 'steps']);
  });

  it('local: addresses come from the network plan, the nodelet runs under nsenter in the VPC', async () => {
    const config = defaultLabConfig();
    const plan = (await localUp(config)).plan as ReturnType<typeof planLocalLab>;
    const hub = plan.clusters.find((c) => c.hub)!;
    const vpc = plan.network.vpcs.find((v) => v.hub)!;
    expect(vpc.clusters.find((c) => c.name === hub.name)!.address).toBe(hub.address);
    expect(hub.apiServer).toBe(`https://${hub.address}:6443`);
    expect(hub.processes.map((p) => p.name)).toEqual(['etcd', 'kube-apiserver', 'kube-controller-manager', 'nodelet']);
    const nodelet = hub.processes.at(-1)!;
    expect(nodelet.binary).toBe('ocm-lab');
    expect(nodelet.prefix).toEqual(['nsenter', `--net=/var/run/netns/${vpc.netns}`, '--']);
    expect(nodelet.args.slice(0, 2)).toEqual(['internal', 'nodelet']);
    expect(vpc.routes.filter((r) => r.type === 'unreachable').map((r) => r.dst)).toContain(plan.network.cidr);
  });

  it('local without namespaces: loopback addresses, no routes, no rules, processes without a prefix', () => {
    const config = defaultLabConfig();
    const plan = planLocalLab(config, { labDir: path.join(LABS, config.name), network: planLoopback(planInput(config)), networkWhy: 'not root' });
    expect(plan.network.mode).toBe('loopback');
    expect(plan.network.iptables).toEqual([]);
    expect(plan.network.vpcs.every((v) => v.netns === null && v.routes.length === 0)).toBe(true);
    expect(plan.clusters.every((c) => c.address.startsWith('127.') && c.processes.every((p) => p.prefix.length === 0))).toBe(true);
    expect(renderLocalPlan(plan)).toMatch(/^Loopback addresses in 127\./m);
  });

  it("an addon set to upstream: its implementation and upstream's image; on local, its binaries provisioned and mapped", async () => {
    const config: LabConfig = { ...defaultLabConfig(), addonImplementations: { 'cluster-proxy': 'upstream' } };
    const runtime = await localUp(config);
    const { dryRun } = labDryRun(config, 'up', false, { name: 'local', ...CHOSEN }, runtime);
    expect(dryRun.installs.addons.map((a) => [a.name, a.implementation])).toEqual([
      ['cluster-proxy', 'upstream'],
      ['managed-serviceaccount', 'ocm-lab'],
      ['cluster-gateway', 'ocm-lab'],
    ]);
    expect(dryRun.installs.addons[0]!.manager).toEqual({
      namespace: UPSTREAM_RELEASE_NAMESPACE,
      name: UPSTREAM_MANAGER_DEPLOYMENT['cluster-proxy'],
      image: upstreamAddonImage('cluster-proxy'),
    });
    expect(dryRun.installs.addons[1]!.manager!.image).toBe(OCM_LAB_IMAGE);
    const plan = runtime.plan as ReturnType<typeof planLocalLab>;
    const binaries = plan.binaries.map((b) => b.name);
    for (const b of UPSTREAM_ADDON_BINARIES['cluster-proxy']) {
      expect(binaries).toContain(b);
      expect(plan.clusters[0]!.processes.at(-1)!.args).toContain(`${b}=${b}`);
    }
    expect(binaries).not.toContain('managed-serviceaccount');
  });
});

describe('a dry run creates nothing', () => {
  const LAB = 'dryrunnothing';
  const SAVED = ['HOME', 'OCM_LAB_HOME', 'OCM_LAB_CACHE_DIR', 'XDG_STATE_HOME', 'XDG_CACHE_HOME', 'OCM_LAB_BIN_DIR'] as const;
  const saved: Partial<Record<(typeof SAVED)[number], string>> = {};
  let dir: string;
  let kubeconfig: string;

  /** Every file and directory under `dir`, relative. */
  async function tree(): Promise<string[]> {
    const entries = await fs.readdir(dir, { recursive: true });
    return entries.map(String).sort();
  }

  async function labNamespaces(): Promise<string[]> {
    const r = await execa('ip', ['netns', 'list'], { reject: false });
    return String(r.stdout ?? '')
      .split('\n')
      .filter((l) => l.startsWith(`ocmlab.${LAB}.`));
  }

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-dry-run-'));
    for (const key of SAVED) saved[key] = process.env[key];
    process.env.HOME = path.join(dir, 'home');
    process.env.OCM_LAB_HOME = path.join(dir, 'labs');
    process.env.OCM_LAB_CACHE_DIR = path.join(dir, 'cache');
    process.env.XDG_STATE_HOME = path.join(dir, 'state');
    process.env.XDG_CACHE_HOME = path.join(dir, 'xdg-cache');
    delete process.env.OCM_LAB_BIN_DIR;
    kubeconfig = path.join(dir, 'user.kubeconfig');
    const ca = Buffer.from('not a real CA').toString('base64');
    await fs.writeFile(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        `- {name: a, cluster: {server: 'https://127.0.0.1:1', certificate-authority-data: ${ca}}}`,
        `- {name: b, cluster: {server: 'https://127.0.0.1:2', certificate-authority-data: ${ca}}}`,
        'users:',
        '- {name: u, user: {token: not-a-token}}',
        'contexts:',
        '- {name: one, context: {cluster: a, user: u}}',
        '- {name: two, context: {cluster: b, user: u}}',
        '',
      ].join('\n'),
    );
  });

  afterAll(async () => {
    for (const key of SAVED) {
      if (saved[key] === undefined) delete process.env[key];
      else process.env[key] = saved[key];
    }
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  it('on every runtime, for up and for down: no file, no directory, no network namespace', async () => {
    const config = { ...defaultLabConfig(), name: LAB };
    const before = await tree();
    expect(before).toEqual(['user.kubeconfig']);
    const runs = [
      await planLab('local', config, { action: 'up' }),
      await planLab('local', config, { action: 'down' }),
      // Given host facts: the artifacts of kind's plan would otherwise ask the Docker engine (docker info).
      await planLab('kind', config, { action: 'up', host: TEST_HOST }),
      await planLab('kind', config, { action: 'down' }),
      await planLab(
        'existing',
        existingLabConfig(config, clusterSpecs({ kubeconfig, hubContext: 'one=hub', spokeContexts: ['two=cluster1'] })),
        { action: 'up' },
        {
          options: { kubeconfig, hubContext: 'one=hub', spokeContexts: ['two=cluster1'] },
        },
      ),
      await planLab('existing', config, { action: 'down' }),
    ];
    expect(runs.map((r) => [r.dryRun.runtime.name, r.dryRun.action, r.dryRun.exists])).toEqual([
      ['local', 'up', false],
      ['local', 'down', false],
      ['kind', 'up', false],
      ['kind', 'down', false],
      ['existing', 'up', false],
      ['existing', 'down', false],
    ]);
    expect(runs[4]!.text).toContain('server=https://127.0.0.1:1');
    expect(runs[4]!.text).not.toContain('not-a-token');
    expect(await tree()).toEqual(before);
    expect(await labNamespaces()).toEqual([]);
  });

  it('refuses a context the kubeconfig does not have, as up would (exit 2)', async () => {
    const config = { ...defaultLabConfig(), name: LAB };
    const input = { kubeconfig, hubContext: 'three=hub', spokeContexts: ['two=cluster1'] };
    await expect(planLab('existing', existingLabConfig(config, clusterSpecs(input)), { action: 'up' }, { options: input })).rejects.toMatchObject({
      exitCode: 2,
    });
  });
});
