import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineName } from '../../src/host/engine.js';
import { OCM_LAB_IMAGE } from '../../src/images/catalogue.js';
import { engineNamed } from '../../src/images/engine/index.js';
import { raiseKindSysctls } from './kind-sysctls.js';
import { isolatedLabHome, kubectlPath } from './lab.js';

/** A container engine of the test's own: what its CLI is, the environment its children run with, and how it goes. */
interface TestEngine {
  name: EngineName;
  env: NodeJS.ProcessEnv;
  stop(): Promise<void>;
}

export interface KindLabCase {
  /** Starts the engine the lab runs on (and, through `stop`, removes all of it). */
  start(): Promise<TestEngine>;
  /** How `up`'s first lines name the engine and say why it was chosen (`engine: podman 4.3.1 (Podman answers; …)`). */
  engineLine: RegExp;
  /** `up`'s arguments besides `--config` (default `--runtime kind`; none to have auto choose). */
  upArgs?: string[];
  /** Cases of this engine's own between the images' setup and the first `up`, given the file's `ocm-lab` and engine CLI runners. */
  beforeUp?: (run: { ocmLab: (args: string[]) => Promise<RunResult>; engineCli: (args: string[]) => Promise<RunResult> }) => void;
  /** Cases of this engine's own, after the shared ones; `stopEngine` stops it for good (afterAll then leaves it alone). */
  more?: (stopEngine: () => Promise<void>) => void;
}

/** What a command run by the cases did. */
interface RunResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  all: string;
}

const LAB = 'kindlab';
const LIB_MODULES = '/lib/modules';
const REGISTRY = 'ocm-lab-registry';
const REGISTRY_VOLUME = 'ocm-lab-registry-data';

/** A step's wall time, printed in one shape per engine so one run's figures sit side by side in its log. */
function figure(engine: EngineName, step: string, startedAt: number): void {
  console.log(`kind-lab figure [${engine}] ${step}: ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
}

/**
 * The whole kind path on this machine, on one engine: the engine started by the test, the offline images prepared,
 * the default lab up on kind with its nodes pulling from the image registry (no kind load), an image pushed there run
 * on both spokes, KEP-1755's ConfigMap, the VPC rule checked both ways (also from a hub pod with the registry on both
 * networks), every document of the conformance suite, and a `down` that leaves no container, network or image of the
 * lab and keeps the registry until `registry rm`. test/kind/kind-lab.test.ts runs it on Docker, podman-lab.test.ts on
 * Podman, in `npm run test:kind` (scripts/test-kind.sh), outside CI's default cell.
 */
export function describeDefaultKindLab(name: EngineName, spec: KindLabCase): void {
  const cli = engineNamed(name).cli;
  describe(`the default lab on kind, on ${name}`, () => {
    let engine: TestEngine;
    let home: Awaited<ReturnType<typeof isolatedLabHome>>;
    let labFile: string;
    let restoreSysctls: (() => Promise<void>) | undefined;
    let engineStopped = false;
    const stopEngine = async () => {
      engineStopped = true;
      await engine.stop();
    };

    const ocmLab = async (args: string[], timeout = 1_800_000): Promise<RunResult> => {
      const r = await execa(process.execPath, [path.resolve('dist/cli/main.js'), ...args, '--config', labFile], {
        reject: false,
        // The built path: offline images, and no probe of a publisher's name (no packet leaves the machine).
        env: { ...engine.env, CI: 'true', OCM_LAB_HOME: home.home, OCM_LAB_NO_DOWNLOAD: '1' },
        timeout,
      });
      return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr), all: `${String(r.stdout)}\n${String(r.stderr)}` };
    };
    const engineCli = async (args: string[]): Promise<RunResult> => {
      const r = await execa(cli, args, { reject: false, env: engine.env, timeout: 120_000 });
      return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout).trim(), stderr: String(r.stderr), all: `${String(r.stdout)}\n${String(r.stderr)}` };
    };
    const kubectl = async (args: string[]) => {
      const r = await execa(await kubectlPath(), ['--kubeconfig', path.join(home.home, LAB, 'kubeconfig'), ...args], { reject: false, timeout: 60_000 });
      return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
    };
    /** The lab's engine objects, by the label every one of them carries, and its kind clusters. */
    const leftovers = async () => ({
      containers: (await engineCli(['ps', '-a', '--filter', `label=dev.ocm-lab.lab=${LAB}`, '--format', '{{.Names}}'])).stdout.split('\n').filter(Boolean),
      kindNodes: (await engineCli(['ps', '-a', '--filter', `label=io.x-k8s.kind.cluster`, '--format', '{{.Names}}'])).stdout.split('\n').filter(Boolean),
      networks: (await engineCli(['network', 'ls', '--filter', `label=dev.ocm-lab.lab=${LAB}`, '--format', '{{.Name}}'])).stdout.split('\n').filter(Boolean),
      volumes: (await engineCli(['volume', 'ls', '-q'])).stdout.split('\n').filter((v) => v && v !== REGISTRY_VOLUME),
    });
    /** `ocm-lab registry -o json`: where to push. */
    const registry = async () => JSON.parse((await ocmLab(['registry', '--output', 'json'])).stdout) as { host: string; port: number; networks: string[] };
    /** Runs a pod of `image` in `context` until it ends; its phase and log. */
    const runPod = async (context: string, podName: string, image: string, script: string) => {
      const ns = ['--context', context, '-n', 'default'];
      const created = await kubectl([...ns, 'run', podName, `--image=${image}`, '--restart=Never', '--command', '--', 'bash', '-c', script]);
      expect(created.exitCode, created.stderr).toBe(0);
      await kubectl([...ns, 'wait', `pod/${podName}`, '--for=jsonpath={.status.phase}=Succeeded', '--timeout=180s']);
      const phase = (await kubectl([...ns, 'get', 'pod', podName, '-o', 'jsonpath={.status.phase}'])).stdout;
      const log = (await kubectl([...ns, 'logs', podName])).stdout;
      const events = phase === 'Succeeded' ? '' : (await kubectl([...ns, 'describe', 'pod', podName])).stdout;
      await kubectl([...ns, 'delete', 'pod', podName, '--wait=false']);
      return { phase, log, events };
    };

    // kind bind-mounts the host's /lib/modules into every node: where the machine has none, dockerd makes it as the
    // mount's source (Podman refuses; podman-lab.test.ts). Put back as found.
    let hadLibModules = true;

    beforeAll(async () => {
      hadLibModules = existsSync(LIB_MODULES);
      // kind needs more inotify instances and watches than Debian's defaults; raised for the test and put back.
      restoreSysctls = await raiseKindSysctls();
      engine = await spec.start();
      home = await isolatedLabHome(`kind-${name}`);
      labFile = path.join(home.home, 'lab.yaml');
      await fs.writeFile(
        labFile,
        [
          'apiVersion: ocm-lab/v1alpha1',
          'kind: Lab',
          `name: ${LAB}`,
          'vpcs: [{name: vpc-1}, {name: vpc-2}]',
          'clusters:',
          '  - {name: hub, vpc: vpc-1, hub: true}',
          '  - {name: cluster1, vpc: vpc-2}',
          '  - {name: cluster2, vpc: vpc-2}',
          '',
        ].join('\n'),
      );
    });

    afterAll(async () => {
      if (engine && !engineStopped) {
        await ocmLab(['down'], 600_000).catch(() => undefined);
        await ocmLab(['registry', 'rm']).catch(() => undefined);
        await stopEngine().catch((err: unknown) => console.error(`stopping the test's ${name} engine: ${String(err)}`));
      }
      await restoreSysctls?.();
      await home?.cleanup();
      // rmdir: only an empty one, as it was made.
      if (!hadLibModules) await fs.rmdir(LIB_MODULES).catch(() => undefined);
    });

    // From an empty cache on 2 shared cores this is every Go build and debootstrap: 65 min was seen on a loaded machine.
    const SETUP_BUDGET_MS = 5_400_000;
    it('prepares every image offline (ocm-lab setup --runtime kind)', { timeout: SETUP_BUDGET_MS + 60_000 }, async () => {
      const started = Date.now();
      const r = await ocmLab(['setup', '--runtime', 'kind'], SETUP_BUDGET_MS);
      expect(r.exitCode, r.all).toBe(0);
      figure(name, 'setup --runtime kind', started);
      const images = (await engineCli(['image', 'ls', '--format', '{{.Repository}}:{{.Tag}}'])).stdout.split('\n');
      expect(images).toContain(engineNamed(name).storedImageRef(OCM_LAB_IMAGE));
      expect(images.some((i) => i.startsWith('quay.io/open-cluster-management/registration-operator:'))).toBe(true);
    });

    spec.beforeUp?.({ ocmLab: (args) => ocmLab(args), engineCli });

    it('brings the lab up: one network per VPC, one kind cluster per lab cluster, contexts named after the clusters', async () => {
      const started = Date.now();
      const r = await ocmLab(['up', ...(spec.upArgs ?? ['--runtime', 'kind'])]);
      expect(r.exitCode, r.all).toBe(0);
      figure(name, 'up', started);
      expect(r.all).toMatch(spec.engineLine);
      const networks = (await engineCli(['network', 'ls', '--filter', `label=dev.ocm-lab.lab=${LAB}`, '--format', '{{.Name}}'])).stdout.split('\n').sort();
      expect(networks).toEqual([`ocm-lab-${LAB}-vpc-1`, `ocm-lab-${LAB}-vpc-2`]);
      for (const context of ['hub', 'cluster1', 'cluster2']) {
        const nodes = await kubectl(['--context', context, 'get', 'nodes', '--no-headers']);
        expect(nodes.stdout, `${context}: ${nodes.stderr}`).toMatch(/\sReady\s/);
      }
      const status = JSON.parse((await ocmLab(['status', '--output', 'json'])).stdout) as {
        runtime: string;
        isolation: { enforced: boolean; reason: string };
        capabilities: string[];
      };
      expect(status.runtime).toBe('kind');
      expect(status.isolation.enforced).toBe(true);
      expect(status.isolation.reason).toContain(`${name === 'podman' ? 'Podman' : 'Docker'} network isolation`);
      expect(status.capabilities).toEqual(expect.arrayContaining(['control-plane', 'vpc-isolation', 'pods', 'ocm']));
    });

    it('pulls the lab images from the image registry: no kind load, every node pulled them', async () => {
      const r = await registry();
      expect(r.host).toBe(`localhost:${r.port}`);
      expect(r.networks).toEqual(expect.arrayContaining([`ocm-lab-${LAB}-vpc-1`, `ocm-lab-${LAB}-vpc-2`]));
      const log = await engineCli(['logs', REGISTRY]);
      const access = `${log.stdout}\n${log.stderr}`;
      for (const cluster of ['hub', 'cluster1', 'cluster2']) {
        const node = `${LAB}-${cluster}-control-plane`;
        const images = await engineCli(['exec', node, 'crictl', 'images']);
        console.log(`crictl images on ${node}:\n${images.stdout}`);
        expect(images.stdout).toMatch(/quay\.io\/open-cluster-management\/registration-operator\s+v1\.2\.1/);
        // The registry's access log names the node's address for the manifest it served (a kind load leaves no such line).
        const ip = (await engineCli(['inspect', '-f', '{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}', node])).stdout.trim().split(' ')[0];
        const pulls = access.split('\n').filter((l) => l.startsWith(`${ip} `) && l.includes('/v2/open-cluster-management/registration-operator/manifests/'));
        expect(pulls.length, `${node} (${ip}) pulled from the registry; access log:\n${access.slice(-3000)}`).toBeGreaterThan(0);
        const hosts = await engineCli(['exec', node, 'ls', '/etc/containerd/certs.d']);
        expect(hosts.stdout.split('\n').sort()).toEqual(['docker.io', `localhost:${r.port}`, `${REGISTRY}:5000`, 'quay.io']);
      }
    });

    it('publishes KEP-1755 local-registry-hosting in every cluster', async () => {
      const { port } = await registry();
      for (const context of ['hub', 'cluster1', 'cluster2']) {
        const got = await kubectl([
          '--context',
          context,
          '-n',
          'kube-public',
          'get',
          'configmap',
          'local-registry-hosting',
          '-o',
          'jsonpath={.data.localRegistryHosting\\.v1}',
        ]);
        expect(got.exitCode, got.stderr).toBe(0);
        expect(got.stdout).toContain(`host: "localhost:${port}"`);
        expect(got.stdout).toContain(`hostFromContainerRuntime: "${REGISTRY}:5000"`);
        expect(got.stdout).toContain(`hostFromClusterNetwork: "${REGISTRY}:5000"`);
        expect(got.stdout).toMatch(/^help: "https:\/\/.+"$/m);
      }
    });

    it('runs an image pushed to localhost:<port> as a pod on cluster1 and cluster2; a hub pod still cannot reach a spoke node', async () => {
      const { host } = await registry();
      const image = `${host}/e2e/probe:1`;
      expect((await engineCli(['tag', 'ocm-lab/base:bookworm', image])).exitCode).toBe(0);
      const pushed = await engineCli(engineNamed(name).pushToLabRegistryArgs(image));
      expect(pushed.exitCode, pushed.stderr).toBe(0);
      for (const context of ['cluster1', 'cluster2']) {
        const pod = await runPod(context, 'e2e-pushed', image, 'echo hello from the lab registry');
        expect(pod.phase, pod.events).toBe('Succeeded');
        expect(pod.log).toContain('hello from the lab registry');
      }
      // The registry is on both VPC networks; the hub's pod reaches it (control) and still not cluster1's node.
      const spoke = (
        await engineCli(['inspect', '-f', `{{(index .NetworkSettings.Networks "ocm-lab-${LAB}-vpc-2").IPAddress}}`, `${LAB}-cluster1-control-plane`])
      ).stdout;
      const registryIp = (await engineCli(['inspect', '-f', `{{(index .NetworkSettings.Networks "ocm-lab-${LAB}-vpc-1").IPAddress}}`, REGISTRY])).stdout;
      const probe = (ip: string, port: number) =>
        `if timeout 5 bash -c 'echo > /dev/tcp/${ip}/${port}' 2>/dev/null; then echo ${ip}:${port}=open; else echo ${ip}:${port}=closed; fi`;
      const hubPod = await runPod('hub', 'e2e-vpc-rule', image, `${probe(registryIp, 5000)}; ${probe(spoke, 6443)}; ${probe(spoke, 10250)}`);
      expect(hubPod.phase, hubPod.events).toBe('Succeeded');
      expect(hubPod.log).toContain(`${registryIp}:5000=open`);
      expect(hubPod.log).toContain(`${spoke}:6443=closed`);
      expect(hubPod.log).toContain(`${spoke}:10250=closed`);
    });

    it("`registry push` sends an image of the engine's store, which a pod on cluster1 runs by the image's own name", async () => {
      const image = 'e2e/pushed-by-name:1';
      expect((await engineCli(['tag', 'ocm-lab/base:bookworm', image])).exitCode).toBe(0);
      const pushed = await ocmLab(['registry', 'push', image]);
      expect(pushed.exitCode, pushed.all).toBe(0);
      const pod = await runPod('cluster1', 'e2e-pushed-by-name', image, 'echo run by its own name');
      expect(pod.phase, pod.events).toBe('Succeeded');
      expect(pod.log).toContain('run by its own name');
    });

    it('holds the VPC rule both ways', async () => {
      const probe = async (from: string, target: string) => (await ocmLab(['probe', from, target])).exitCode;
      expect(await probe('cluster1', 'hub')).toBe(0);
      expect(await probe('cluster2', 'cluster1')).toBe(0);
      expect(await probe('hub', 'hub')).toBe(0);
      expect(await probe('hub', 'cluster1')).toBe(1);
      expect(await probe('hub', 'cluster2')).toBe(1);
      // Past the hub's published endpoint a spoke reaches nothing of the hub: not its node's other ports, not its node directly.
      const hubNode = `${LAB}-hub-control-plane`;
      const hubIp = (await engineCli(['inspect', '-f', '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}', hubNode])).stdout;
      expect(hubIp).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
      expect(await probe('cluster1', `${hubIp}:6443`)).toBe(1);
      expect(await probe('cluster1', `${hubIp}:10250`)).toBe(1);
      const endpoint = `ocm-lab-${LAB}-hub-endpoint`;
      expect(await probe('cluster1', `${endpoint}:10250`)).toBe(1);
    });

    it('changes nothing on a second up, and starts a stopped registry', async () => {
      expect((await engineCli(['stop', REGISTRY])).exitCode).toBe(0);
      const started = Date.now();
      const r = await ocmLab(['up', ...(spec.upArgs ?? ['--runtime', 'kind']), '--output', 'json']);
      expect(r.exitCode, r.all).toBe(0);
      figure(name, 'second up', started);
      expect((await engineCli(['inspect', '-f', '{{.State.Running}}', REGISTRY])).stdout).toBe('true');
    });

    it('passes every document the default lab can run, and skips the others only for what it lacks, as on the local runtime', async () => {
      // Every document `scenario list` lists, however many the suite holds today.
      const listed = JSON.parse((await ocmLab(['scenario', 'list', '--output', 'json'])).stdout) as unknown[];
      expect(listed.length).toBeGreaterThan(0);
      const started = Date.now();
      const r = await ocmLab(['conformance', '--output', 'json'], 1_800_000);
      expect(r.exitCode, r.all).toBe(0);
      figure(name, 'conformance', started);
      const report = JSON.parse(r.stdout) as {
        passed: number;
        failed: number;
        skipped: number;
        scenarios: { name: string; status: string; skipReason: string | null }[];
      };
      expect({ failed: report.failed, ran: report.passed + report.skipped }).toEqual({ failed: 0, ran: listed.length });
      // As on the local runtime (test/e2e/conformance.test.ts): a skip only for a capability or addon the lab really lacks.
      for (const skipped of report.scenarios.filter((x) => x.status === 'skipped'))
        expect(skipped.skipReason, skipped.name).toMatch(/^the lab (lacks|does not install) /);
      const status = Object.fromEntries(report.scenarios.map((x) => [x.name, x.status]));
      for (const doc of ['vpc-isolation', 'manifestwork', 'addon-template', 'deployment-only-role', 'proxy-health', 'cluster-gateway', 'gateway-multi-tenant'])
        expect(status[doc], doc).toBe('passed');
    });

    it('goes down leaving no container, network or volume of the lab', async () => {
      const before = await leftovers();
      expect(before.kindNodes.length).toBe(3);
      const started = Date.now();
      const r = await ocmLab(['down'], 600_000);
      expect(r.exitCode, r.all).toBe(0);
      figure(name, 'down', started);
      const after = await leftovers();
      expect(after).toEqual({ containers: [], kindNodes: [], networks: [], volumes: [] });
      const images = (await engineCli(['image', 'ls', '--filter', `label=dev.ocm-lab.lab=${LAB}`, '-q'])).stdout;
      expect(images).toBe('');
    });

    it('keeps the image registry and its volume after down, off the lab networks; registry rm removes both', async () => {
      expect((await engineCli(['inspect', '-f', '{{.State.Running}}', REGISTRY])).stdout).toBe('true');
      expect((await engineCli(['volume', 'inspect', REGISTRY_VOLUME])).exitCode).toBe(0);
      expect((await registry()).networks.filter((n) => n.startsWith(`ocm-lab-${LAB}-`))).toEqual([]);
      const rm = await ocmLab(['registry', 'rm']);
      expect(rm.exitCode, rm.all).toBe(0);
      expect((await engineCli(['inspect', REGISTRY])).exitCode).not.toBe(0);
      expect((await engineCli(['volume', 'inspect', REGISTRY_VOLUME])).exitCode).not.toBe(0);
      // A container of that name some other tool made is not ours to show or remove: exit 3, named, untouched.
      expect((await engineCli(['create', '--name', REGISTRY, 'ocm-lab/base:bookworm'])).exitCode).toBe(0);
      try {
        for (const args of [['registry'], ['registry', 'rm']]) {
          const refused = await ocmLab(args);
          expect(refused.exitCode, refused.all).toBe(3);
          expect(refused.stderr).toContain(REGISTRY);
        }
        expect((await engineCli(['inspect', REGISTRY])).exitCode).toBe(0);
      } finally {
        await engineCli(['rm', '-f', REGISTRY]);
      }
    });

    spec.more?.(stopEngine);
  });
}
