import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isolatedLabHome, kubectlPath } from '../support/lab.js';
import { checkStateAfter, makeStateBefore } from '../support/lab-survival.js';
import { waitUntil } from '../support/wait.js';

/**
 * Issue 32, item 3 for the kind runtime: the Docker engine restarts under a running lab (as after a
 * reboot or a Docker Desktop restart). dockerd stops every container and starts them again by their
 * restart policies (kind's nodes: on-failure:1; the registry and the hub endpoint: unless-stopped),
 * and a node may come back with another address on its VPC network. Then `up` must repair what
 * changed without recreating anything: the same node containers, the same ManagedClusters (no new
 * CSR), the ManifestWork from before applied, the ManagedServiceAccount's token from before valid,
 * the addons Available, kubeconfigs and hub endpoint right, the registry on the lab's networks. The
 * engine is the test's own (its restart must not touch anyone else's); everything is removed at the
 * end, on failure too. Prints the figures of docs/reliability.md.
 */
const LAB = 'dockerrestart';
const SCRIPT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../scripts/docker-engine.sh');
const ENGINE_ENV = {
  OCM_LAB_DOCKER_RUN_DIR: '/run/ocmlab-restart',
  OCM_LAB_DOCKER_DATA_ROOT: '/var/lib/ocmlab-restart',
  OCM_LAB_DOCKER_BRIDGE: 'ocmlabdr0',
  OCM_LAB_DOCKER_BIP: '10.233.0.1/24',
  OCM_LAB_DOCKER_POOL: '10.232.0.0/16',
};
const SYSCTLS = { 'fs.inotify.max_user_watches': 524288, 'fs.inotify.max_user_instances': 512 };
const CLUSTERS = ['hub', 'cluster1', 'cluster2'] as const;
const REGISTRY = 'ocm-lab-registry';

interface Container {
  Id: string;
  Created: string;
  State: { Running: boolean; StartedAt: string };
  HostConfig: { RestartPolicy: { Name: string } };
  NetworkSettings: { Networks: Record<string, { IPAddress: string }> };
}

describe('a kind lab across a Docker engine restart: up repairs what changed, recreates nothing', () => {
  const env = { ...process.env, ...ENGINE_ENV, DOCKER_HOST: `unix://${ENGINE_ENV.OCM_LAB_DOCKER_RUN_DIR}/docker.sock` };
  let home: Awaited<ReturnType<typeof isolatedLabHome>>;
  let labFile = '';
  let engineStarted = false;
  const sysctlsBefore = new Map<string, string>();
  const kubeconfig = () => path.join(home.home, LAB, 'kubeconfig');

  const engine = async (action: 'start' | 'restart' | 'stop', ...args: string[]) =>
    execa('bash', [SCRIPT, action, ...args], { env, timeout: 300_000, all: true });
  const ocmLab = async (args: string[], timeout = 1_800_000) => {
    const r = await execa(process.execPath, [path.resolve('dist/cli/main.js'), ...args, '--config', labFile], {
      reject: false,
      env: { ...env, CI: 'true', OCM_LAB_HOME: home.home },
      timeout,
    });
    return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), all: `${String(r.stdout)}\n${String(r.stderr)}` };
  };
  const docker = async (args: string[]) => {
    const r = await execa('docker', args, { reject: false, env, timeout: 120_000 });
    return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout).trim(), stderr: String(r.stderr) };
  };
  const inspect = async (name: string) => (JSON.parse((await docker(['inspect', name])).stdout || '[]') as Container[])[0];
  const k = async (context: string, args: string[], input?: string) => {
    const r = await execa(await kubectlPath(), ['--kubeconfig', kubeconfig(), '--context', context, ...args], { reject: false, timeout: 60_000, input });
    if (r.exitCode !== 0) throw new Error(`kubectl --context ${context} ${args.join(' ')}: ${String(r.stderr)}`);
    return String(r.stdout);
  };
  /** Each cluster's kind node container as Docker shows it now. */
  const nodeContainers = async (): Promise<Record<(typeof CLUSTERS)[number], Container>> => {
    const [hub, cluster1, cluster2] = await Promise.all(CLUSTERS.map(async (c) => (await inspect(`${LAB}-${c}-control-plane`))!));
    return { hub: hub!, cluster1: cluster1!, cluster2: cluster2! };
  };
  const nodeGuarded = async (cluster: string) => {
    const r = await docker(['exec', `${LAB}-${cluster}-control-plane`, 'sh', '-c', 'ip route show type blackhole; iptables -S OUTPUT']);
    return /blackhole 10\.244\.0\.0\/16/.test(r.stdout) && /-d 10\.96\.0\.0\/16 .*-j REJECT/.test(r.stdout);
  };

  beforeAll(async () => {
    for (const [key, want] of Object.entries(SYSCTLS)) {
      const now = (await execa('sysctl', ['-n', key])).stdout.trim();
      sysctlsBefore.set(key, now);
      if (Number(now) < want) await execa('sysctl', ['-qw', `${key}=${want}`]);
    }
    engineStarted = true;
    await engine('start');
    home = await isolatedLabHome(LAB);
    labFile = path.join(home.home, 'lab.yaml');
    const defaultLab = await fs.readFile(path.resolve('examples/default-lab.yaml'), 'utf8');
    await fs.writeFile(labFile, defaultLab.replace(/^name: default$/m, `name: ${LAB}`));
  }, 600_000);

  afterAll(async () => {
    if (engineStarted) {
      if (home) await ocmLab(['down'], 600_000).catch(() => undefined);
      if (home) await ocmLab(['registry', 'rm']).catch(() => undefined);
      // The engine and its data root are the test's: stop removes its containers, networks and host rules, --purge its data.
      await engine('stop', '--purge').catch((err: unknown) => console.error(`stopping the test's Docker engine: ${String(err)}`));
    }
    for (const [key, value] of sysctlsBefore) await execa('sysctl', ['-qw', `${key}=${value}`]).catch(() => undefined);
    await home?.cleanup();
  });

  it('keeps the clusters, the ManagedClusters, the ManifestWork, the MSA token and the addons; up repairs the rest', async () => {
    const up = await ocmLab(['up', '--runtime', 'kind', '--artifacts', 'build']);
    expect(up.exitCode, up.all).toBe(0);

    const before = await makeStateBefore(k, 'restart');
    const nodes = await nodeContainers();
    for (const c of CLUSTERS) expect(nodes[c].HostConfig.RestartPolicy.Name, `${c}'s node restart policy (kind's)`).toBe('on-failure');
    for (const name of [REGISTRY, `ocm-lab-${LAB}-hub-endpoint`]) expect((await inspect(name))!.HostConfig.RestartPolicy.Name, name).toBe('unless-stopped');
    const kubeconfigBefore = await fs.readFile(kubeconfig(), 'utf8');
    const addressOf = (c: Container | undefined, cluster: string) =>
      c?.NetworkSettings.Networks[`ocm-lab-${LAB}-${cluster === 'hub' ? 'vpc-1' : 'vpc-2'}`]?.IPAddress;

    // The restart: dockerd stops every container and starts those its restart policies name.
    const restarted = Date.now();
    const r = await engine('restart');
    console.log(`docker-restart: engine stopped and started in ${((Date.now() - restarted) / 1000).toFixed(1)} s\n${r.all ?? ''}`);
    const after = await nodeContainers();
    for (const c of CLUSTERS) {
      expect(after[c].Id, `${c}: the same node container`).toBe(nodes[c].Id);
      expect(after[c].Created).toBe(nodes[c].Created);
      expect(after[c].State.Running, `${c}'s node started again by Docker`).toBe(true);
      expect(Date.parse(after[c].State.StartedAt)).toBeGreaterThan(Date.parse(nodes[c].State.StartedAt));
      console.log(`docker-restart: ${c} node address ${addressOf(nodes[c], c)} → ${addressOf(after[c], c)}`);
    }
    // The node's egress guards live in its network namespace, which the restart made anew: its boot sets them again, before up.
    for (const c of CLUSTERS) await waitUntil(async () => ((await nodeGuarded(c)) ? true : undefined), `${c}'s node guarded again after its boot`, 60_000);

    const t0 = Date.now();
    const repaired = await ocmLab(['up', '--runtime', 'kind', '--artifacts', 'build', '--output', 'json']);
    const upMs = Date.now() - t0;
    expect(repaired.exitCode, repaired.all).toBe(0);
    const steps = (JSON.parse(repaired.stdout) as { steps?: { title: string; result: string }[] }).steps ?? [];
    console.log(`docker-restart: up took ${(upMs / 1000).toFixed(1)} s\n${steps.map((s) => `  ${s.title}: ${s.result}`).join('\n')}`);

    for (const c of CLUSTERS) {
      const node = (await inspect(`${LAB}-${c}-control-plane`))!;
      expect(node.Id, `${c}: no cluster recreated`).toBe(nodes[c].Id);
      expect(await nodeGuarded(c)).toBe(true);
    }
    const kept = await checkStateAfter(k, before, t0);
    for (const name of ['cluster1', 'cluster2'] as const) {
      const spec = JSON.parse(await k('hub', ['get', 'managedcluster', name, '-o', 'json'])) as { spec: { managedClusterClientConfigs?: { url: string }[] } };
      // The hub's record of the spoke's API server follows the node's address.
      expect(
        spec.spec.managedClusterClientConfigs?.map((x) => x.url),
        `${name}'s API server on the hub`,
      ).toEqual([`https://${addressOf(after[name], name)}:6443`]);
    }
    // Kubeconfigs: the same file (kind's published ports are kept), and each context answers.
    expect(await fs.readFile(kubeconfig(), 'utf8')).toBe(kubeconfigBefore);
    for (const c of CLUSTERS) expect(await k(c, ['get', 'nodes', '--no-headers'])).toMatch(/\sReady\s/);
    // The hub endpoint: running on both VPC networks, and what the spokes' agents use.
    const endpoint = (await inspect(`ocm-lab-${LAB}-hub-endpoint`))!;
    expect(endpoint.State.Running).toBe(true);
    expect(Object.keys(endpoint.NetworkSettings.Networks).sort()).toEqual([`ocm-lab-${LAB}-vpc-1`, `ocm-lab-${LAB}-vpc-2`]);
    const hubKubeconfig = Buffer.from(
      await k('cluster1', ['-n', 'open-cluster-management-agent', 'get', 'secret', 'hub-kubeconfig-secret', '-o', 'jsonpath={.data.kubeconfig}']),
      'base64',
    ).toString('utf8');
    expect(hubKubeconfig).toContain(`server: https://ocm-lab-${LAB}-hub-endpoint:6443`);
    expect((await ocmLab(['probe', 'cluster1', 'hub'])).exitCode, 'a spoke reaches the hub endpoint').toBe(0);
    expect((await ocmLab(['probe', 'hub', 'cluster1'])).exitCode, 'the hub still cannot reach a spoke').toBe(1);
    // The registry: running, on both of the lab's networks.
    const registry = (await inspect(REGISTRY))!;
    expect(registry.State.Running).toBe(true);
    expect(Object.keys(registry.NetworkSettings.Networks)).toEqual(expect.arrayContaining([`ocm-lab-${LAB}-vpc-1`, `ocm-lab-${LAB}-vpc-2`]));
    console.log(
      `docker-restart: up ${(upMs / 1000).toFixed(1)} s; new ManifestWork applied ${(kept.workAppliedMs / 1000).toFixed(1)} s; ` +
        `every check passed (${kept.addons.length} addons Available) ${(kept.readyMs / 1000).toFixed(1)} s after up began`,
    );
  }, 2_400_000);
});
