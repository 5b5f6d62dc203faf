import fs from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/errors.js';
import { startPty } from '../support/pty.js';
import { freshBuild } from '../support/fresh-build.js';
import { useTempDir } from '../support/temp-dir.js';
import { waitUntil } from '../support/wait.js';

// `ocm-lab tutorial` in a real pseudo-terminal (util-linux script), on a document that needs no lab.

const MAIN = path.resolve('dist/cli/main.js');
const BUILT = ['dist/cli/main.js', 'dist/cli/commands/tutorial.js', 'dist/scenario/tutorial.js', 'dist/scenario/tutorial-progress.js'];
/** A sleep only this file's document runs, to tell whether the block's process is still there. */
const SLEEP = `sleep ${500 + Math.floor(Math.random() * 400)}`;

const DOCUMENT = `---
title: A walk that needs no lab
summary: Five steps, each checked.
---

# Saying hello

The first step says hello and exports a variable.

\`\`\`sh
echo hello
export GREETING=hi
\`\`\`

\`\`\`expect contains
hello
\`\`\`

The second step reads the variable.

\`\`\`sh
echo "greeting=$GREETING"
\`\`\`

\`\`\`expect contains
greeting=hi
\`\`\`

The third step is wrong as written: the reader edits it.

\`\`\`sh
echo wrong
\`\`\`

\`\`\`expect contains
right
\`\`\`

The fourth step takes long.

\`\`\`sh
echo started; ${SLEEP}; echo done
\`\`\`

The fifth step reads the variable in a later process.

\`\`\`sh
echo "still $GREETING"
\`\`\`

\`\`\`expect contains
still hi
\`\`\`
`;

const tmp = useTempDir('ocm-lab-tutorial-');
let docs: string;
let env: NodeJS.ProcessEnv;
let progressFile: string;

const command = (args: string) => `${JSON.stringify(process.execPath)} ${JSON.stringify(MAIN)} tutorial walk --dir ${JSON.stringify(docs)} ${args}`;

async function progress(): Promise<{ next: number; marks: (string | null)[] }> {
  return JSON.parse(await fs.readFile(progressFile, 'utf8')) as { next: number; marks: (string | null)[] };
}

async function sleepRunning(): Promise<boolean> {
  const ps = await execa('ps', ['-eo', 'args'], { reject: false });
  return String(ps.stdout)
    .split('\n')
    .some((l) => l.trim() === SLEEP);
}

beforeAll(async () => {
  docs = path.join(tmp.path, 'docs');
  await fs.mkdir(docs);
  await fs.writeFile(path.join(docs, 'walk.md'), DOCUMENT);
  env = { OCM_LAB_HOME: path.join(tmp.path, 'home'), OCM_LAB_CACHE_DIR: path.join(tmp.path, 'cache'), OCM_LAB_RUNTIME: 'local', OCM_LAB_CONFIG: '' };
  progressFile = path.join(tmp.path, 'home', '.tutorials', 'default', 'walk', 'progress.json');
  await freshBuild(BUILT);
}, 360_000);

describe('ocm-lab tutorial in a terminal', () => {
  it('shows prose and command, runs on Enter, checks with ✔/✘, lets the reader edit, and q keeps the place', async () => {
    const t = startPty(command(''), env);
    await t.waitFor('[Enter] run · e edit · s skip · q quit >');
    expect(t.screen()).toContain('The first step says hello and exports a variable.');
    expect(t.screen()).toContain('step 1/5 · walk.md:10');
    expect(t.screen()).toContain('$ echo hello\n  export GREETING=hi');
    expect(t.screen()).toContain('expect contains: hello');
    t.mark();
    t.type('\r');
    await t.waitFor('✔ as expected');
    await t.waitFor('step 2/5');
    t.mark();
    t.type('\r');
    await t.waitFor(/greeting=hi\n✔ as expected/);
    await t.waitFor('[Enter] run ·');
    t.mark();
    t.type('\r');
    await t.waitFor('✘ expected the output to contain:');
    await t.waitFor('[Enter] run again · e edit');
    t.mark();
    t.type('e\r');
    await t.waitFor('edit $ echo wrong');
    t.type('\x15'); // Ctrl-U: the line editor clears what it was given
    await new Promise((r) => setTimeout(r, 300));
    t.type('echo right\r');
    await t.waitFor(/right\n✔ as expected/);
    await t.waitFor('step 4/5');
    t.mark();
    t.type('q\r');
    await t.waitFor('continue with: ocm-lab tutorial walk --resume --dir');
    expect(t.screen()).toContain('stopped at step 4: the lab is left as it is');
    expect(await t.exited).toBe(0);
    expect(await progress()).toMatchObject({ next: 3, marks: ['passed', 'passed', 'passed', null, null] });
  });

  it('--resume continues at the step where the reader stopped; Ctrl-C stops the running command and keeps the place', async () => {
    const t = startPty(command('--resume'), env);
    await t.waitFor('step 4/5');
    expect(t.screen()).not.toContain('step 1/5');
    await t.waitFor('[Enter] run ·');
    t.mark();
    t.type('\r');
    await t.waitFor('started');
    await waitUntil(async () => (await sleepRunning()) || undefined, 'the block running', 10_000, 100);
    t.type('\x03');
    await t.waitFor('continue with: ocm-lab tutorial walk --resume');
    expect(t.screen()).toContain('interrupted at step 4: the lab is left as it is');
    expect(await t.exited).toBe(ExitCode.interrupted);
    expect(await sleepRunning()).toBe(false);
    expect((await progress()).next).toBe(3);
  });

  it('a new process sees what earlier steps exported; the end sums up', async () => {
    const t = startPty(command('--resume'), env);
    await t.waitFor('[Enter] run ·');
    t.mark();
    t.type('s\r');
    await t.waitFor('step 5/5');
    await t.waitFor('[Enter] run ·');
    t.type('\r');
    await t.waitFor('the end: 4 passed, 1 skipped of 5 steps');
    expect(t.screen()).toMatch(/still hi\n✔ as expected/);
    expect(await t.exited).toBe(0);
  });

  it('--step N jumps there; Ctrl-C at the prompt stops, Ctrl-D says the input ended', async () => {
    const a = startPty(command('--step 2'), env);
    await a.waitFor('[Enter] run ·');
    expect(a.screen()).toContain('step 2/5 · walk.md:21');
    expect(a.screen()).not.toContain('step 1/5');
    a.type('\x03');
    await a.waitFor('interrupted at step 2');
    expect(await a.exited).toBe(ExitCode.interrupted);

    const b = startPty(command('--step 5'), env);
    await b.waitFor('[Enter] run ·');
    b.type('\x04');
    await b.waitFor('the terminal closed (its input ended) at step 5');
    expect(await b.exited).toBe(ExitCode.inputClosed);
    expect((await progress()).next).toBe(4);
  });

  it('a terminal that hangs up mid-command: the command is stopped, the place kept, a line on stderr', async () => {
    const stderrFile = path.join(tmp.path, 'hangup.stderr');
    const t = startPty(`exec ${command('--step 4')} 2>${JSON.stringify(stderrFile)}`, env);
    await t.waitFor('[Enter] run ·');
    t.type('\r');
    await t.waitFor('started');
    await waitUntil(async () => (await sleepRunning()) || undefined, 'the block running', 10_000, 100);
    t.hangUp();
    const said = async () => (await fs.readFile(stderrFile, 'utf8').catch(() => '')).includes('the terminal closed') || undefined;
    await waitUntil(said, 'the hang-up line on stderr', 15_000, 100);
    expect(await fs.readFile(stderrFile, 'utf8')).toContain('continue with: ocm-lab tutorial walk --resume');
    await waitUntil(async () => !(await sleepRunning()) || undefined, "the block's process gone", 10_000, 100);
    expect((await progress()).next).toBe(3);
  });
});

describe('ocm-lab tutorial without a terminal, or with a bad name', () => {
  it('an unknown document fails with exit 5 and the known ones', async () => {
    const r = await execa(process.execPath, [MAIN, 'tutorial', 'nope', '--dir', docs], { reject: false, env: { ...process.env, ...env } });
    expect(r.exitCode).toBe(ExitCode.notFound);
    expect(r.stderr).toContain("no scenario 'nope'");
    expect(r.stderr).toContain('known scenarios: walk');
  });

  it('stdin not a terminal: the document runs as scenario run runs it', async () => {
    const r = await execa(process.execPath, [MAIN, 'tutorial', 'walk', '--dir', docs], {
      reject: false,
      input: '',
      env: { ...process.env, ...env, CI: 'true' },
    });
    expect(r.stderr).toContain('stdin is not a terminal');
    // The third step is wrong as written: scenario run fails there and runs nothing after it.
    expect(r.exitCode).toBe(ExitCode.failure);
    expect(r.stderr).toContain('walk.md:31: step failed: expected the output to contain:');
    expect(r.stdout).toMatch(/walk\s+FAILED\s+2\/5/);
  });
});
