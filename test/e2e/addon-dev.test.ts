import fs from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LabConfig } from '../../src/config/index.js';
import { removeDevAddon } from '../../src/addons/dev/remove.js';
import { addonStates } from '../../src/addons/install.js';
import { hubClientFor } from '../../src/addons/hub-client.js';
import { cli, kubectl } from '../support/lab.js';
import { useSharedLab } from '../support/test-lab.js';
import { waitUntil } from '../support/wait.js';

const CLUSTERS = ['cluster1', 'cluster2'];

/**
 * The addon inner loop on a real lab: `addon new` writes a project whose own test passes, `addon dev
 * --once` makes it Available on every spoke, an edit and a
 * second load put the new agent on every spoke, the project's scenario passes in `conformance`, and
 * `addon disable` takes it all off the lab (all through the CLI).
 */
describe('addon dev: a new addon from scaffold to every spoke', () => {
  let config: LabConfig;
  let kubeconfig: string;
  let env: NodeJS.ProcessEnv;
  let dir: string;
  const k = (context: string, args: string[]) => kubectl(kubeconfig, ['--context', context, ...args]);
  const reportedVersion = async (cluster: string) => {
    const r = await k('hub', ['-n', cluster, 'get', 'configmap', 'demo-report', '-o', 'jsonpath={.data.version}']);
    return r.exitCode === 0 ? r.stdout : '';
  };
  /** `ocm-lab addon dev DIR --once --output json`: what the command prints of the load. */
  const loadOnce = async (): Promise<{ addon: string; changed: string[]; runningMs: Record<string, number>; agentHash: string }> => {
    const run = await cli(['addon', 'dev', dir, '--once', '--output', 'json'], env);
    expect(run.exitCode, `${run.stdout}\n${run.stderr}`).toBe(0);
    return JSON.parse(run.stdout);
  };

  // The shared default lab: the dev addon comes and goes; the lab's own addons are left as they are.
  const lab = useSharedLab('default', 'test/e2e/addon-dev.test.ts');
  beforeAll(async () => {
    ({ config, kubeconfig, env } = lab);
    dir = path.join(await fs.mkdtemp(path.join(lab.home, 'addon-dev-')), 'projects', 'demo');
  });

  afterAll(async () => {
    const hub = await hubClientFor(config).catch(() => undefined);
    if (hub) {
      await removeDevAddon(hub, 'demo', { timeoutMs: 120_000 }).catch(() => undefined);
      hub.close();
    }
    // What the demo agents wrote on the hub (their reports) is the project's own data: `addon disable` leaves it, the shared lab must not keep it.
    for (const c of CLUSTERS) await k('hub', ['-n', c, 'delete', 'configmap', 'demo-report', '--ignore-not-found']);
  });

  it('addon new writes a project whose own unit test passes with plain node, and refuses bad input', async () => {
    const made = await cli(['addon', 'new', 'demo', dir, '--output', 'json'], env);
    expect(made.exitCode, `${made.stdout}\n${made.stderr}`).toBe(0);
    expect(JSON.parse(made.stdout).files).toEqual(expect.arrayContaining(['src/manager.ts', 'src/agent.ts', 'test/demo.test.ts', 'scenarios/demo.md']));
    const test = await execa('npm', ['test'], { cwd: dir, reject: false });
    expect(test.exitCode, `${test.stdout}\n${test.stderr}`).toBe(0);
    // TAP (Node 20, 22) or the spec reporter (Node 23+ by default): two tests passed.
    expect(test.stdout).toMatch(/^(# |ℹ )pass 2$/m);
    const again = await cli(['addon', 'new', 'demo', dir], env);
    expect(again.exitCode).toBe(2);
    expect(again.stderr).toMatch(/exists and is not empty/);
    const badName = await cli(['addon', 'new', 'Demo', path.join(path.dirname(dir), 'x')], env);
    expect(badName.exitCode).toBe(2);
  }, 60_000);

  it('addon dev --once makes it Available on every spoke, its agents report to the hub', async () => {
    const r = await loadOnce();
    expect(r.addon).toBe('demo');
    expect(r.changed).toEqual(['manager', 'agent']);
    expect(Object.keys(r.runningMs).sort()).toEqual(CLUSTERS);
    const hub = await hubClientFor(config);
    try {
      expect((await addonStates(hub, 'demo', CLUSTERS)).map((s) => `${s.cluster}:${s.available}`)).toEqual(CLUSTERS.map((c) => `${c}:true`));
    } finally {
      hub.close();
    }
    for (const c of CLUSTERS) await waitUntil(async () => ((await reportedVersion(c)) === 'v1' ? true : undefined), `${c}'s demo agent reporting v1`, 60_000);
  }, 300_000);

  it('an edit and --once again roll only the agent, and the new behaviour shows on every spoke', async () => {
    const file = path.join(dir, 'src', 'report.ts');
    await fs.writeFile(file, (await fs.readFile(file, 'utf8')).replace("VERSION = 'v1'", "VERSION = 'v2'"));
    const r = await loadOnce();
    // a new session cannot know what the lab runs: it reloads both, but the manager's Deployment is unchanged
    expect(r.changed).toContain('agent');
    for (const c of CLUSTERS) await waitUntil(async () => ((await reportedVersion(c)) === 'v2' ? true : undefined), `${c}'s demo agent reporting v2`, 60_000);
    const pods = await k('cluster1', ['-n', 'demo-agent', 'get', 'pods', '-o', 'jsonpath={.items[*].metadata.annotations.ocm-lab\\.io/addon-code-hash}']);
    expect(
      pods.stdout
        .split(' ')
        .filter(Boolean)
        .every((h) => h === r.agentHash),
      pods.stdout,
    ).toBe(true);
  }, 300_000);

  it("the project's scenario passes in conformance", async () => {
    const run = await cli(['conformance', '--dir', path.join(dir, 'scenarios')], env);
    expect(run.exitCode, `${run.stdout}\n${run.stderr}`).toBe(0);
  }, 300_000);

  it('removal takes the agents off every spoke and the manager off the hub', async () => {
    const run = await cli(['addon', 'disable', 'demo', '--output', 'json'], env);
    expect(run.exitCode, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(JSON.parse(run.stdout).removed.join('\n')).toMatch(/ManagedClusterAddOn cluster1\/demo/);
    for (const c of CLUSTERS) {
      await waitUntil(
        async () => ((await k(c, ['get', 'namespace', 'demo-agent'])).exitCode !== 0 ? true : undefined),
        `namespace demo-agent gone from ${c}`,
        60_000,
      );
    }
    const left = await k('hub', [
      'get',
      'deployments,configmaps,serviceaccounts',
      '-n',
      'open-cluster-management-addon',
      '-l',
      'ocm-lab.io/dev-addon=demo',
      '-o',
      'name',
    ]);
    expect(left.stdout.trim()).toBe('');
    expect((await k('hub', ['get', 'clustermanagementaddon', 'demo'])).exitCode).not.toBe(0);
  }, 300_000);
});
