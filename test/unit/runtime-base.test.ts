import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { defaultLabConfig, parseLabConfig, readLabState, renderLabConfig, type LabConfig } from '../../src/config/index.js';
import { downLab, upLab } from '../../src/lab/lifecycle.js';
import { lockLab } from '../../src/runtime/lab-lock.js';
import { runtimeNamed } from '../../src/runtime/registry.js';
import { labDir } from '../../src/paths.js';
import { addonVocabulary } from '../../src/addons/registry.js';

/**
 * The runtime base (issue 29): every runtime's `up` and `down` take the lab
 * lock, and a lab recorded by another runtime is refused by every runtime.
 * Both happen before a runtime touches a cluster or Docker, so they are
 * checked here on real files, with the real lifecycle.
 */
describe('runtime base: lab lock and recorded runtime', () => {
  let home: string;
  const previous = process.env.OCM_LAB_HOME;
  const config = (name: string): LabConfig => ({ ...defaultLabConfig(), name });
  // The existing runtime's options as `up --runtime existing` passes them; no cluster is asked before the lock.
  const existingOptions = { kubeconfig: '/nonexistent/kubeconfig', hubContext: 'hub', spokeContexts: ['cluster1'] };

  beforeAll(async () => {
    home = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-runtime-base-'));
    process.env.OCM_LAB_HOME = home;
  });
  afterEach(async () => {
    for (const entry of await fs.readdir(home)) await fs.rm(path.join(home, entry), { recursive: true, force: true });
  });
  afterAll(async () => {
    if (previous === undefined) delete process.env.OCM_LAB_HOME;
    else process.env.OCM_LAB_HOME = previous;
    await fs.rm(home, { recursive: true, force: true });
  });

  it('a second lock on the same lab exits 6 with the lock message; a released lock can be taken again', async () => {
    const release = await lockLab('locked');
    await expect(lockLab('locked')).rejects.toMatchObject({
      exitCode: 6,
      message: expect.stringContaining("another ocm-lab command is working on lab 'locked'"),
    });
    await release();
    const again = await lockLab('locked');
    await again();
  });

  it('up on the existing runtime waits for nobody: with the lock held it exits 6 and records nothing', async () => {
    const release = await lockLab('busy');
    try {
      await expect(upLab(config('busy'), { runtime: 'existing', runtimeOptions: existingOptions, renderer: 'silent' })).rejects.toMatchObject({
        exitCode: 6,
        message: expect.stringContaining('.lock is held'),
      });
      expect(await readLabState('busy')).toBeNull();
    } finally {
      await release();
    }
  });

  it('down takes the lock too (on every runtime): with it held, down exits 6 and removes nothing', async () => {
    await fs.mkdir(labDir('held'), { recursive: true });
    await fs.writeFile(
      path.join(labDir('held'), 'state.json'),
      JSON.stringify({ version: 1, lab: 'held', runtime: 'existing', createdAt: '', config: config('held'), runtimeState: { kubeconfig: 'k', clusters: [] } }),
    );
    const release = await lockLab('held');
    try {
      await expect(downLab(config('held'), {})).rejects.toMatchObject({ exitCode: 6 });
      expect((await readLabState('held'))?.runtime).toBe('existing');
    } finally {
      await release();
    }
  });

  for (const [recorded, asked] of [
    ['kind', 'local'],
    ['local', 'kind'],
    ['local', 'existing'],
    ['existing', 'local'],
  ] as const) {
    it(`a lab recorded by the ${recorded} runtime is refused by ${asked} with exit 6 naming both, and left as it was`, async () => {
      const lab = `${recorded}-lab`;
      const state = { version: 1, lab, runtime: recorded, createdAt: '2026-01-01T00:00:00.000Z', config: config(lab), runtimeState: {} };
      await fs.mkdir(labDir(lab), { recursive: true });
      await fs.writeFile(path.join(labDir(lab), 'state.json'), JSON.stringify(state));
      const options = asked === 'existing' ? { runtimeOptions: existingOptions } : {};
      const refused = upLab(config(lab), { runtime: asked, renderer: 'silent', ...options });
      await expect(refused).rejects.toMatchObject({
        exitCode: 6,
        message: `lab '${lab}' was brought up with the ${recorded} runtime, not ${asked}`,
      });
      expect(JSON.parse(await fs.readFile(path.join(labDir(lab), 'state.json'), 'utf8'))).toEqual(state);
    });
  }

  it('reads a state written before the envelope (runtime fields beside the common ones) as the envelope', async () => {
    await fs.mkdir(labDir('old'), { recursive: true });
    const network = { mode: 'loopback' };
    await fs.writeFile(
      path.join(labDir('old'), 'state.json'),
      JSON.stringify({ version: 1, lab: 'old', runtime: 'local', createdAt: 'then', config: config('old'), network, networkResources: [] }),
    );
    expect(await readLabState('old')).toEqual({
      version: 1,
      lab: 'old',
      runtime: 'local',
      createdAt: 'then',
      config: config('old'),
      runtimeState: { network, networkResources: [] },
    });
  });
});

describe("runtime options: the lab file's runtime: section, flags over it, each runtime checking its own", () => {
  const file = (runtime: string) =>
    [
      'apiVersion: ocm-lab/v1alpha1',
      'kind: Lab',
      'name: rt',
      'vpcs: [{name: vpc-1}, {name: vpc-2}]',
      'clusters: [{name: hub, vpc: vpc-1, hub: true}, {name: c1, vpc: vpc-2}]',
      runtime,
    ].join('\n');

  it('parses runtime.name and the options under each runtime, and renders them back', () => {
    const config = parseLabConfig(file('runtime:\n  name: existing\n  existing:\n    kubeconfig: /k\n    hubContext: hub\n'), 'lab.yaml', addonVocabulary());
    expect(config.runtime).toEqual({ name: 'existing', options: { existing: { kubeconfig: '/k', hubContext: 'hub' } } });
    expect(parseLabConfig(renderLabConfig(config), 'lab.yaml', addonVocabulary())).toEqual(config);
  });

  it('refuses a runtime section that is not a mapping of options, with the file line', () => {
    expect(() => parseLabConfig(file('runtime:\n  kind: 3\n'), 'lab.yaml', addonVocabulary())).toThrow(/lab\.yaml:7: runtime\.kind = 3: must be a mapping/);
  });

  it('each runtime refuses options it does not take (exit 2, naming the option); flags override the file', async () => {
    await expect(runtimeNamed('local', { fileOptions: { local: { cidr: 'x' } } })).rejects.toMatchObject({
      exitCode: 2,
      message: 'runtime.local.cidr is not an option of the local runtime; it takes none',
    });
    await expect(runtimeNamed('kind', { fileOptions: { kind: { nodeImage: 5 } } })).rejects.toMatchObject({
      exitCode: 2,
      message: 'runtime.kind.nodeImage must be a non-empty string, not 5',
    });
    await expect(runtimeNamed('local', { fileOptions: { k3d: {} } })).rejects.toMatchObject({ exitCode: 2, message: expect.stringContaining('runtime.k3d') });
    await expect(runtimeNamed('existing', { fileOptions: { existing: { kubeconfig: '/k' } } })).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringContaining('needs --kubeconfig FILE and --hub-context CTX'),
    });
    // The file's kubeconfig and hub, the flags' spokes: together they make a whole input.
    const existing = await runtimeNamed('existing', {
      fileOptions: { existing: { kubeconfig: '~/lab.kubeconfig', hubContext: 'hub', spokeContexts: ['old'] } },
      options: { spokeContexts: ['c1'] },
    });
    const base = parseLabConfig(file(''), 'lab.yaml', addonVocabulary());
    expect(existing.resolveConfig!(base, null).clusters.map((c) => c.name)).toEqual(['hub', 'c1']);
    expect((existing.initialState(base) as { kubeconfig: string }).kubeconfig).toBe(path.join(os.homedir(), 'lab.kubeconfig'));
  });
});
