import { describe, expect, it } from 'vitest';
import { agentDeployments, deploymentAvailability, deploymentFeedback, deploymentFeedbackConfigs } from '../../src/addons/framework/deployment-health.js';
import { deployWork, desiredAddonStatus, managerAvailability, type ManagedClusterAddOn } from '../../src/addons/framework/manager.js';
import type { KubeObject } from '../../src/kube/objects.js';
import type { AddonDefinition } from '../../src/addons/framework/types.js';
import { msaAgentManifests } from '../../src/addons/managed-serviceaccount/addon.js';
import { proxyAgentManifests } from '../../src/addons/cluster-proxy/manifests.js';
import { defaultProxyConfiguration } from '../../src/addons/cluster-proxy/configuration.js';

const NS = 'open-cluster-management-demo';

function deployment(name: string, replicas?: number): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: NS },
    spec: { ...(replicas === undefined ? {} : { replicas }), template: {} },
  };
}

const manifests: KubeObject[] = [
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
  { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'demo-agent', namespace: NS } },
  deployment('demo-agent'),
];

const addon: AddonDefinition = { name: 'demo', displayName: 'demo', description: 'd', installNamespace: NS, agentManifests: async () => manifests };

const mca: ManagedClusterAddOn = {
  apiVersion: 'addon.open-cluster-management.io/v1alpha1',
  kind: 'ManagedClusterAddOn',
  metadata: { name: 'demo', namespace: 'cluster1', uid: 'u-1' },
};

type Values = Record<string, number>;

/** A deploy work as the work agent reports it: Applied, and per Deployment the feedback values it read. */
function work(feedback: Record<string, Values | null>, applied: 'True' | 'False' | null = 'True'): KubeObject {
  return {
    apiVersion: 'work.open-cluster-management.io/v1',
    kind: 'ManifestWork',
    metadata: { name: 'addon-demo-deploy-0', namespace: 'cluster1' },
    status: {
      ...(applied
        ? {
            conditions: [
              {
                type: 'Applied',
                status: applied,
                reason: applied === 'True' ? 'AppliedManifestWorkComplete' : 'AppliedManifestWorkFailed',
                message: applied === 'True' ? 'applied' : 'Failed to apply manifest: forbidden',
              },
            ],
          }
        : {}),
      resourceStatus: {
        manifests: [
          { resourceMeta: { ordinal: 0, group: '', version: 'v1', kind: 'Namespace', resource: 'namespaces', name: NS, namespace: '' }, conditions: [] },
          ...Object.entries(feedback).map(([name, values], i) => ({
            resourceMeta: { ordinal: i + 2, group: 'apps', version: 'v1', kind: 'Deployment', resource: 'deployments', name, namespace: NS },
            ...(values
              ? { statusFeedback: { values: Object.entries(values).map(([n, v]) => ({ name: n, fieldValue: { type: 'Integer', integer: v } })) } }
              : {}),
            conditions: [],
          })),
        ],
      },
    },
  };
}

describe('manifestConfigs for Deployment status feedback', () => {
  it('asks for WellKnownStatus of every Deployment among the agent manifests, watched', () => {
    expect(deploymentFeedbackConfigs([...manifests, deployment('second', 2)])).toEqual([
      {
        resourceIdentifier: { group: 'apps', resource: 'deployments', name: 'demo-agent', namespace: NS },
        feedbackRules: [{ type: 'WellKnownStatus' }],
        feedbackScrapeType: 'Watch',
      },
      {
        resourceIdentifier: { group: 'apps', resource: 'deployments', name: 'second', namespace: NS },
        feedbackRules: [{ type: 'WellKnownStatus' }],
        feedbackScrapeType: 'Watch',
      },
    ]);
    expect(deploymentFeedbackConfigs(manifests.slice(0, 2))).toEqual([]);
    expect(agentDeployments([deployment('a'), deployment('b', 0)]).map((d) => d.replicas)).toEqual([1, 0]);
  });

  it('puts them into the deploy work by default, and not for an addon that judges health itself', () => {
    const spec = (a: AddonDefinition, m = manifests) => deployWork(a, mca, m).spec as { workload: { manifests: KubeObject[] }; manifestConfigs?: unknown[] };
    expect(spec(addon).manifestConfigs).toHaveLength(1);
    expect(spec(addon).workload.manifests).toBe(manifests);
    expect(spec({ ...addon, healthCheck: 'Customized' }).manifestConfigs).toBeUndefined();
    expect(spec(addon, manifests.slice(0, 2)).manifestConfigs).toBeUndefined();
  });

  it('covers the agent Deployments of cluster-proxy and managed-serviceaccount', () => {
    const proxy = proxyAgentManifests('cluster1', defaultProxyConfiguration('10.0.1.2'), { certPem: 'C', keyPem: 'K' }, 'CA');
    expect(deploymentFeedbackConfigs(proxy).map((c) => c.resourceIdentifier)).toEqual([
      { group: 'apps', resource: 'deployments', name: 'cluster-proxy-proxy-agent', namespace: 'open-cluster-management-cluster-proxy' },
    ]);
    expect(deploymentFeedbackConfigs(msaAgentManifests('cluster1')).map((c) => c.resourceIdentifier)).toEqual([
      { group: 'apps', resource: 'deployments', name: 'managed-serviceaccount-addon-agent', namespace: 'open-cluster-management-managed-serviceaccount' },
    ]);
  });
});

describe('Available from Deployment feedback', () => {
  const deps = agentDeployments(manifests);

  it('reads the integer values the work agent reported for one Deployment', () => {
    expect(deploymentFeedback(work({ 'demo-agent': { ReadyReplicas: 1, Replicas: 1, AvailableReplicas: 1 } }), { namespace: NS, name: 'demo-agent' })).toEqual({
      ReadyReplicas: 1,
      Replicas: 1,
      AvailableReplicas: 1,
    });
    expect(deploymentFeedback(work({ 'demo-agent': null }), { namespace: NS, name: 'demo-agent' })).toBeNull();
    expect(deploymentFeedback(work({ 'demo-agent': { Replicas: 1 } }), { namespace: 'elsewhere', name: 'demo-agent' })).toBeNull();
    expect(deploymentFeedback(null, { namespace: NS, name: 'demo-agent' })).toBeNull();
  });

  it('is True when every Deployment has a ready replica', () => {
    const c = deploymentAvailability('demo', deps, work({ 'demo-agent': { ReadyReplicas: 1, Replicas: 1, AvailableReplicas: 1 } }));
    expect(c).toMatchObject({ type: 'Available', status: 'True', reason: 'ProbeAvailable' });
    expect(c.message).toContain('demo-agent 1/1 ready');
  });

  it('is False naming the Deployment and its numbers when none of its replicas is ready', () => {
    // A Deployment's status leaves out zero counts: only Replicas comes back.
    const c = deploymentAvailability('demo', deps, work({ 'demo-agent': { Replicas: 1 } }));
    expect(c).toMatchObject({ status: 'False', reason: 'ProbeUnavailable' });
    expect(c.message).toBe(`Deployment ${NS}/demo-agent has no ready pod: 0 of 1 replicas ready, 0 available`);
    const two = agentDeployments([...manifests, deployment('second')]);
    const mixed = deploymentAvailability('demo', two, work({ 'demo-agent': { ReadyReplicas: 1, Replicas: 1 }, second: { Replicas: 1 } }));
    expect(mixed.status).toBe('False');
    expect(mixed.message).toContain(`${NS}/second`);
  });

  it('is Unknown until the work is applied and every Deployment has feedback', () => {
    expect(deploymentAvailability('demo', deps, null)).toMatchObject({ status: 'Unknown', reason: 'WorkNotApplied' });
    expect(deploymentAvailability('demo', deps, work({ 'demo-agent': { ReadyReplicas: 1, Replicas: 1 } }, null))).toMatchObject({
      status: 'Unknown',
      reason: 'WorkNotApplied',
    });
    const c = deploymentAvailability('demo', deps, work({ 'demo-agent': null }));
    expect(c).toMatchObject({ status: 'Unknown', reason: 'NoProbeResult' });
    expect(c.message).toContain(`Deployment ${NS}/demo-agent`);
    const two = agentDeployments([...manifests, deployment('second')]);
    expect(deploymentAvailability('demo', two, work({ 'demo-agent': { ReadyReplicas: 1, Replicas: 1 } })).status).toBe('Unknown');
  });

  it('is False when the work could not be applied', () => {
    const c = deploymentAvailability('demo', deps, work({ 'demo-agent': null }, 'False'));
    expect(c).toMatchObject({ status: 'False', reason: 'WorkApplyFailed' });
    expect(c.message).toContain('forbidden');
  });

  it('does not wait for Deployments written with zero replicas, nor for an agent without Deployments', () => {
    const withIdle = agentDeployments([...manifests, deployment('idle', 0)]);
    expect(deploymentAvailability('demo', withIdle, work({ 'demo-agent': { ReadyReplicas: 1, Replicas: 1 } })).status).toBe('True');
    expect(deploymentAvailability('demo', [], null)).toMatchObject({ status: 'True', reason: 'ProbeAvailable' });
  });
});

describe('the manager with Deployment health', () => {
  const ready = work({ 'demo-agent': { ReadyReplicas: 1, Replicas: 1, AvailableReplicas: 1 } });

  it('leaves Available alone while the cluster itself is Unknown', () => {
    const lost = { status: { conditions: [{ type: 'ManagedClusterConditionAvailable', status: 'Unknown' as const, reason: 'Lost', message: 'm' }] } };
    expect(managerAvailability(addon, lost, manifests, ready)).toBeNull();
    const fine = { status: { conditions: [{ type: 'ManagedClusterConditionAvailable', status: 'True' as const, reason: 'Ok', message: 'm' }] } };
    expect(managerAvailability(addon, fine, manifests, ready)?.status).toBe('True');
  });

  it('publishes mode Customized and the Available it judged, once', () => {
    const available = managerAvailability(addon, undefined, manifests, ready);
    const status = desiredAddonStatus(addon, mca, ready, { available })!;
    expect(status.healthCheck).toEqual({ mode: 'Customized' });
    expect(status.conditions?.find((c) => c.type === 'Available')).toMatchObject({ status: 'True', reason: 'ProbeAvailable' });
    expect(desiredAddonStatus(addon, { ...mca, status }, ready, { available })).toBeNull();
    const notReady = managerAvailability(addon, undefined, manifests, work({ 'demo-agent': { Replicas: 1 } }));
    expect(desiredAddonStatus(addon, { ...mca, status }, ready, { available: notReady })?.conditions?.find((c) => c.type === 'Available')?.status).toBe(
      'False',
    );
  });
});
