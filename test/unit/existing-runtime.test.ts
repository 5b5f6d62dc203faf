import fs from 'node:fs/promises';
import path from 'node:path';
import YAML from 'yaml';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { defaultLabConfig } from '../../src/config/index.js';
import { InvalidInputError } from '../../src/errors.js';
import { clusterSpecs, parseClusterSpec, resolveContext } from '../../src/runtime/existing/contexts.js';
import { existingLabConfig } from '../../src/runtime/existing/runtime.js';
import { whyStillThere } from '../../src/ocm/removal.js';
import { useTempDir } from '../support/temp-dir.js';

describe('existing runtime: cluster names from contexts', () => {
  it('names a cluster after its context when that is a DNS label, else takes CTX=NAME', () => {
    expect(parseClusterSpec('hub', true)).toEqual({ context: 'hub', name: 'hub', hub: true });
    expect(parseClusterSpec('arn:aws:eks:eu-west-1:1:cluster/prod=prod', false)).toEqual({
      context: 'arn:aws:eks:eu-west-1:1:cluster/prod',
      name: 'prod',
      hub: false,
    });
    expect(parseClusterSpec('a=b=c1', false)).toEqual({ context: 'a=b', name: 'c1', hub: false });
    expect(() => parseClusterSpec('kind-Hub', true)).toThrow(/--hub-context kind-Hub: cluster name 'kind-Hub' is not a DNS label/);
    expect(() => parseClusterSpec('gke_p_z_c', false)).toThrow(InvalidInputError);
    expect(() => parseClusterSpec('ctx=kube-system', false)).toThrow(/namespace every cluster/);
    expect(() => parseClusterSpec('ctx=open-cluster-management-x', false)).toThrow(/namespace every cluster or OCM/);
  });

  it('wants a spoke, and different contexts and names', () => {
    expect(() => clusterSpecs({ kubeconfig: 'k', hubContext: 'hub', spokeContexts: [] })).toThrow(/at least one --spoke-context/);
    expect(() => clusterSpecs({ kubeconfig: 'k', hubContext: 'hub', spokeContexts: ['hub'] })).toThrow(/context 'hub' is given twice/);
    expect(() => clusterSpecs({ kubeconfig: 'k', hubContext: 'a=x', spokeContexts: ['b=x'] })).toThrow(/cluster name 'x' is given twice/);
    expect(clusterSpecs({ kubeconfig: 'k', hubContext: 'h', spokeContexts: ['c1', 'c2'] }).map((s) => [s.name, s.hub])).toEqual([
      ['h', true],
      ['c1', false],
      ['c2', false],
    ]);
  });

  it('builds the lab config: everything from the lab file but the clusters, which are the contexts in one VPC', () => {
    const base = { ...defaultLabConfig(), name: 'mine', addons: ['cluster-proxy' as const] };
    const config = existingLabConfig(base, clusterSpecs({ kubeconfig: 'k', hubContext: 'h', spokeContexts: ['c1'] }));
    expect(config).toMatchObject({
      name: 'mine',
      addons: ['cluster-proxy'],
      vpcs: [{ name: 'existing' }],
      clusters: [
        { name: 'h', vpc: 'existing', hub: true },
        { name: 'c1', vpc: 'existing', hub: false },
      ],
    });
  });
});

describe('existing runtime: reading a context of the user kubeconfig', () => {
  const tmp = useTempDir('ocm-lab-existing-unit-');
  let file: string;
  beforeAll(async () => {
    await fs.writeFile(path.join(tmp.path, 'ca.crt'), 'CA PEM');
    await fs.writeFile(path.join(tmp.path, 'token'), 'tok-from-file\n');
    const b64 = (t: string) => Buffer.from(t).toString('base64');
    file = path.join(tmp.path, 'config');
    await fs.writeFile(
      file,
      YAML.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [
          { name: 'c-a', cluster: { server: 'https://10.0.0.1:6443', 'certificate-authority': 'ca.crt' } },
          { name: 'c-b', cluster: { server: 'https://10.0.0.2:6443', 'certificate-authority-data': b64('CA B') } },
          { name: 'c-noca', cluster: { server: 'https://10.0.0.3:6443', 'insecure-skip-tls-verify': true } },
        ],
        users: [
          { name: 'u-cert', user: { 'client-certificate-data': b64('CERT'), 'client-key-data': b64('KEY') } },
          { name: 'u-tokenfile', user: { tokenFile: 'token' } },
          { name: 'u-exec', user: { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'aws', interactiveMode: 'Never' } } },
          { name: 'u-authprovider', user: { 'auth-provider': { name: 'gcp' } } },
        ],
        contexts: [
          { name: 'a', context: { cluster: 'c-a', user: 'u-cert' } },
          { name: 'b', context: { cluster: 'c-b', user: 'u-tokenfile' } },
          { name: 'exec', context: { cluster: 'c-b', user: 'u-exec' } },
          { name: 'authprovider', context: { cluster: 'c-b', user: 'u-authprovider' } },
          { name: 'noca', context: { cluster: 'c-noca', user: 'u-cert' } },
        ],
      }),
    );
  });

  it('reads certificates and tokens, inline or from files relative to the kubeconfig', async () => {
    expect((await resolveContext(file, 'a')).entry).toEqual({ server: 'https://10.0.0.1:6443', caPem: 'CA PEM', clientCertPem: 'CERT', clientKeyPem: 'KEY' });
    expect((await resolveContext(file, 'b')).endpoint).toEqual({ server: 'https://10.0.0.2:6443', caPem: 'CA B', token: 'tok-from-file' });
  });

  it('keeps a credential plugin, not a token, in the entry the lab writes', async () => {
    const { entry, endpoint } = await resolveContext(file, 'exec');
    expect(entry).toEqual({
      server: 'https://10.0.0.2:6443',
      caPem: 'CA B',
      exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'aws', interactiveMode: 'Never' },
    });
    expect(endpoint.credentials?.config.command).toBe('aws');
    expect(endpoint.token).toBeUndefined();
  });

  it('refuses what the lab cannot use, saying why (exit 2)', async () => {
    await expect(resolveContext(file, 'nope')).rejects.toThrow(/has no context 'nope'.*|its contexts: a, b, exec, authprovider, noca/);
    await expect(resolveContext(file, 'authprovider')).rejects.toThrow(/auth provider, which ocm-lab does not run/);
    await expect(resolveContext(file, 'noca')).rejects.toThrow(/names no certificate authority/);
    await expect(resolveContext(path.join(tmp.path, 'missing'), 'a')).rejects.toBeInstanceOf(InvalidInputError);
  });
});

describe('uninstall: what holds an object that does not go away', () => {
  it('names its finalizers and the conditions that block it', () => {
    const line = whyStillThere(
      {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: 'cluster1', deletionTimestamp: '2026-11-23T12:00:00Z', finalizers: [] },
        spec: { finalizers: ['kubernetes'] },
        status: {
          conditions: [
            {
              type: 'NamespaceContentRemaining',
              status: 'True',
              reason: 'SomeResourcesRemain',
              message: 'Some resources are remaining: manifestworks.work.open-cluster-management.io has 1 resource instances',
            },
          ],
        },
      },
      'Namespace cluster1',
    );
    expect(line).toContain('terminating since 2026-11-23T12:00:00Z');
    expect(line).toContain('finalizers: kubernetes');
    expect(line).toContain('NamespaceContentRemaining=True (SomeResourcesRemain: Some resources are remaining: manifestworks');
  });
});

describe('the runtime of a lab that exists comes from its state', () => {
  const home = useTempDir('ocm-lab-select-unit-');
  beforeAll(async () => {
    vi.stubEnv('OCM_LAB_HOME', home.path);
    // auto for a new lab is $OCM_LAB_RUNTIME, else kind wherever Docker and kind answer: pinned, so the answer is not the machine's.
    vi.stubEnv('OCM_LAB_RUNTIME', 'local');
    await fs.mkdir(path.join(home.path, 'mine'), { recursive: true });
    await fs.writeFile(path.join(home.path, 'mine', 'state.json'), JSON.stringify({ version: 1, lab: 'mine', runtime: 'existing' }));
  });
  afterAll(() => {
    vi.unstubAllEnvs();
  });

  it('auto picks the recorded runtime, and $OCM_LAB_RUNTIME for a lab that does not exist', async () => {
    const { labRuntimeName, selectRuntime } = await import('../../src/runtime/registry.js');
    expect(await labRuntimeName('mine')).toBe('existing');
    expect(await labRuntimeName('other')).toBeNull();
    expect((await selectRuntime('auto', { labName: 'mine' })).name).toBe('existing');
    expect((await selectRuntime('auto', { labName: 'other' })).name).toBe('local');
    expect((await selectRuntime('local', { labName: 'mine' })).name).toBe('local');
  });

  it('status of a lab without a state file is what the runtime auto picks would say (answered without loading it)', async () => {
    const { labStatus } = await import('../../src/lab/lifecycle.js');
    const { resolveRuntime, runtimeNamed } = await import('../../src/runtime/registry.js');
    const config = { ...defaultLabConfig(), name: 'other' };
    const picked = await runtimeNamed((await resolveRuntime('auto', 'other')).name);
    expect(await labStatus(config)).toEqual(await picked.status(config));
    expect((await labStatus(config)).exists).toBe(false);
  });
});
