import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { reachedByForward } from '../../src/addons/cluster-proxy/hub-tunnel.js';
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
