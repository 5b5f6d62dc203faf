import { describe, expect, it } from 'vitest';
import { KIND_NODE_BINARIES, KUBERNETES_BINARIES, OCM_BINARIES } from '../../src/provision/index.js';
import { kindPreparation } from '../../src/runtime/kind/setup.js';

describe('setup --runtime kind provisions what its source needs', () => {
  it('built here: the node image’s binaries, Kubernetes’ and (unless --no-ocm) OCM’s', () => {
    const all = kindPreparation.binaries('build', true);
    for (const name of [...KIND_NODE_BINARIES, ...KUBERNETES_BINARIES, ...OCM_BINARIES]) expect(all).toContain(name);
    expect(new Set(all).size).toBe(all.length);
    expect(kindPreparation.binaries('build', false).filter((b) => (OCM_BINARIES as string[]).includes(b))).toEqual([]);
  });

  it('official or auto: only kind and kubectl (the node image and the registries give the rest)', () => {
    for (const mode of ['official', 'auto'] as const) expect([...kindPreparation.binaries(mode, true)].sort()).toEqual(['kind', 'kubectl']);
  });
});
