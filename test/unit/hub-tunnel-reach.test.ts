import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { reachedByForward } from '../../src/addons/cluster-proxy/hub-tunnel.js';
import { defaultLabConfig } from '../../src/config/defaults.js';
import { readLabState } from '../../src/config/lab-state.js';
import { labHostReachesNodes } from '../../src/lab/hub-tunnel-options.js';
import { runtimeUp } from '../../src/runtime/base.js';
import type { Runtime } from '../../src/runtime/types.js';
import { useTempDir } from '../support/temp-dir.js';

const forwarder = async () => ({ address: '127.0.0.1:40000', stop: async () => undefined });
const ours = { metadata: { name: 'cluster-proxy-proxy-server-0' }, spec: { hostNetwork: true } };
const upstreams = { metadata: { name: 'cluster-proxy-proxy-server-0' }, spec: {} };

describe("the host's way to the hub's proxy-server", () => {
  it('a pod with an address of its own (upstream) is always port-forwarded when a forwarder is given', () => {
    expect(reachedByForward(upstreams, { portForward: forwarder })).toBe(true);
    expect(reachedByForward(upstreams, { portForward: forwarder, forwardHostNetwork: false })).toBe(true);
  });

  it("a pod on the node's network (ours) is dialled at the node only where the host reaches the node", () => {
    expect(reachedByForward(ours, { portForward: forwarder, forwardHostNetwork: false })).toBe(false);
    expect(reachedByForward(ours, { portForward: forwarder, forwardHostNetwork: true })).toBe(true);
  });

  it('without a forwarder (a caller inside the hub) every pod is dialled at its address', () => {
    expect(reachedByForward(upstreams, {})).toBe(false);
    expect(reachedByForward(ours, { forwardHostNetwork: true })).toBe(false);
  });
});

describe("whether the host reaches a lab's node addresses, by the lab's runtime", () => {
  const home = useTempDir('ocm-lab-reach-unit-');
  beforeAll(async () => {
    vi.stubEnv('OCM_LAB_HOME', home.path);
    for (const [lab, runtime] of [
      ['on-kind', 'kind'],
      ['on-local', 'local'],
      ['on-existing', 'existing'],
      ['on-gone', 'a-runtime-we-do-not-have'],
    ]) {
      await fs.mkdir(path.join(home.path, lab!), { recursive: true });
      await fs.writeFile(path.join(home.path, lab!, 'state.json'), JSON.stringify({ version: 1, lab, runtime }));
    }
  });
  afterAll(() => {
    vi.unstubAllEnvs();
  });

  it('local routes the host into its namespaces; kind (Docker Desktop has no route into its VM), existing and unknown do not', async () => {
    const { hostReachesNodeAddresses } = await import('../../src/runtime/registry.js');
    expect(await hostReachesNodeAddresses('on-local')).toBe(true);
    expect(await hostReachesNodeAddresses('on-kind')).toBe(false);
    expect(await hostReachesNodeAddresses('on-existing')).toBe(false);
    expect(await hostReachesNodeAddresses('on-gone')).toBe(false);
    expect(await hostReachesNodeAddresses('no-such-lab')).toBe(false);
  });
});

describe("the host's reach recorded at up, read by proxy kubectl", () => {
  const home = useTempDir('ocm-lab-reach-state-');
  const stateFile = (lab: string) => path.join(home.path, lab, 'state.json');
  const writeState = async (lab: string, fields: Record<string, unknown>) => {
    await fs.mkdir(path.join(home.path, lab), { recursive: true });
    await fs.writeFile(
      stateFile(lab),
      JSON.stringify({ version: 1, lab, createdAt: '', config: { ...defaultLabConfig(), name: lab }, runtimeState: {}, ...fields }),
    );
  };
  beforeAll(() => {
    vi.stubEnv('OCM_LAB_HOME', home.path);
  });
  afterAll(() => {
    vi.unstubAllEnvs();
  });

  /** The base's first step of `up` with a runtime that creates nothing: what it records is the base's own work. */
  async function baseStepOf(runtime: 'local' | 'kind', lab: string): Promise<void> {
    const fake = {
      name: runtime,
      initialState: () => ({}),
      reshapeRefusal: () => null,
      provisioning: () => ({ context: undefined, steps: [], deleteClusters: async () => undefined }),
    } as unknown as Runtime<undefined, object>;
    const up = runtimeUp(fake, { ...defaultLabConfig(), name: lab }, {});
    try {
      await up.steps[0]!.run!(undefined, () => undefined);
    } finally {
      await up.release();
    }
  }

  it("up records the runtime's reach in state.json: local true, kind false", async () => {
    await baseStepOf('local', 'up-local');
    await baseStepOf('kind', 'up-kind');
    expect(JSON.parse(await fs.readFile(stateFile('up-local'), 'utf8'))).toMatchObject({ runtime: 'local', hostReachesNodes: true });
    expect(JSON.parse(await fs.readFile(stateFile('up-kind'), 'utf8'))).toMatchObject({ runtime: 'kind', hostReachesNodes: false });
    expect((await readLabState('up-local'))?.hostReachesNodes).toBe(true);
    expect(await labHostReachesNodes('up-local')).toBe(true);
    expect(await labHostReachesNodes('up-kind')).toBe(false);
  });

  it('up again on a lab recorded before the field existed adds it, keeping the rest of the state', async () => {
    await writeState('old-local', { runtime: 'local', createdAt: 'then', runtimeState: { network: 'kept' } });
    await baseStepOf('local', 'old-local');
    expect(JSON.parse(await fs.readFile(stateFile('old-local'), 'utf8'))).toMatchObject({
      hostReachesNodes: true,
      createdAt: 'then',
      runtimeState: { network: 'kept' },
    });
  });

  it('the recorded field is what counts, not the runtime name beside it', async () => {
    await writeState('said-no', { runtime: 'local', hostReachesNodes: false });
    await writeState('said-yes', { runtime: 'kind', hostReachesNodes: true });
    expect(await labHostReachesNodes('said-no')).toBe(false);
    expect(await labHostReachesNodes('said-yes')).toBe(true);
  });

  it("a lab brought up before the field existed falls back to its runtime's registry line; no lab or a broken state reaches nothing", async () => {
    await writeState('before-local', { runtime: 'local' });
    await writeState('before-kind', { runtime: 'kind' });
    await writeState('before-gone', { runtime: 'a-runtime-we-do-not-have' });
    await fs.mkdir(path.join(home.path, 'broken'), { recursive: true });
    await fs.writeFile(stateFile('broken'), 'null');
    expect(await labHostReachesNodes('before-local')).toBe(true);
    expect(await labHostReachesNodes('before-kind')).toBe(false);
    expect(await labHostReachesNodes('before-gone')).toBe(false);
    expect(await labHostReachesNodes('broken')).toBe(false);
    expect(await labHostReachesNodes('no-such-lab')).toBe(false);
  });
});
