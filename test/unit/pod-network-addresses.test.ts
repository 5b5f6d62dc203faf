import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../src/errors.js';
import { PodAddressPool, podNetnsName, uidKey, vpcVethName } from '../../src/nodelet/pod-network/index.js';

describe('pod addresses', () => {
  it('hands out every address of the range but the first and last, in turn', () => {
    const pool = new PodAddressPool('10.213.33.0/24');
    expect(pool.capacity).toBe(254);
    expect([pool.allocate(), pool.allocate()]).toEqual(['10.213.33.1', '10.213.33.2']);
    pool.release('10.213.33.1');
    // Not reused at once: the next one after the last given.
    expect(pool.allocate()).toBe('10.213.33.3');
  });

  it('continues after the highest address found on existing pods, skips taken ones and wraps', () => {
    const pool = new PodAddressPool('10.1.2.48/28');
    expect(pool.reserve('10.1.2.60')).toBe(true);
    expect(pool.reserve('10.1.2.50')).toBe(true);
    expect(pool.reserve('10.1.2.99')).toBe(false);
    expect(pool.allocate()).toBe('10.1.2.61');
    expect(pool.allocate()).toBe('10.1.2.62');
    expect(pool.allocate()).toBe('10.1.2.49');
    expect(pool.allocate()).toBe('10.1.2.51');
  });

  it('says when the range is full', () => {
    const pool = new PodAddressPool('10.1.2.48/30');
    pool.allocate();
    pool.allocate();
    expect(() => pool.allocate()).toThrow('pod range 10.1.2.48/30 is full: all 2 addresses are in use');
  });

  it('refuses a range that is not one', () => {
    expect(() => new PodAddressPool('10.1.2.0')).toThrow(InvalidInputError);
    expect(() => new PodAddressPool('10.1.2.0/31')).toThrow(InvalidInputError);
  });
});

describe('pod network names', () => {
  const uid = '3f2a9c1e-77b0-4c1d-9e0f-123456789abc';

  it('names the pod namespace under the lab prefix, with no further dot, so down finds it', () => {
    expect(podNetnsName('default', 'cluster1', uid)).toBe('ocmlab.default.p-cluster1-3f2a9c1e77');
    expect(podNetnsName('default', 'cluster1', uid).slice('ocmlab.default.'.length)).not.toContain('.');
    expect(uidKey('not-a-uuid')).toMatch(/^[0-9a-f]{10}$/);
  });

  it('names the VPC end of the veth within IFNAMSIZ, distinct per cluster and lab', () => {
    const names = ['default', 'demo'].flatMap((lab) => ['cluster1', 'cluster2'].map((c) => vpcVethName(lab, c, uid)));
    expect(new Set(names).size).toBe(4);
    for (const n of names) expect(n).toMatch(/^vp[0-9a-f]{10}$/);
  });
});
