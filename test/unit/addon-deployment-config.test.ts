import { describe, expect, it } from 'vitest';
import {
  ADC_GROUP,
  ADC_RESOURCE,
  configSpecHashes,
  configStatus,
  desiredDeploymentConfig,
  goJson,
  specHash,
  WORK_CONFIG_SPEC_HASH_ANNOTATION,
  withDesiredConfig,
  type ConfigReference,
} from '../../src/addons/framework/deployment-config.js';
import { clusterManagementAddOn, deployWork, desiredAddonStatus, type ManagedClusterAddOn } from '../../src/addons/framework/manager.js';
import type { AddonDefinition } from '../../src/addons/framework/types.js';
import type { KubeObject } from '../../src/kube/objects.js';

const ADC = { group: ADC_GROUP, resource: ADC_RESOURCE };

describe('AddOnDeploymentConfig spec hash', () => {
  it('equals the hash upstream (Go encoding/json + sha256 over the non-meta fields) computes', () => {
    // Golden value from a Go program doing what addon-framework's GetSpecHash does on this object.
    const adc = {
      apiVersion: 'addon.open-cluster-management.io/v1alpha1',
      kind: 'AddOnDeploymentConfig',
      metadata: { name: 'x', namespace: 'y', generation: 3 },
      spec: {
        registries: [{ source: 'quay.io/ocm', mirror: 'mirror.local/ocm' }],
        customizedVariables: [
          { name: 'replicas', value: '2' },
          { name: 'note', value: 'a<b & c>d \u2028 \t' },
        ],
        resourceRequirements: [{ containerID: 'deployments:*:*', resources: { requests: { cpu: '10m', memory: 1024 } } }],
        nodePlacement: { nodeSelector: { zone: 'a' }, tolerations: [{ key: 'k', operator: 'Exists', tolerationSeconds: 30 }] },
      },
    };
    expect(specHash(adc)).toBe('efff150823f5cb30405e43c647818887c404b170636cd4b9391be96c33183946');
    // metadata and status do not count
    expect(specHash({ ...adc, metadata: { name: 'other' }, status: { x: 1 } })).toBe(specHash(adc));
    expect(specHash({ ...adc, spec: { ...adc.spec, agentInstallNamespace: 'ns' } })).not.toBe(specHash(adc));
  });

  it('writes JSON as Go does: sorted keys, HTML characters and control characters escaped', () => {
    expect(goJson({ b: 1, a: ['<&>', null], c: { z: true, y: '\u0008"\\' } })).toBe(
      '{"a":["\\u003c\\u0026\\u003e",null],"b":1,"c":{"y":"\\u0008\\"\\\\","z":true}}',
    );
  });
});

describe('which AddOnDeploymentConfig a cluster uses', () => {
  const supported = [{ ...ADC, defaultConfig: { namespace: 'open-cluster-management', name: 'default' } }];
  it('the cluster own (spec.configs) over the default; the first of several', () => {
    expect(desiredDeploymentConfig(supported, [])).toEqual({ namespace: 'open-cluster-management', name: 'default' });
    expect(
      desiredDeploymentConfig(supported, [
        { ...ADC, namespace: 'cluster1', name: 'mine' },
        { ...ADC, namespace: 'cluster1', name: 'second' },
      ]),
    ).toEqual({ namespace: 'cluster1', name: 'mine' });
    expect(desiredDeploymentConfig(supported, [{ group: 'other.io', resource: 'addondeploymentconfigs', namespace: 'x', name: 'y' }])).toEqual({
      namespace: 'open-cluster-management',
      name: 'default',
    });
    expect(desiredDeploymentConfig([ADC], undefined)).toBeNull();
    expect(desiredDeploymentConfig(undefined, undefined)).toBeNull();
  });
});

describe('configReferences', () => {
  const referent = { namespace: 'cluster1', name: 'mine' };
  const applied = { ...referent, specHash: 'old' };
  const current: ConfigReference[] = [
    { group: 'example.io', resource: 'others', name: 'kept', desiredConfig: { name: 'kept', specHash: 'h' } },
    { ...ADC, ...referent, desiredConfig: applied, lastAppliedConfig: applied, lastObservedGeneration: 1 },
  ];

  it('sets the desired hash and keeps the lastAppliedConfig of the same config and the references of other types', () => {
    const refs = withDesiredConfig(current, { referent, specHash: 'new', generation: 2, spec: {} });
    expect(refs).toEqual([
      current[0],
      { ...ADC, ...referent, desiredConfig: { ...referent, specHash: 'new' }, lastAppliedConfig: applied, lastObservedGeneration: 2 },
    ]);
    const switched = withDesiredConfig(current, { referent: { namespace: 'cluster1', name: 'another' }, specHash: 'z', spec: {} });
    expect(switched[1]?.lastAppliedConfig).toBeUndefined();
    expect(withDesiredConfig(current, null)).toEqual([current[0]]);
  });

  it('keys the work annotation as upstream: <resource>.<group>/<namespace>/<name>', () => {
    expect(configSpecHashes(withDesiredConfig([], { referent, specHash: 'abc', spec: {} }))).toEqual({
      'addondeploymentconfigs.addon.open-cluster-management.io/cluster1/mine': 'abc',
    });
  });

  const work = (hashes: Record<string, string> | undefined, generation = 2, observed = 2): KubeObject =>
    ({
      apiVersion: 'work.open-cluster-management.io/v1',
      kind: 'ManifestWork',
      metadata: {
        name: 'addon-x-deploy-0',
        namespace: 'cluster1',
        generation,
        ...(hashes ? { annotations: { [WORK_CONFIG_SPEC_HASH_ANNOTATION]: JSON.stringify(hashes) } } : {}),
      },
      status: {
        conditions: [
          { type: 'Applied', status: 'True', reason: 'x', message: '', observedGeneration: observed },
          { type: 'Available', status: 'True', reason: 'x', message: '', observedGeneration: observed },
        ],
      },
    }) as KubeObject;

  it('records lastAppliedConfig only once the work carrying the desired hash is applied for its generation', () => {
    const refs = withDesiredConfig(current, { referent, specHash: 'new', spec: {} });
    const hashes = configSpecHashes(refs);
    const done = configStatus({ references: refs }, work(hashes));
    expect(done.references.find((r) => r.resource === ADC_RESOURCE)?.lastAppliedConfig).toEqual({ ...referent, specHash: 'new' });
    expect(done.conditions.find((c) => c.type === 'Progressing')).toMatchObject({ status: 'False', reason: 'Completed' });
    expect(done.conditions.find((c) => c.type === 'Configured')).toMatchObject({ status: 'True' });

    for (const pending of [work({ ...hashes, 'addondeploymentconfigs.addon.open-cluster-management.io/cluster1/mine': 'old' }), work(hashes, 3, 2), null]) {
      const s = configStatus({ references: refs }, pending);
      expect(s.references.find((r) => r.resource === ADC_RESOURCE)?.lastAppliedConfig).toEqual(applied);
      expect(s.conditions.find((c) => c.type === 'Progressing')?.status).toBe('True');
    }
    // Nothing delivered to the cluster (a hub-only addon): applied at once.
    expect(configStatus({ references: refs, noManifests: true }, null).references[1]?.lastAppliedConfig?.specHash).toBe('new');
  });

  it('reports an unusable config in Configured and records nothing as applied', () => {
    const s = configStatus({ references: current, problem: 'AddOnDeploymentConfig cluster1/mine does not exist' }, null);
    expect(s.conditions).toEqual([
      { type: 'Configured', status: 'False', reason: 'ConfigurationsNotValid', message: 'AddOnDeploymentConfig cluster1/mine does not exist' },
    ]);
    expect(s.references).toBe(current);
  });
});

describe('the manager objects with AddOnDeploymentConfig', () => {
  const addon: AddonDefinition = { name: 'demo', displayName: 'demo', description: 'd', installNamespace: 'demo-ns', agentManifests: async () => [] };
  const supportedOf = (cma: KubeObject) => (cma as unknown as { spec: { supportedConfigs: unknown[] } }).spec.supportedConfigs;

  it('the ClusterManagementAddOn declares the config, with the addon default or the one a user set', () => {
    expect(supportedOf(clusterManagementAddOn(addon))).toEqual([ADC]);
    const userSet = clusterManagementAddOn(addon, {
      ...clusterManagementAddOn(addon),
      spec: { supportedConfigs: [{ ...ADC, defaultConfig: { namespace: 'a', name: 'b' } }] },
    });
    expect(supportedOf(userSet)).toEqual([{ ...ADC, defaultConfig: { namespace: 'a', name: 'b' } }]);
    const own = clusterManagementAddOn({ ...addon, defaultDeploymentConfig: { namespace: 'x', name: 'y' } }, userSet);
    expect(supportedOf(own)).toEqual([{ ...ADC, defaultConfig: { namespace: 'x', name: 'y' } }]);
  });

  it('the work carries the config hashes; the status has configReferences, supportedConfigs and the agent namespace', () => {
    const mca: ManagedClusterAddOn = {
      apiVersion: 'addon.open-cluster-management.io/v1alpha1',
      kind: 'ManagedClusterAddOn',
      metadata: { name: 'demo', namespace: 'cluster1', uid: 'u' },
    };
    const refs = withDesiredConfig([], { referent: { namespace: 'cluster1', name: 'c' }, specHash: 'h1', spec: {} });
    const w = deployWork(addon, mca, [], refs);
    expect(JSON.parse(w.metadata.annotations![WORK_CONFIG_SPEC_HASH_ANNOTATION]!)).toEqual({
      'addondeploymentconfigs.addon.open-cluster-management.io/cluster1/c': 'h1',
    });
    expect(deployWork(addon, mca, []).metadata.annotations).toBeUndefined();

    const status = desiredAddonStatus(addon, mca, null, { config: { references: refs }, installNamespace: 'elsewhere' })!;
    expect(status.namespace).toBe('elsewhere');
    expect(status.configReferences).toEqual(refs);
    expect(status.supportedConfigs).toEqual([ADC]);
    expect(desiredAddonStatus(addon, { ...mca, status }, null, { config: { references: refs }, installNamespace: 'elsewhere' })).toBeNull();
    // Without config state (older callers) nothing about configs is written.
    expect(desiredAddonStatus(addon, mca, null)!.configReferences).toBeUndefined();
  });
});
