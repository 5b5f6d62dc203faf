import { describe, expect, it } from 'vitest';
import { defaultLabConfig, localClusterEnabled, parseLabConfig, withVersionFlags } from '../../src/config/index.js';
import { ExitCode, InvalidInputError } from '../../src/errors.js';
import { planInstalls, renderInstalls } from '../../src/cli/dry-run/installs.js';
import { ocmSteps } from '../../src/ocm/install.js';
import { VALID_LAB_FILE } from '../support/lab-file.js';
import { addonVocabulary } from '../../src/addons/registry.js';

describe('the hub as a managed cluster (localCluster)', () => {
  it('is on by default for OCM v1.3.x and off for v1.2.x; the lab file turns it either way', () => {
    expect(localClusterEnabled(defaultLabConfig())).toBe(false);
    expect(localClusterEnabled(withVersionFlags(defaultLabConfig(), { 'ocm-version': 'v1.3' }))).toBe(true);
    const off = parseLabConfig(`${VALID_LAB_FILE}ocmVersion: v1.3.1\nlocalCluster: false\n`, 'lab.yaml', addonVocabulary());
    expect(off.localCluster).toBe(false);
    expect(localClusterEnabled(off)).toBe(false);
    expect(localClusterEnabled(parseLabConfig(`${VALID_LAB_FILE}localCluster: true\n`, 'lab.yaml', addonVocabulary()))).toBe(true);
    // Unset stays unset, so --ocm-version decides.
    expect(parseLabConfig(VALID_LAB_FILE, 'lab.yaml', addonVocabulary())).not.toHaveProperty('localCluster');
  });

  it('refuses a non-boolean and a lab cluster named local-cluster', () => {
    let err: unknown;
    try {
      parseLabConfig(`${VALID_LAB_FILE.replace('name: cluster2', 'name: local-cluster')}localCluster: yes\n`, 'lab.yaml', addonVocabulary());
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InvalidInputError);
    expect((err as InvalidInputError).exitCode).toBe(ExitCode.invalidInput);
    expect((err as InvalidInputError).message).toContain(
      'lab.yaml:12: clusters[2].name = "local-cluster": is the ManagedCluster name of the hub joined to itself',
    );
    expect((err as InvalidInputError).message).toContain('lab.yaml:14: localCluster = "yes": must be true or false');
  });

  it('plans the klusterlet on the hub as local-cluster, labelled local-cluster=true, and accepts it', () => {
    const on = planInstalls(withVersionFlags(defaultLabConfig(), { 'ocm-version': 'v1.3.1' }));
    expect(on.ocm.localCluster).toEqual({ name: 'local-cluster', label: 'local-cluster=true' });
    expect(on.ocm.accepted).toEqual(['cluster1', 'cluster2', 'local-cluster']);
    expect(renderInstalls(on, 'up', false)).toContain(
      'hub joined to itself: Klusterlet klusterlet on the hub as ManagedCluster local-cluster, labelled local-cluster=true',
    );
    const off = planInstalls(defaultLabConfig());
    expect(off.ocm.localCluster).toBeNull();
    expect(off.ocm.accepted).toEqual(['cluster1', 'cluster2']);
    expect(renderInstalls(off, 'up', false)).toContain('the hub is not a managed cluster (localCluster off)');
  });

  it('joins the hub in the same concurrent OCM step as the spokes', () => {
    const config = withVersionFlags(defaultLabConfig(), { 'ocm-version': 'v1.3.1' });
    const clusters = config.clusters.map((c) => ({ name: c.name, hub: c.hub, kubeconfig: '', internalServer: '', caPem: '' }));
    const ocm = ocmSteps().find((s) => s.title === 'OCM');
    const titles = (ocm?.children?.({ config, options: {}, clusters } as never) ?? []).map((c) => c.title);
    expect(titles).toEqual([
      'hub: cluster manager rolled out',
      'cluster1: klusterlet',
      'cluster2: klusterlet',
      'local-cluster: klusterlet (the hub joined to itself)',
    ]);
    const without = (ocm?.children?.({ config: defaultLabConfig(), options: {}, clusters } as never) ?? []).map((c) => c.title);
    expect(without).not.toContain('local-cluster: klusterlet (the hub joined to itself)');
  });
});
