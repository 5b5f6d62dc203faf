import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { defaultLabConfig } from '../../src/config/index.js';
import { writeLabState, type LabState } from '../../src/config/lab-state.js';
import { askedEngine, engineEndpointEnv, useLabEngine } from '../../src/host/engine.js';
import { labDir } from '../../src/paths.js';
import { useEngineOf } from '../../src/runtime/kind/lab-engine.js';
import { readKindState } from '../../src/runtime/kind/state.js';

/**
 * The engine a kind lab was brought up with, in its state (issue 41): written by `up`, read back by every later
 * command, and an older state without it still read (the engine found now, as before). Real files, no engine.
 */
describe('kind state: the engine the lab was brought up with', () => {
  let home: string;
  const previous = { home: process.env.OCM_LAB_HOME, engine: process.env.OCM_LAB_ENGINE };

  const stateOf = (lab: string, runtimeState: Record<string, unknown>): LabState => ({
    version: 1,
    lab,
    runtime: 'kind',
    createdAt: '2026-12-03T00:00:00.000Z',
    config: { ...defaultLabConfig(), name: lab },
    runtimeState,
  });

  beforeAll(async () => {
    home = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-kind-state-'));
    process.env.OCM_LAB_HOME = home;
  });
  afterEach(() => {
    useLabEngine(null);
    if (previous.engine === undefined) delete process.env.OCM_LAB_ENGINE;
    else process.env.OCM_LAB_ENGINE = previous.engine;
  });
  afterAll(async () => {
    if (previous.home === undefined) delete process.env.OCM_LAB_HOME;
    else process.env.OCM_LAB_HOME = previous.home;
    await fs.rm(home, { recursive: true, force: true });
  });

  it('round trip: the recorded engine and its endpoint read back as written', async () => {
    const engine = { name: 'podman', endpoint: { CONTAINER_HOST: 'unix:///run/podman/podman.sock' } };
    await writeLabState(stateOf('on-podman', { nodeImage: 'kindest/node:v1.35.0', images: ['a:1'], engine }));
    const state = await readKindState('on-podman');
    expect(state?.runtimeState).toEqual({ nodeImage: 'kindest/node:v1.35.0', images: ['a:1'], engine });
  });

  it('a state written before the engine was recorded reads without one, and takes the engine found now', async () => {
    await writeLabState(stateOf('older', { nodeImage: 'kindest/node:v1.35.0', images: [] }));
    const state = await readKindState('older');
    expect(state?.runtimeState).toEqual({ nodeImage: 'kindest/node:v1.35.0', images: [] });
    process.env.OCM_LAB_ENGINE = 'podman';
    expect(useEngineOf('older', state)).toEqual({ recorded: null, note: null });
    expect(askedEngine()).toBe('podman');
    expect(engineEndpointEnv()).toEqual({});
  });

  it('an engine record that is not docker or podman is refused, naming the file and the field', async () => {
    await writeLabState(stateOf('garbled', { nodeImage: '', images: [], engine: { name: 'nerdctl', endpoint: {} } }));
    await expect(readKindState('garbled')).rejects.toThrow(`${path.join(labDir('garbled'), 'state.json')}: runtimeState.engine is`);
    await writeLabState(stateOf('garbled', { nodeImage: '', images: [], engine: { name: 'docker', endpoint: { DOCKER_HOST: 1 } } }));
    await expect(readKindState('garbled')).rejects.toThrow('runtimeState.engine');
  });

  it("a lab's recorded engine becomes the process's, over OCM_LAB_ENGINE, saying so once", async () => {
    const engine = { name: 'podman', endpoint: { CONTAINER_HOST: 'unix:///run/podman/podman.sock' } };
    await writeLabState(stateOf('pinned', { nodeImage: '', images: [], engine }));
    const state = await readKindState('pinned');
    process.env.OCM_LAB_ENGINE = 'docker';
    const first = useEngineOf('pinned', state);
    expect(first.recorded).toEqual(engine);
    expect(first.note).toContain("engine: podman, the one lab 'pinned' was brought up with (not OCM_LAB_ENGINE=docker");
    expect(askedEngine()).toBe('podman');
    expect(engineEndpointEnv()).toEqual({ CONTAINER_HOST: 'unix:///run/podman/podman.sock' });
    expect(useEngineOf('pinned', state).note).toBeNull();
    useLabEngine(null);
    expect(askedEngine()).toBe('docker');
  });
});
