import fs from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { defaultLabConfig } from '../../src/config/index.js';
import { MINIMAL_LAB_FILE } from '../support/lab-file.js';
import { freshBuild } from '../support/fresh-build.js';
import { useTempDir } from '../support/temp-dir.js';

const MAIN = path.resolve('dist/cli/main.js');
/** Compiled files this test depends on; each must come from this build, not an older one. */
const BUILT = ['dist/cli/main.js', 'dist/cli/commands/validate.js', 'dist/config/parse.js', 'dist/config/rules.js'];
const BAD_LAB = 'cfgbad';

const tmp = useTempDir('ocm-lab-cli-validate-');
/** Where a lab would keep state and binaries; nothing may appear here when the file is rejected. */
let home: string;
let cache: string;

async function cli(args: string[]) {
  const env: NodeJS.ProcessEnv = { ...process.env, OCM_LAB_HOME: home, OCM_LAB_CACHE_DIR: cache, CI: 'true' };
  delete env.OCM_LAB_CONFIG;
  const r = await execa(process.execPath, [MAIN, ...args], { reject: false, env, timeout: 120_000 });
  return { exitCode: r.exitCode, stdout: String(r.stdout), stderr: String(r.stderr) };
}

async function exists(p: string): Promise<boolean> {
  return fs.stat(p).then(
    () => true,
    () => false,
  );
}

async function labNamespaces(): Promise<string[]> {
  const r = await execa('ip', ['netns', 'list'], { reject: false });
  return String(r.stdout)
    .split('\n')
    .filter((l) => l.startsWith(`ocmlab.${BAD_LAB}.`));
}

beforeAll(async () => {
  home = path.join(tmp.path, 'home');
  cache = path.join(tmp.path, 'cache');
  await freshBuild(BUILT);
  const help = await cli(['--help']);
  if (help.exitCode !== 0) {
    throw new Error(`the built CLI does not start (node dist/cli/main.js --help exited ${help.exitCode}):\n${help.stderr.slice(-2000)}`);
  }
}, 360_000);

describe('ocm-lab validate', () => {
  it('rejects a bad file with exit code 2, naming file, line, field and value on stderr', async () => {
    const file = path.join(tmp.path, 'bad.yaml');
    await fs.writeFile(
      file,
      // Lines 6, 11 and 12 of the file are named below.
      MINIMAL_LAB_FILE.replace('kind: Lab\n', `kind: Lab\nname: ${BAD_LAB}\n`).replace('    vpc: vpc-2\n', '    vpcc: vpc-2\n'),
    );
    const r = await cli(['validate', '--config', file]);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`error: invalid lab file ${file} (3 problems):`);
    expect(r.stderr).toContain(`${file}:6: vpcs[1].name = "vpc-2": VPC has no cluster`);
    expect(r.stderr).toContain(`${file}:11: clusters[1].vpc: is required`);
    expect(r.stderr).toContain(`${file}:12: clusters[1].vpcc: unknown field; did you mean 'vpc'?`);
    expect(r.stderr).toMatch(/\nhint: .*nothing was created/);
    expect(await exists(home)).toBe(false);
    expect(await exists(cache)).toBe(false);
  });

  it('names a file that does not exist (exit 2)', async () => {
    const missing = path.join(tmp.path, 'missing.yaml');
    const r = await cli(['validate', '--config', missing]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(`error: cannot read lab file ${missing}: no such file`);
  });

  it('accepts a good file: a one-line summary, or the normalised lab with -o json', async () => {
    const r = await cli(['validate', '--config', 'examples/three-spokes.yaml']);
    expect(r).toMatchObject({ exitCode: 0, stdout: 'lab file OK: 4 clusters in 2 VPCs', stderr: '' });
    const json = await cli(['validate', '--config', 'examples/default-lab.yaml', '-o', 'json']);
    expect(json.exitCode).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ ...defaultLabConfig(), source: path.resolve('examples/default-lab.yaml') });
  });

  it('without --config checks the built-in default lab', async () => {
    const r = await cli(['validate']);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('lab file OK: 3 clusters in 2 VPCs (no --config: the built-in default lab)');
  });
});

describe('ocm-lab up with a bad lab file', () => {
  it('exits 2 before creating anything: no lab directory, no cache, no network namespace', async () => {
    const file = path.join(tmp.path, 'two-hubs.yaml');
    await fs.writeFile(
      file,
      `apiVersion: ocm-lab/v1alpha1\nkind: Lab\nname: ${BAD_LAB}\nvpcs: [{name: vpc-1}]\nclusters:\n  - {name: a, vpc: vpc-1, hub: true}\n  - {name: b, vpc: vpc-1, hub: true}\n`,
    );
    const before = await labNamespaces();
    const r = await cli(['up', '--config', file]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(`${file}:7: clusters[1].hub = true: 2 clusters are marked hub (a, b)`);
    expect(await exists(home)).toBe(false);
    expect(await exists(cache)).toBe(false);
    expect(await labNamespaces()).toEqual(before);
    expect(before).toEqual([]);
  });
});
