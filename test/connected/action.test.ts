import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBinaries } from '../../src/provision/index.js';
import { actionRepository, actionUses, unreachableActions, withoutGithubActions } from '../support/act.js';
import { startConnectedWorld, type ConnectedWorld } from '../support/connected-world/index.js';
import { npmRegistryRoutes } from '../support/connected-world/npm.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DEFAULT_LAB = path.join(ROOT, 'examples', 'default-lab.yaml');
/** Unique on the machine: the local runtime's network namespaces and processes carry it. */
const LAB_NAME = 'act-local';

/** A document of the user's own, as an addon repository keeps them: one command, its expected row. */
const USER_DOCUMENT = `---
title: my addon's smoke test
summary: The managed clusters the action's lab registered, read from the hub.
requires:
  clusters: [hub, cluster1, cluster2]
  capabilities: [ocm]
---

# My addon's smoke test

\`\`\`sh
kubectl --context hub get managedcluster cluster1 -o jsonpath='{.metadata.name}{"\\n"}'
\`\`\`

\`\`\`expect contains
cluster1
\`\`\`
`;

/** The workflow of an addon repository using the action from this checkout (\`uses: ./\`), its lab on the local runtime. */
function workflow(withInputs: Record<string, string>): string {
  const inputs = Object.entries(withInputs).map(([k, v]) => `          ${k}: ${JSON.stringify(v)}`);
  return [
    'name: lab',
    'on: push',
    'jobs:',
    '  lab:',
    '    runs-on: ubuntu-24.04',
    '    steps:',
    '      - uses: actions/checkout@v6',
    '      - id: lab',
    '        uses: ./',
    '        with:',
    ...inputs,
    '      - name: The lab answers on the exported KUBECONFIG',
    '        run: kubectl --context hub get managedclusters -o name',
    '      - name: Keep the results for the test',
    '        if: always()',
    '        env:',
    '          RESULTS: ${{ steps.lab.outputs.results }}',
    '          KUBECONFIG_OUT: ${{ steps.lab.outputs.kubeconfig }}',
    '        run: |',
    '          echo "kubeconfig output: $KUBECONFIG_OUT"',
    '          if [ -n "$RESULTS" ]; then cp -r "$RESULTS/." "$KEEP_RESULTS/"; fi',
    '      - if: always()',
    '        uses: ./down',
    '        with:',
    '          upload: "false"',
    '',
  ].join('\n');
}

// Issue 27: the action run by a real workflow runner (act, self-hosted: jobs on this host) inside the simulated connected world.
describe('the ocm-lab action, run by act in a simulated connected world', () => {
  let world: ConnectedWorld;
  let act: string;
  let scratch: string;

  beforeAll(async () => {
    ({ act } = await ensureBinaries(['act'], { onProgress: (line) => process.stderr.write(`provision: ${line}\n`) }));
    scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-action-'));
    // The world answers as registry.npmjs.org too: the workflows' npm ci gets the lock file's packages from npm's cache here.
    const npmCache = path.join((await execa('npm', ['config', 'get', 'cache'])).stdout.trim(), '_cacache');
    world = await startConnectedWorld({ routes: (routes) => npmRegistryRoutes(routes, path.join(ROOT, 'package-lock.json'), npmCache).then(() => undefined) });
  }, 900_000);
  afterAll(async () => {
    await world?.close();
    if (scratch) await fs.rm(scratch, { recursive: true, force: true });
  });

  /**
   * act runs `file` on `repo.dir` (this checkout unless said), copied into the job's workspace by
   * actions/checkout; an action from this checkout installs its own build (node_modules and dist come along).
   */
  async function runWorkflow(
    name: string,
    text: string,
    dirs: { cache: string; home: string; results: string },
    repo: { dir: string; args?: string[]; env?: NodeJS.ProcessEnv } = { dir: ROOT },
  ) {
    const file = path.join(scratch, `${name}.yml`);
    await fs.writeFile(file, text);
    const env = await world.env({
      OCM_LAB_CACHE_DIR: dirs.cache,
      OCM_LAB_HOME: dirs.home,
      KEEP_RESULTS: dirs.results,
      // Where act keeps a job's workspace and its copies of actions: the test's own, removed with it.
      XDG_CACHE_HOME: path.join(scratch, name, 'xdg-cache'),
      ...repo.env,
    });
    const args = [
      'push',
      '-W',
      file,
      '-C',
      repo.dir,
      '-P',
      'ubuntu-24.04=-self-hosted',
      '--use-gitignore=false',
      '--no-cache-server',
      ...(await unreachableActions(path.join(scratch, 'unreachable-action'))),
      ...(repo.args ?? []),
    ];
    const started = Date.now();
    const r = await world.run(act, args, { env, timeout: 1_500_000 });
    return { ...r, seconds: (Date.now() - started) / 1000 };
  }
  async function freshDirs(name: string) {
    const dirs = { cache: path.join(scratch, name, 'cache'), home: path.join(scratch, name, 'home'), results: path.join(scratch, name, 'results') };
    for (const d of Object.values(dirs)) await fs.mkdir(d, { recursive: true });
    return dirs;
  }

  it("an unknown kubernetes-version fails the up step with the CLI's message and exit code, and the job", async () => {
    const dirs = await freshDirs('bad-version');
    const r = await runWorkflow(
      'bad-version',
      workflow({ runtime: 'local', 'kubernetes-version': 'v0.1', cache: 'false', upload: 'false', 'node-version': '' }),
      dirs,
    );
    expect(r.exitCode, r.all).not.toBe(0);
    expect(r.all).toMatch(/--kubernetes-version v0\.1: not a Kubernetes version ocm-lab can run/);
    expect(r.all).toMatch(/Failure - Main ocm-lab up/);
    expect(r.all).toMatch(/exit status 2/);
  });

  it('an unknown runtime and an image that is not there are named, before any lab is made', async () => {
    const dirs = await freshDirs('bad-inputs');
    const badRuntime = await runWorkflow('bad-runtime', workflow({ runtime: 'vm', cache: 'false', upload: 'false', 'node-version': '' }), dirs);
    expect(badRuntime.exitCode).not.toBe(0);
    expect(badRuntime.all).toMatch(/runtime.*vm/i);
    const badImage = await runWorkflow(
      'bad-image',
      workflow({ runtime: 'kind', images: 'ocm-lab-no-such-image:dev', cache: 'false', upload: 'false', 'node-version': '' }),
      dirs,
    );
    expect(badImage.exitCode).not.toBe(0);
    expect(badImage.all).toMatch(/images: ocm-lab-no-such-image:dev is not an image/);
    expect(await fs.readdir(dirs.home)).toEqual([]);
  });

  it("from an empty cache with no Go: the action brings the lab up on official artifacts, runs the user's document and ocm-lab's own, writes JUnit and summaries; down leaves nothing; a second run is warm", async () => {
    const dirs = await freshDirs('lab');
    const labFile = path.join(scratch, 'lab.yaml');
    const documents = path.join(scratch, 'documents');
    await fs.writeFile(labFile, (await fs.readFile(DEFAULT_LAB, 'utf8')).replace(/^name: default$/m, `name: ${LAB_NAME}`));
    await fs.mkdir(documents);
    await fs.writeFile(path.join(documents, 'smoke.md'), USER_DOCUMENT);
    const inputs = {
      runtime: 'local',
      'lab-file': labFile,
      documents,
      conformance: 'true',
      artifacts: 'official',
      cache: 'false',
      upload: 'false',
      'node-version': '',
    };
    const cold = await runWorkflow('cold', workflow(inputs), dirs);
    expect(cold.exitCode, cold.all.slice(-6000)).toBe(0);
    expect(cold.all).toMatch(/artifacts: official/);
    expect(cold.all).toMatch(/Success - Main The lab answers on the exported KUBECONFIG/);
    expect(cold.all).toContain('managedcluster.cluster.open-cluster-management.io/cluster1');
    const userJunit = await fs.readFile(path.join(dirs.results, 'documents', 'junit.xml'), 'utf8');
    expect(userJunit).toMatch(/<testsuite name="smoke" tests="[1-9]\d*" failures="0"/);
    const ours = await fs.readFile(path.join(dirs.results, 'conformance', 'junit.xml'), 'utf8');
    expect(ours).toMatch(/<testsuite /);
    expect(ours).not.toMatch(/failures="[1-9]/);
    expect(await fs.readFile(path.join(dirs.results, 'conformance', 'summary.md'), 'utf8')).toMatch(/\|/);
    // down ran under if: always(): no lab left in the lab home.
    expect(cold.all).toMatch(/Success - Main ocm-lab down/);
    expect(await fs.readdir(path.join(dirs.home))).not.toContain(LAB_NAME);

    await fs.rm(dirs.results, { recursive: true });
    await fs.mkdir(dirs.results);
    const warm = await runWorkflow('warm', workflow({ ...inputs, conformance: 'false' }), dirs);
    expect(warm.exitCode, warm.all.slice(-6000)).toBe(0);
    console.log(
      `the action by act, local runtime, connected: cold ${cold.seconds.toFixed(1)} s (with conformance), warm ${warm.seconds.toFixed(1)} s (user document only)`,
    );
  });

  it('ocm-lab addon new demo: its own workflow, run by act, brings the lab up through the action, loads the addon, passes its unit test and its scenario; then warm', async () => {
    const dirs = await freshDirs('scaffold');
    const project = path.join(scratch, 'demo');
    const made = await execa(process.execPath, [path.join(ROOT, 'dist', 'cli', 'main.js'), 'addon', 'new', 'demo', project], { reject: false, all: true });
    expect(made.exitCode, made.all).toBe(0);
    // The generated workflow as it is, but for the three github.com actions act cannot fetch here (see unreachableActions).
    const generated = await fs.readFile(path.join(project, '.github', 'workflows', 'ci.yml'), 'utf8');
    const workflowText = withoutGithubActions(generated);
    const uses = actionUses(generated);
    const labFile = path.join(scratch, 'scaffold-lab.yaml');
    await fs.writeFile(labFile, (await fs.readFile(DEFAULT_LAB, 'utf8')).replace(/^name: default$/m, `name: ${LAB_NAME}`));
    const repo = {
      dir: project,
      args: [
        '--local-repository',
        `${uses.repository}@${uses.ref}=${await actionRepository(ROOT, path.join(scratch, 'ocm-lab-action'))}`,
        '--var',
        'OCM_LAB_RUNTIME=local',
      ],
      env: { OCM_LAB_CONFIG: labFile },
    };
    const cold = await runWorkflow('scaffold-cold', workflowText, dirs, repo);
    expect(cold.exitCode, cold.all.slice(-8000)).toBe(0);
    expect(cold.all).toMatch(/Success - Main Load the addon/);
    expect(cold.all).toMatch(/Success - Main Unit test/);
    expect(cold.all).toMatch(/demo[^\n]*passed/);
    expect(cold.all).toMatch(/Success - Main ocm-lab down/);
    const warm = await runWorkflow('scaffold-warm', workflowText, dirs, repo);
    expect(warm.exitCode, warm.all.slice(-8000)).toBe(0);
    console.log(`ocm-lab addon new's workflow by act, local runtime, connected: cold ${cold.seconds.toFixed(1)} s, warm ${warm.seconds.toFixed(1)} s`);
  });

  it("this repository's conformance workflow, its local cell (v1.37, our addons) on the connected path: every document passes", async () => {
    const dirs = await freshDirs('matrix-local');
    // The cell's first step lets sudo keep PATH with a drop-in in /etc/sudoers.d; the test removes it after.
    const dropIn = '/etc/sudoers.d/ocm-lab-ci';
    const hadDropIn = await fs.stat(dropIn).then(
      () => true,
      () => false,
    );
    const workflowFile = path.join(ROOT, '.github', 'workflows', 'conformance.yml');
    try {
      const cell = await runWorkflow('matrix-local', await fs.readFile(workflowFile, 'utf8'), dirs, {
        dir: ROOT,
        args: ['-j', 'conformance', '--matrix', 'runtime:local', '--matrix', 'kubernetes:v1.37', '--matrix', 'addons:ocm-lab'],
      });
      expect(cell.exitCode, cell.all.slice(-8000)).toBe(0);
      expect(cell.all).toMatch(/artifacts: official/);
      expect(cell.all).toMatch(/Success - Main ocm-lab conformance/);
      expect(cell.all).toMatch(/\*\*\d+ passed, 0 failed/);
      expect(cell.all).toMatch(/Success - Main ocm-lab down/);
      console.log(`conformance.yml by act, cell local × v1.37 × ocm-lab, connected path: ${cell.seconds.toFixed(1)} s`);
    } finally {
      if (!hadDropIn) await fs.rm(dropIn, { force: true });
    }
  });
});
