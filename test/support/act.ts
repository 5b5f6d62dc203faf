import fs from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';

/** The actions from github.com that ocm-lab's action and workflows name: act cannot fetch them here. */
const GITHUB_ACTIONS = ['actions/setup-node@v6', 'actions/setup-go@v6', 'actions/cache@v5', 'actions/upload-artifact@v7'];

/**
 * act clones every remote action a composite action names before it looks at the step's `if:`, and
 * fails the step when it cannot: github.com is out of reach here. Each stands in as a local action (written
 * under `dir`) that fails loudly if a step ever runs it; the tests' steps leave them off (node-version '',
 * cache and upload 'false'). Returns act's `--local-repository` arguments.
 */
export async function unreachableActions(dir: string): Promise<string[]> {
  await fs.mkdir(dir, { recursive: true });
  await fs.writeFile(
    path.join(dir, 'action.yml'),
    [
      'name: not reachable here',
      'description: stands in for an action on github.com, which this machine cannot reach',
      'runs:',
      '  using: composite',
      '  steps:',
      '    - shell: bash',
      '      run: echo "::error::this action lives on github.com, which this machine cannot reach" && exit 1',
      '',
    ].join('\n'),
  );
  return GITHUB_ACTIONS.flatMap((a) => ['--local-repository', `${a}=${dir}`]);
}

/**
 * What GitHub downloads for `uses: ocm-lab/ocm-lab@v0.1.0`: the checkout's tracked files at `root`, copied to `dir`,
 * here with its build and its node_modules (a link) so the action installs nothing from the npm registry.
 */
export async function actionRepository(root: string, dir: string): Promise<string> {
  const tracked = (await execa('git', ['ls-files', '-z'], { cwd: root })).stdout.split('\0').filter(Boolean);
  for (const f of tracked) {
    await fs.mkdir(path.dirname(path.join(dir, f)), { recursive: true });
    await fs.copyFile(path.join(root, f), path.join(dir, f)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err; // deleted in the work tree, not yet in git
    });
  }
  await fs.cp(path.join(root, 'dist'), path.join(dir, 'dist'), { recursive: true });
  await fs.symlink(path.join(root, 'node_modules'), path.join(dir, 'node_modules'));
  return dir;
}

/** `ocm-lab addon new`'s workflow with the three github.com actions act cannot fetch here turned off (see unreachableActions). */
export function withoutGithubActions(generated: string): string {
  const text = generated.replace(/^( +)addon: \.$/m, (line, indent: string) =>
    [line, `${indent}node-version: ""`, `${indent}cache: "false"`, `${indent}upload: "false"`].join('\n'),
  );
  if (text === generated) throw new Error(`the generated workflow has no 'addon: .' input to add the test's inputs beside:\n${generated}`);
  return text;
}

/** The `uses:` of the ocm-lab action in a generated workflow: its repository and tag (for act's --local-repository). */
export function actionUses(generated: string): { repository: string; ref: string } {
  const uses = /uses: (ocm-lab\/ocm-lab)@(v[\d.]+)$/m.exec(generated);
  if (!uses) throw new Error(`the generated workflow uses no ocm-lab/ocm-lab@vX.Y.Z:\n${generated}`);
  return { repository: uses[1] as string, ref: uses[2] as string };
}
