import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { addonNameProblem, CODE_HASH_ANNOTATION, codeHash, DEV_ADDON_LABEL, validateAddonName } from '../../src/addons/dev/names.js';
import { projectFiles, writeProject } from '../../src/addons/dev/scaffold.js';
import { agentWorkload } from '../../src/addons/dev/agent-workload.js';
import { devHubObjects } from '../../src/addons/dev/hub-objects.js';
import { newAgentRunning } from '../../src/addons/dev/load.js';
import { InvalidInputError } from '../../src/errors.js';
import type { KubeObject } from '../../src/kube/objects.js';

type Deployment = KubeObject & {
  spec: {
    strategy: { type: string };
    template: {
      metadata: { annotations: Record<string, string> };
      spec: {
        containers: { args: string[]; env?: { name: string; value: string }[] }[];
        volumes: { name: string; configMap?: { name: string }; secret?: { secretName: string } }[];
      };
    };
  };
};

describe('addon names', () => {
  it('accepts DNS-1123 labels', () => {
    for (const ok of ['demo', 'a', 'my-addon-2', 'x1']) expect(addonNameProblem(ok)).toBeNull();
  });
  it('refuses anything else, naming the rule', () => {
    for (const bad of ['Demo', '-demo', 'demo-', 'de_mo', 'de.mo', '', 'a'.repeat(31)]) expect(addonNameProblem(bad)).toMatch(/DNS-1123|at most 30/);
    expect(() => validateAddonName('Demo')).toThrow(InvalidInputError);
  });
});

describe('the project scaffold', () => {
  const dirs: string[] = [];
  afterEach(async () => {
    for (const d of dirs.splice(0)) await fs.rm(d, { recursive: true, force: true });
  });

  it('has a manager, an agent, a unit test and a scenario, named after the addon', async () => {
    const files = await projectFiles('demo');
    expect(files.map((f) => f.path).sort()).toEqual([
      '.github/workflows/ci.yml',
      'README.md',
      'package.json',
      'scenarios/demo.md',
      'src/agent.ts',
      'src/manager.ts',
      'src/report.ts',
      'test/demo.test.ts',
      'tsconfig.json',
    ]);
    for (const f of files) expect(f.content).not.toMatch(/__[A-Z_]+__/);
    const workflow = files.find((f) => f.path === '.github/workflows/ci.yml')?.content;
    expect(workflow).toMatch(/uses: ocm-lab\/ocm-lab@v\d+\.\d+\.\d+\n/);
    expect(workflow).toMatch(/uses: ocm-lab\/ocm-lab\/down@v\d+\.\d+\.\d+\n/);
    expect(files.find((f) => f.path === 'src/manager.ts')?.content).toContain("from 'ocm-lab/addon-framework'");
  });

  it('writes into a missing or empty folder and links the framework', async () => {
    const parent = await fs.mkdtemp(path.join(os.tmpdir(), 'sc-scaffold-'));
    dirs.push(parent);
    await fs.mkdir(path.join(parent, 'empty'));
    const w = await writeProject('demo', path.join(parent, 'empty'));
    expect(w.files).toContain('src/agent.ts');
    expect((await fs.lstat(path.join(parent, 'empty', 'node_modules', 'ocm-lab'))).isSymbolicLink()).toBe(true);
    await writeProject('other', path.join(parent, 'new', 'deeper'));
    expect(await fs.readFile(path.join(parent, 'new', 'deeper', 'scenarios', 'other.md'), 'utf8')).toContain('other-report');
    // nothing but the two projects: no staging folder left behind
    expect((await fs.readdir(parent)).sort()).toEqual(['empty', 'new']);
  });

  it('refuses a folder that is not empty, naming it, and writes nothing', async () => {
    const parent = await fs.mkdtemp(path.join(os.tmpdir(), 'sc-scaffold-'));
    dirs.push(parent);
    const full = path.join(parent, 'full');
    await fs.mkdir(full);
    await fs.writeFile(path.join(full, 'keep.txt'), 'mine');
    await expect(writeProject('demo', full)).rejects.toThrow(new RegExp(`${full} exists and is not empty`));
    expect(await fs.readdir(full)).toEqual(['keep.txt']);
    expect(await fs.readdir(parent)).toEqual(['full']);
  });
});

describe('dev addon manifests', () => {
  const bundles = {
    manager: { code: 'export default {}', hash: codeHash('export default {}') },
    agent: { code: 'console.log(1)', hash: codeHash('console.log(1)') },
  };

  it('roll the agent on a new bundle: code ConfigMap named after the hash, hash annotation on the pod template', () => {
    const objs = agentWorkload({ addon: 'demo', cluster: 'cluster1', installNamespace: 'demo-agent', hubAccess: true, bundle: bundles.agent });
    const cm = objs.find((o) => o.kind === 'ConfigMap') as KubeObject & { data: Record<string, string> };
    const dep = objs.find((o) => o.kind === 'Deployment') as Deployment;
    expect(cm.metadata.name).toBe(`demo-agent-${bundles.agent.hash.slice(0, 10)}`);
    expect(cm.data['agent.mjs']).toBe('console.log(1)');
    expect(dep.spec.template.metadata.annotations[CODE_HASH_ANNOTATION]).toBe(bundles.agent.hash);
    expect(dep.spec.strategy.type).toBe('Recreate');
    expect(dep.spec.template.spec.volumes).toEqual([
      { name: 'code', configMap: { name: cm.metadata.name } },
      { name: 'hub-kubeconfig', secret: { secretName: 'demo-hub-kubeconfig' } },
    ]);
    const c = dep.spec.template.spec.containers[0]!;
    expect(c.args).toEqual(['internal', 'run-addon', '--agent=/addon/agent.mjs']);
    expect(c.env).toContainEqual({ name: 'OCM_LAB_CLUSTER_NAME', value: 'cluster1' });
    expect(c.env).toContainEqual({ name: 'OCM_LAB_HUB_KUBECONFIG', value: '/etc/hub/kubeconfig' });
    const other = agentWorkload({
      addon: 'demo',
      cluster: 'cluster1',
      installNamespace: 'demo-agent',
      hubAccess: false,
      bundle: { code: 'x', hash: codeHash('x') },
    });
    expect((other.find((o) => o.kind === 'Deployment') as Deployment).spec.template.metadata.annotations[CODE_HASH_ANNOTATION]).not.toBe(bundles.agent.hash);
  });

  it('put the manager on the hub with its bundle hash on the pod template and the agent code beside it', () => {
    const objs = devHubObjects('demo', bundles);
    const dep = objs.find((o) => o.kind === 'Deployment') as Deployment;
    expect(dep.metadata.namespace).toBe('open-cluster-management-addon');
    expect(dep.spec.template.metadata.annotations[CODE_HASH_ANNOTATION]).toBe(bundles.manager.hash);
    expect(dep.spec.template.spec.containers[0]!.args).toEqual([
      'internal',
      'run-addon',
      '--module=/addon/manager.mjs',
      '--agent-code=open-cluster-management-addon/demo-addon-agent-code',
    ]);
    expect(dep.spec.template.spec.volumes[0]!.configMap?.name).toBe(`demo-addon-manager-${bundles.manager.hash.slice(0, 10)}`);
    // an agent-only change leaves the manager Deployment as it was
    const next = devHubObjects('demo', { ...bundles, agent: { code: 'y', hash: codeHash('y') } });
    expect(next.find((o) => o.kind === 'Deployment')).toEqual(dep);
    for (const o of objs.filter((o) => o.kind !== 'Namespace')) expect(o.metadata.labels?.[DEV_ADDON_LABEL]).toBe('demo');
  });

  it('count an agent as running only when a Ready pod carries the new hash', () => {
    const pod = (hash: string, ready: boolean, deleting = false) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', annotations: { [CODE_HASH_ANNOTATION]: hash }, ...(deleting ? { deletionTimestamp: 'now' } : {}) },
      status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
    });
    expect(newAgentRunning([pod('old', true)], 'new')).toBe(false);
    expect(newAgentRunning([pod('old', true), pod('new', false)], 'new')).toBe(false);
    expect(newAgentRunning([pod('new', true, true)], 'new')).toBe(false);
    expect(newAgentRunning([pod('old', true), pod('new', true)], 'new')).toBe(true);
  });
});
