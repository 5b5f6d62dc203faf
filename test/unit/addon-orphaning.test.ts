import { describe, expect, it } from 'vitest';
import { applyDeploymentConfig } from '../../src/addons/framework/agent-config.js';
import { deployWork } from '../../src/addons/framework/manager.js';
import { DELETION_ORPHAN_ANNOTATION, orphaningRules, workDeleteOption } from '../../src/addons/framework/orphaning.js';
import { helloworldAddon } from '../../src/addons/helloworld/addon.js';
import { managedServiceAccountAddon } from '../../src/addons/managed-serviceaccount/addon.js';
import { MSA_NAMESPACE } from '../../src/addons/managed-serviceaccount/constants.js';
import type { KubeObject } from '../../src/kube/objects.js';
import { AGENT_ADDON_NAMESPACE } from '../../src/ocm/constants.js';

const ns = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
const mca = { apiVersion: 'addon.open-cluster-management.io/v1alpha1', kind: 'ManagedClusterAddOn', metadata: { name: 'x', namespace: 'cluster1', uid: 'u1' } };
const specOf = (work: KubeObject) => work.spec as { deleteOption?: unknown; workload: { manifests: KubeObject[] } };
const namespaceRule = (name: string) => ({ group: '', resource: 'namespaces', namespace: '', name });

describe('orphaning rules of an addon work', () => {
  it("keeps the addon's own install namespace owned: it goes with the addon", () => {
    expect(orphaningRules([ns('own'), { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'sa', namespace: 'own' } }], 'own')).toEqual([]);
    expect(workDeleteOption([ns('own')], 'own')).toBeUndefined();
  });

  it("orphans the klusterlet's addon namespace, even for an addon that calls it its own", () => {
    expect(orphaningRules([ns(AGENT_ADDON_NAMESPACE)], AGENT_ADDON_NAMESPACE)).toEqual([namespaceRule(AGENT_ADDON_NAMESPACE)]);
  });

  it('orphans a namespace that is not the addon’s own (a user’s, another addon’s)', () => {
    expect(workDeleteOption([ns('someone-elses')], 'own')).toEqual({
      propagationPolicy: 'SelectivelyOrphan',
      selectivelyOrphans: { orphaningRules: [namespaceRule('someone-elses')] },
    });
  });

  it('orphans every manifest annotated deletion-orphan, as upstream’s addon-framework does', () => {
    const annotated = (apiVersion: string, kind: string, namespace?: string): KubeObject => ({
      apiVersion,
      kind,
      metadata: { name: 'kept', ...(namespace ? { namespace } : {}), annotations: { [DELETION_ORPHAN_ANNOTATION]: '' } },
    });
    expect(
      orphaningRules(
        [annotated('apps/v1', 'Deployment', 'own'), annotated('rbac.authorization.k8s.io/v1', 'ClusterRole'), annotated('example.io/v1', 'Policy', 'own')],
        'own',
      ),
    ).toEqual([
      { group: 'apps', resource: 'deployments', namespace: 'own', name: 'kept' },
      { group: 'rbac.authorization.k8s.io', resource: 'clusterroles', namespace: '', name: 'kept' },
      { group: 'example.io', resource: 'policies', namespace: 'own', name: 'kept' },
    ]);
  });

  it("managed-serviceaccount moved into the klusterlet's addon namespace: that namespace is orphaned, its own is not", async () => {
    const addon = managedServiceAccountAddon();
    const rendered = await addon.agentManifests('cluster1', undefined as never, { variables: {}, installNamespace: AGENT_ADDON_NAMESPACE });
    const moved = applyDeploymentConfig(
      rendered,
      { spec: { agentInstallNamespace: AGENT_ADDON_NAMESPACE }, specHash: 'h' },
      { addonName: addon.name, defaultNamespace: addon.installNamespace },
    );
    const work = specOf(deployWork(addon, mca, moved));
    expect(work.deleteOption).toEqual({
      propagationPolicy: 'SelectivelyOrphan',
      selectivelyOrphans: { orphaningRules: [namespaceRule(AGENT_ADDON_NAMESPACE)] },
    });

    const home = specOf(deployWork(addon, mca, rendered));
    expect(home.workload.manifests).toContainEqual(expect.objectContaining({ kind: 'Namespace', metadata: { name: MSA_NAMESPACE } }));
    expect(home.deleteOption).toBeUndefined();
  });

  it('helloworld, which lives in the klusterlet’s addon namespace, ships no Namespace at all', async () => {
    const manifests = await helloworldAddon().agentManifests('cluster1', undefined as never);
    expect(manifests.filter((m) => m.kind === 'Namespace')).toEqual([]);
  });
});
