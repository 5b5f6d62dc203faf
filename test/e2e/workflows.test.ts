import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectFiles } from '../../src/addons/dev/scaffold.js';
import { ensureBinaries } from '../../src/provision/index.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const WORKFLOWS = path.join(ROOT, '.github', 'workflows');

/**
 * actionlint over every workflow. Its shellcheck and pyflakes integrations are
 * off: they run whatever happens to be on PATH, so the same workflow would pass
 * here and fail on a machine that has shellcheck (or the other way round).
 */
async function lint(actionlint: string, files: string[]) {
  const r = await execa(actionlint, ['-no-color', '-shellcheck=', '-pyflakes=', ...files], { cwd: ROOT, reject: false, all: true, timeout: 60_000 });
  return { exitCode: r.exitCode, output: String(r.all ?? '') };
}

describe('GitHub Actions workflows (actionlint, built from the Go module proxy)', () => {
  let actionlint: string;
  let tmp: string;

  beforeAll(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-workflows-'));
    ({ actionlint } = await ensureBinaries(['actionlint'], { onProgress: (line) => process.stderr.write(`provision: ${line}\n`) }));
  });
  afterAll(async () => {
    if (tmp) await fs.rm(tmp, { recursive: true, force: true });
  });

  it('rejects a known-bad workflow, naming each problem (so the check below can fail)', async () => {
    const bad = path.join(tmp, 'bad.yml');
    await fs.writeFile(
      bad,
      [
        'name: bad',
        'on: push',
        'jobs:',
        '  build:',
        '    runs-on: ubuntu-24.04',
        '    needs: no-such-job',
        '    steps:',
        '      - run: echo "${{ matrix.no-such-key }}"',
        '      - uses: actions/checkout',
        '',
      ].join('\n'),
    );
    const r = await lint(actionlint, [bad]);
    expect(r.exitCode, r.output).toBe(1);
    expect(r.output).toMatch(/no-such-job.*\[job-needs\]/);
    expect(r.output).toMatch(/no-such-key.*\[expression\]/);
    expect(r.output).toMatch(/actions\/checkout.*\[action\]/);
  });

  it('finds nothing in any workflow of .github/workflows', async () => {
    const files = (await fs.readdir(WORKFLOWS)).filter((f) => /\.ya?ml$/.test(f)).map((f) => path.join('.github', 'workflows', f));
    expect(files).toContain(path.join('.github', 'workflows', 'conformance.yml'));
    const r = await lint(actionlint, files);
    expect(r.exitCode, `actionlint ${files.join(' ')} found:\n${r.output}`).toBe(0);
    expect(r.output).toBe('');
  });

  it("checks what a workflow gives the action (action.yml's inputs): an unknown input is named", async () => {
    // A project of its own holding this repository's action.yml, as actionlint resolves `uses: ./` from a workflow's project.
    const project = path.join(tmp, 'uses-the-action');
    await fs.mkdir(path.join(project, '.github', 'workflows'), { recursive: true });
    await fs.mkdir(path.join(project, 'down'));
    // actionlint takes the folder holding .git as the project root.
    await fs.mkdir(path.join(project, '.git'));
    await fs.copyFile(path.join(ROOT, 'action.yml'), path.join(project, 'action.yml'));
    await fs.copyFile(path.join(ROOT, 'down', 'action.yml'), path.join(project, 'down', 'action.yml'));
    const use = (withLines: string[]) =>
      [
        'name: lab',
        'on: push',
        'jobs:',
        '  lab:',
        '    runs-on: ubuntu-24.04',
        '    steps:',
        '      - uses: ./',
        '        with:',
        ...withLines,
        '      - uses: ./down',
        '',
      ].join('\n');
    await fs.writeFile(
      path.join(project, '.github', 'workflows', 'good.yml'),
      use(['          runtime: kind', '          documents: scenarios', '          addon: .', '          addon-image: demo:ci']),
    );
    await fs.writeFile(path.join(project, '.github', 'workflows', 'bad.yml'), use(['          kubernetes_version: v1.36']));
    const good = await execa(actionlint, ['-no-color', '-shellcheck=', '-pyflakes=', '.github/workflows/good.yml'], { cwd: project, reject: false, all: true });
    expect(good.exitCode, String(good.all)).toBe(0);
    const bad = await execa(actionlint, ['-no-color', '-shellcheck=', '-pyflakes=', '.github/workflows/bad.yml'], { cwd: project, reject: false, all: true });
    expect(bad.exitCode).toBe(1);
    expect(String(bad.all)).toMatch(/input "kubernetes_version" is not defined in action "ocm-lab"/);
  });

  it('finds nothing in the workflow `ocm-lab addon new` writes for an addon project', async () => {
    const workflow = (await projectFiles('demo')).find((f) => f.path === '.github/workflows/ci.yml');
    expect(workflow).toBeDefined();
    const file = path.join(tmp, 'addon-ci.yml');
    await fs.writeFile(file, workflow!.content);
    const r = await lint(actionlint, [file]);
    expect(r.exitCode, r.output).toBe(0);
  });
});
