import { describe, expect, it } from 'vitest';
import { defaultLabConfig, parseLabConfig } from '../../src/config/index.js';
import { acceptedGates } from '../../src/config/feature-gates.js';
import { parseGateFlag, withFeatureGates } from '../../src/config/feature-gate-flags.js';
import { ExitCode, InvalidInputError } from '../../src/errors.js';
import { clusterManagerObject, hubDeployments } from '../../src/ocm/cluster-manager.js';
import { HUB_DEPLOYMENTS } from '../../src/ocm/constants.js';
import { klusterletObject } from '../../src/ocm/klusterlet.js';
import { planInstalls, renderInstalls } from '../../src/cli/dry-run/installs.js';
import { VALID_LAB_FILE } from '../support/lab-file.js';
import { addonVocabulary } from '../../src/addons/registry.js';

function thrown(run: () => unknown): InvalidInputError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidInputError);
    return err as InvalidInputError;
  }
  throw new Error('expected an InvalidInputError');
}

const withGates = (gates: string, ocm = '') => `${VALID_LAB_FILE}${ocm ? `ocmVersion: ${ocm}\n` : ''}featureGates:\n${gates}`;

describe('OCM feature gates', () => {
  it("lists each line's gates per side: v1.3.x adds the placement controller's PlacementDebugServer", () => {
    const hub121 = acceptedGates('v1.2.1', 'hub');
    expect(hub121).toContain('ManifestWorkReplicaSet');
    expect(hub121).toContain('ClusterImporter');
    expect(hub121).toContain('CloudEventsDrivers');
    expect(hub121).not.toContain('PlacementDebugServer');
    expect(acceptedGates('v1.3.1', 'hub')).toEqual([...hub121, 'PlacementDebugServer'].sort());
    expect(acceptedGates('v1.2.1', 'klusterlet')).toEqual([
      'AddonManagement',
      'ClusterClaim',
      'ClusterProperty',
      'ExecutorValidatingCaches',
      'MultipleHubs',
      'RawFeedbackJsonString',
      'V1beta1CSRAPICompatibility',
    ]);
  });

  it('reads featureGates from the lab file; ClusterProfile under hub is the clusterProfile switch', () => {
    const config = parseLabConfig(
      withGates('  hub: {ManifestWorkReplicaSet: true, ClusterProfile: false}\n  klusterlet: {RawFeedbackJsonString: true}\n'),
      'lab.yaml',
      addonVocabulary(),
    );
    expect(config.featureGates).toEqual({ hub: { ManifestWorkReplicaSet: true }, klusterlet: { RawFeedbackJsonString: true } });
    expect(config.clusterProfile).toBe(false);
    expect(parseLabConfig(VALID_LAB_FILE, 'lab.yaml', addonVocabulary())).not.toHaveProperty('featureGates');
  });

  it('refuses a gate the named line does not know, naming the gate, the line and the accepted gates', () => {
    const err = thrown(() =>
      parseLabConfig(withGates('  hub: {PlacementDebugServer: true, ManifestWorkReplicaSet: true}\n', 'v1.2.1'), 'lab.yaml', addonVocabulary()),
    );
    expect(err.exitCode).toBe(ExitCode.invalidInput);
    expect(err.message).toContain(
      'lab.yaml:16: featureGates.hub.PlacementDebugServer = true: PlacementDebugServer is not a hub (ClusterManager) feature gate of OCM v1.2.1',
    );
    expect(err.message).toContain(`accepted: ${acceptedGates('v1.2.1', 'hub').join(', ')}`);
    expect(err.message).not.toContain('ManifestWorkReplicaSet =');
    expect(() => parseLabConfig(withGates('  hub: {PlacementDebugServer: true}\n', 'v1.3'), 'lab.yaml', addonVocabulary())).not.toThrow();
  });

  it('refuses shapes that are not Name: true|false, and ClusterProfile set against clusterProfile', () => {
    const bad = thrown(() => parseLabConfig(withGates('  hub: {ManifestWorkReplicaSet: "yes", lower: true}\n  spoke: {}\n'), 'lab.yaml', addonVocabulary()));
    expect(bad.message).toContain('featureGates.hub.ManifestWorkReplicaSet = "yes": must be true or false');
    expect(bad.message).toContain('featureGates.hub.lower = true: is not a feature gate name (OCM names them in UpperCamelCase');
    expect(bad.message).toContain('featureGates.spoke');
    const clash = thrown(() => parseLabConfig(`${withGates('  hub: {ClusterProfile: false}\n')}clusterProfile: true\n`, 'lab.yaml', addonVocabulary()));
    expect(clash.message).toContain('featureGates.hub.ClusterProfile = false: is the gate clusterProfile: true sets');
  });

  it('takes --hub-feature-gates and --klusterlet-feature-gates over the file, checked against the line up runs', () => {
    const base = { ...defaultLabConfig(), featureGates: { hub: { ManifestWorkReplicaSet: true } } };
    const config = withFeatureGates(base, {
      'hub-feature-gates': ['ManifestWorkReplicaSet=false,ClusterImporter'],
      'klusterlet-feature-gates': ['ClusterClaim=false'],
    });
    expect(config.featureGates).toEqual({ hub: { ManifestWorkReplicaSet: false, ClusterImporter: true }, klusterlet: { ClusterClaim: false } });
    expect(withFeatureGates(defaultLabConfig(), { 'hub-feature-gates': ['ClusterProfile=false'] })).toMatchObject({ clusterProfile: false });
    expect(withFeatureGates(defaultLabConfig(), {})).not.toHaveProperty('featureGates');

    const err = thrown(() => withFeatureGates(defaultLabConfig(), { 'klusterlet-feature-gates': ['ManifestWorkReplicaSet=true'] }));
    expect(err.exitCode).toBe(ExitCode.invalidInput);
    expect(err.message).toBe(
      `--klusterlet-feature-gates: ManifestWorkReplicaSet is not a klusterlet feature gate of OCM v1.2.1; accepted: ${acceptedGates('v1.2.1', 'klusterlet').join(', ')}`,
    );
    // A file gate of v1.3.x only, brought up on v1.2.1.
    const fileErr = thrown(() => withFeatureGates({ ...defaultLabConfig(), featureGates: { hub: { PlacementDebugServer: true } } }, {}));
    expect(fileErr.message).toMatch(/^featureGates\.hub: PlacementDebugServer is not a hub \(ClusterManager\) feature gate of OCM v1\.2\.1; accepted: /);
    expect(thrown(() => parseGateFlag('hub-feature-gates', ['ManifestWorkReplicaSet=yes'])).message).toContain(
      '--hub-feature-gates ManifestWorkReplicaSet=yes',
    );
  });

  it("renders the gates into each ClusterManager and Klusterlet component that knows them, as upstream's API names them", () => {
    const hub = clusterManagerObject('v1.3.1', {
      clusterProfile: true,
      featureGates: { ManifestWorkReplicaSet: true, ResourceCleanup: false, AddonManagement: true, PlacementDebugServer: true },
    }).spec;
    expect(hub).toMatchObject({
      registrationConfiguration: {
        featureGates: [
          { feature: 'ResourceCleanup', mode: 'Disable' },
          { feature: 'ClusterProfile', mode: 'Enable' },
        ],
      },
      workConfiguration: { featureGates: [{ feature: 'ManifestWorkReplicaSet', mode: 'Enable' }] },
      addOnManagerConfiguration: { featureGates: [{ feature: 'AddonManagement', mode: 'Enable' }] },
      placementConfiguration: { featureGates: [{ feature: 'PlacementDebugServer', mode: 'Enable' }] },
    });
    expect(clusterManagerObject('v1.2.1', { featureGates: { ManifestWorkReplicaSet: true } }).spec).not.toHaveProperty('registrationConfiguration');

    const spoke = klusterletObject('c1', 'https://c1', 'v1.2.1', { ClusterClaim: false, RawFeedbackJsonString: true }).spec;
    expect(spoke).toMatchObject({
      registrationConfiguration: { featureGates: [{ feature: 'ClusterClaim', mode: 'Disable' }] },
      workConfiguration: { featureGates: [{ feature: 'RawFeedbackJsonString', mode: 'Enable' }] },
    });
    expect(klusterletObject('c1', 'https://c1', 'v1.2.1').spec).not.toHaveProperty('workConfiguration');
  });

  it('up --dry-run shows the gates of the ClusterManager and the Klusterlets', () => {
    const plan = planInstalls({ ...defaultLabConfig(), featureGates: { hub: { ManifestWorkReplicaSet: true }, klusterlet: { RawFeedbackJsonString: true } } });
    expect(plan.ocm.hub.clusterManager.featureGates).toEqual({ registration: ['ClusterProfile=Enable'], work: ['ManifestWorkReplicaSet=Enable'] });
    const text = renderInstalls(plan, 'up', false);
    expect(text).toContain('feature gates: registration ClusterProfile=Enable; work ManifestWorkReplicaSet=Enable');
    expect(text).toContain('feature gates: work RawFeedbackJsonString=Enable');
  });

  it("expects the hub's work controller where ManifestWorkReplicaSet or CleanUpCompletedManifestWork turns it on, as the operator runs it", () => {
    expect(hubDeployments()).toEqual([...HUB_DEPLOYMENTS]);
    expect(hubDeployments({ ManifestWorkReplicaSet: false, ClusterImporter: true })).not.toContain('cluster-manager-work-controller');
    expect(hubDeployments({ ManifestWorkReplicaSet: true })).toEqual([...HUB_DEPLOYMENTS, 'cluster-manager-work-controller']);
    expect(hubDeployments({ CleanUpCompletedManifestWork: true })).toContain('cluster-manager-work-controller');
    const plan = planInstalls({ ...defaultLabConfig(), featureGates: { hub: { ManifestWorkReplicaSet: true } } });
    expect(plan.ocm.hub.clusterManager.deployments).toContain('cluster-manager-work-controller');
    expect(planInstalls(defaultLabConfig()).ocm.hub.clusterManager.deployments).toEqual([...HUB_DEPLOYMENTS]);
  });
});
