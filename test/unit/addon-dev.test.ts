import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { addonNameProblem, CODE_HASH_ANNOTATION, codeHash, DEV_ADDON_LABEL, imageCodeHash, validateAddonName } from '../../src/addons/dev/names.js';
import { projectFiles, PUBLISHED_OCM_LAB_IMAGE, writeProject } from '../../src/addons/dev/scaffold.js';
import { agentWorkload, setAgentImage } from '../../src/addons/dev/agent-workload.js';
import { PACKAGE_VERSION } from '../../src/version.js';
import { devHubObjects } from '../../src/addons/dev/hub-objects.js';
import { newAgentRunning } from '../../src/addons/dev/load.js';
import { InvalidInputError } from '../../src/errors.js';
import type { KubeObject } from '../../src/kube/objects.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

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
      '.dockerignore',
      '.github/workflows/ci.yml',
      'Dockerfile',
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

  it("builds the addon's image FROM ocm-lab's published image of this version, and its CI pushes it and runs the addon from it on kind", async () => {
    const files = await projectFiles('demo');
    const dockerfile = files.find((f) => f.path === 'Dockerfile')?.content ?? '';
    expect(dockerfile).toContain(`ARG OCM_LAB_IMAGE=${PUBLISHED_OCM_LAB_IMAGE}\nFROM \${OCM_LAB_IMAGE}\n`);
    expect(PUBLISHED_OCM_LAB_IMAGE).toBe(`ghcr.io/ocm-lab/ocm-lab:${PACKAGE_VERSION}`);
    expect(dockerfile).toMatch(/^RUN ocm-lab addon build \/src\/demo --out \/addon /m);
    expect(files.find((f) => f.path === '.dockerignore')?.content.split('\n')).toContain('node_modules');
    const workflow = files.find((f) => f.path === '.github/workflows/ci.yml')?.content ?? '';
    expect(workflow).toContain("ADDON_IMAGE: ${{ vars.OCM_LAB_RUNTIME != 'local' && 'demo:ci' || '' }}");
    expect(workflow).toMatch(/if: env\.ADDON_IMAGE != ''\n\s+run: docker build -t "\$ADDON_IMAGE" \.\n/);
    expect(workflow).toMatch(/images: \$\{\{ env\.ADDON_IMAGE \}\}\n\s+addon: \.\n\s+addon-image: \$\{\{ env\.ADDON_IMAGE \}\}\n/);
    // the image is built before the action's step that pushes it
    expect(workflow.indexOf('docker build')).toBeLessThan(workflow.indexOf('uses: ocm-lab/ocm-lab@'));
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

  it('addon build writes the two bundles the image holds, checked, and replaces its folder whole', async () => {
    const parent = await fs.mkdtemp(path.join(os.tmpdir(), 'sc-scaffold-'));
    dirs.push(parent);
    await writeProject('demo', path.join(parent, 'demo'));
    const out = path.join(parent, 'out');
    await fs.mkdir(out);
    await fs.writeFile(path.join(out, 'stale.mjs'), 'old');
    // The built CLI: the manager bundle is checked by importing it against the package's compiled framework.
    const build = () => execa(process.execPath, [CLI, 'addon', 'build', path.join(parent, 'demo'), '--out', out], { reject: false, all: true });
    const built = await build();
    expect(built.exitCode, built.all).toBe(0);
    expect(built.all).toContain('built the demo addon');
    expect((await fs.readdir(out)).sort()).toEqual(['agent.mjs', 'manager.mjs']);
    expect(await fs.readFile(path.join(out, 'agent.mjs'), 'utf8')).toContain('from "ocm-lab/addon-framework"');
    expect((await fs.readdir(parent)).sort()).toEqual(['demo', 'out']);
    await fs.writeFile(path.join(parent, 'demo', 'src', 'manager.ts'), 'export default {};\n');
    const bad = await build();
    expect(bad.exitCode).toBe(2);
    expect(bad.all).toMatch(/exports no AddonDefinition/);
    expect((await fs.readdir(out)).sort()).toEqual(['agent.mjs', 'manager.mjs']);
    expect((await fs.readdir(parent)).sort()).toEqual(['demo', 'out']);
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

  it("run from the addon's own image: no code ConfigMap, the image's bundles, the image's hash on both pod templates", () => {
    const image = 'demo:ci';
    const hub = devHubObjects('demo', bundles, image);
    expect(hub.filter((o) => o.kind === 'ConfigMap')).toEqual([]);
    const manager = hub.find((o) => o.kind === 'Deployment') as Deployment & { spec: { template: { spec: { containers: { image: string }[] } } } };
    expect(manager.spec.template.spec.containers[0]!.image).toBe(image);
    expect(manager.spec.template.spec.containers[0]!.args).toEqual(['internal', 'run-addon', '--module=/addon/manager.mjs', '--image=demo:ci']);
    expect(manager.spec.template.spec.volumes).toEqual([]);
    expect(manager.spec.template.metadata.annotations[CODE_HASH_ANNOTATION]).toBe(imageCodeHash(image));
    expect(imageCodeHash('demo:ci2')).not.toBe(imageCodeHash(image));

    const bundle = setAgentImage(image);
    const agent = agentWorkload({ addon: 'demo', cluster: 'cluster1', installNamespace: 'demo-agent', hubAccess: true });
    expect(agent.map((o) => o.kind)).toEqual(['Namespace', 'Deployment']);
    const dep = agent[1] as Deployment & { spec: { template: { spec: { containers: { image: string }[] } } } };
    expect(dep.spec.template.spec.containers[0]!.image).toBe(image);
    expect(dep.spec.template.spec.containers[0]!.args).toEqual(['internal', 'run-addon', '--agent=/addon/agent.mjs']);
    expect(dep.spec.template.spec.volumes).toEqual([{ name: 'hub-kubeconfig', secret: { secretName: 'demo-hub-kubeconfig' } }]);
    expect(dep.spec.template.metadata.annotations[CODE_HASH_ANNOTATION]).toBe(bundle.hash);
    expect(bundle.hash).toBe(imageCodeHash(image));
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
