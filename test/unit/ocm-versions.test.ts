import { describe, expect, it } from 'vitest';
import { defaultLabConfig, parseLabConfig, resolveOcmVersion, withVersionFlags } from '../../src/config/index.js';
import { ExitCode, InvalidInputError } from '../../src/errors.js';
import { OCM_RELEASES, OCM_VERSION, ocmOnKubernetesProblem, recipesFor } from '../../src/provision/index.js';
import { reshapeRefusal } from '../../src/runtime/reshape.js';
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

describe('OCM versions', () => {
  it('lists v1.3.1 and v1.2.1, newest first; the default stays v1.2.1 until the lead moves it', () => {
    expect(OCM_RELEASES.map((r) => r.ocm)).toEqual(['v1.3.1', 'v1.2.1']);
    expect(OCM_VERSION).toBe('v1.2.1');
    expect(defaultLabConfig().ocmVersion).toBe('v1.2.1');
  });

  it('takes a version with or without v, and a minor as its newest patch', () => {
    expect(resolveOcmVersion('v1.3.1')).toBe('v1.3.1');
    expect(resolveOcmVersion('1.2.1')).toBe('v1.2.1');
    expect(resolveOcmVersion('v1.3')).toBe('v1.3.1');
    expect(resolveOcmVersion('1.2')).toBe('v1.2.1');
    for (const unknown of ['v1.3.0', 'v1.4', 'v1', 'latest', '', 'v1.3.1.0']) expect(resolveOcmVersion(unknown)).toBeUndefined();
  });

  it('--ocm-version sets the lab OCM; an unknown one exits 2 listing the supported ones', () => {
    expect(withVersionFlags(defaultLabConfig(), { 'ocm-version': 'v1.3' }).ocmVersion).toBe('v1.3.1');
    expect(withVersionFlags(defaultLabConfig(), {}).ocmVersion).toBe('v1.2.1');
    const err = thrown(() => withVersionFlags(defaultLabConfig(), { 'ocm-version': 'v1.4.0' }));
    expect(err.exitCode).toBe(ExitCode.invalidInput);
    expect(err.message).toContain('--ocm-version v1.4.0');
    expect(err.message).toContain('v1.3.1, v1.2.1');
  });

  it('the lab file takes a minor and records its patch; an unknown one is a problem naming the supported ones', () => {
    expect(parseLabConfig(`ocmVersion: v1.3\n${VALID_LAB_FILE}`, '/labs/lab.yaml', addonVocabulary()).ocmVersion).toBe('v1.3.1');
    expect(parseLabConfig(`ocmVersion: v1.2.1\n${VALID_LAB_FILE}`, '/labs/lab.yaml', addonVocabulary()).ocmVersion).toBe('v1.2.1');
    for (const bad of ['v1.1', 'v1.3.0', 'latest']) {
      const err = thrown(() => parseLabConfig(`ocmVersion: ${bad}\n${VALID_LAB_FILE}`, '/labs/lab.yaml', addonVocabulary()));
      expect(err.message).toContain(`/labs/lab.yaml:1: ocmVersion = "${bad}": is not a supported OCM version; supported: v1.3.1, v1.2.1`);
    }
    // YAML reads 1.3 as a number: the general advice to quote it.
    expect(thrown(() => parseLabConfig(`ocmVersion: 1.3\n${VALID_LAB_FILE}`, '/labs/lab.yaml', addonVocabulary())).message).toContain('quote it');
  });

  it('OCM runs on a Kubernetes at most one minor older than its client libraries, and says why not', () => {
    expect(ocmOnKubernetesProblem('v1.3.1', 'v1.34.4')).toBeUndefined();
    expect(ocmOnKubernetesProblem('v1.2.1', 'v1.37.2')).toBeUndefined();
    expect(ocmOnKubernetesProblem('v1.3.1', 'v1.33.0')).toContain('2 minors newer than Kubernetes v1.33.0');
    expect(ocmOnKubernetesProblem('v1.9.9', 'v1.37.2')).toContain('not one of v1.3.1, v1.2.1');
  });

  it('recipes build the lab OCM into a cache directory of its own', () => {
    const ocm = (version: string) => recipesFor({ ocm: version }).find((r) => r.family === 'ocm')!;
    expect(ocm('v1.3.1')).toMatchObject({ id: 'ocm-v1.3.1', version: 'v1.3.1', versionText: 'v1.3.1' });
    expect(ocm('v1.2.1').id).toBe('ocm-v1.2.1');
  });

  it('a running lab keeps its OCM: a downgrade is refused naming both versions, an upgrade is not done in place yet', () => {
    const on = (ocmVersion: string) => ({ ...defaultLabConfig(), ocmVersion });
    expect(reshapeRefusal(on('v1.2.1'), on('v1.2.1'))).toBeNull();
    expect(reshapeRefusal(on('v1.3.1'), on('v1.2.1'))).toBe(
      'it runs OCM v1.3.1, and OCM cannot be downgraded to v1.2.1 (clusteradm upgrade refuses a downgrade too)',
    );
    expect(reshapeRefusal(on('v1.2.1'), on('v1.3.1'))).toBe('it runs OCM v1.2.1, and upgrading it in place to v1.3.1 is not supported yet');
  });
});
