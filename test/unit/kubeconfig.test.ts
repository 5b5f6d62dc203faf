import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  KubeconfigError,
  kubeconfigContexts,
  kubeconfigFileOrigin,
  mergeKubeconfigText,
  readKubeconfig,
  renderKubeconfig,
  writeKubeconfig,
  type KubeconfigEntry,
} from '../../src/kube/kubeconfig.js';

const entry = (name: string, server = `https://10.0.0.1:6443`): KubeconfigEntry => ({
  name,
  server,
  caPem: '-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n',
  clientCertPem: 'CERT',
  clientKeyPem: 'KEY',
});

describe('kubeconfig', () => {
  it('names clusters, users and contexts after the lab clusters and embeds credentials', () => {
    const doc = YAML.parse(renderKubeconfig([entry('hub'), entry('cluster1')], 'hub'));
    expect(doc.contexts.map((c: { name: string }) => c.name)).toEqual(['hub', 'cluster1']);
    expect(doc['current-context']).toBe('hub');
    expect(Buffer.from(doc.users[0].user['client-key-data'], 'base64').toString()).toBe('KEY');
    expect(doc.clusters[1].cluster.server).toBe('https://10.0.0.1:6443');
  });

  it('merges into an existing kubeconfig, replacing only same-named entries', () => {
    const existing = YAML.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        { name: 'prod', cluster: { server: 'https://prod' } },
        { name: 'hub', cluster: { server: 'https://old' } },
      ],
      users: [{ name: 'prod', user: { token: 't' } }],
      contexts: [{ name: 'prod', context: { cluster: 'prod', user: 'prod' } }],
      'current-context': 'prod',
    });
    const { text, replaced } = mergeKubeconfigText(existing, [entry('hub', 'https://new:6443')]);
    const doc = YAML.parse(text);
    expect(replaced).toEqual(['hub']);
    expect(doc['current-context']).toBe('prod');
    expect(doc.clusters.map((c: { name: string }) => c.name)).toEqual(['prod', 'hub']);
    expect(doc.clusters[1].cluster.server).toBe('https://new:6443');
    expect(doc.users.find((u: { name: string }) => u.name === 'prod').user.token).toBe('t');
  });

  it('writes credentials with mode 0600 and leaves no temp file', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-kc-'));
    try {
      const file = path.join(dir, 'sub', 'kubeconfig');
      await writeKubeconfig(file, [entry('hub')]);
      expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
      expect(await fs.readdir(path.dirname(file))).toEqual(['kubeconfig']);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});

describe('readKubeconfig', () => {
  const b64 = (t: string) => Buffer.from(t).toString('base64');
  let dir: string;
  let file: string;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-kubeconfig-unit-'));
    await fs.mkdir(path.join(dir, 'pki'));
    await fs.writeFile(path.join(dir, 'pki', 'ca.crt'), 'CA FILE');
    await fs.writeFile(path.join(dir, 'pki', 'client.crt'), 'CERT FILE');
    await fs.writeFile(path.join(dir, 'pki', 'client.key'), 'KEY FILE');
    file = path.join(dir, 'config');
    await fs.writeFile(
      file,
      YAML.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        'current-context': 'files',
        clusters: [
          { name: 'c-data', cluster: { server: 'https://10.0.0.1:6443', 'certificate-authority-data': b64('CA DATA'), 'tls-server-name': 'api.example' } },
          { name: 'c-file', cluster: { server: 'https://10.0.0.2:6443', 'certificate-authority': 'pki/ca.crt' } },
          { name: 'c-noserver', cluster: { 'certificate-authority-data': b64('CA') } },
        ],
        users: [
          { name: 'u-data', user: { 'client-certificate-data': b64('CERT DATA'), 'client-key-data': b64('KEY DATA') } },
          { name: 'u-file', user: { 'client-certificate': 'pki/client.crt', 'client-key': path.join(dir, 'pki', 'client.key') } },
          { name: 'u-tokenfile', user: { tokenFile: 'token' } },
          { name: 'u-exec', user: { exec: { apiVersion: 'client.authentication.k8s.io/v1beta1', command: 'bin/aws', args: ['eks', 'get-token'] } } },
          { name: 'u-missing', user: { 'client-certificate': 'pki/absent.crt' } },
        ],
        contexts: [
          { name: 'data', context: { cluster: 'c-data', user: 'u-data', namespace: 'ns1' } },
          { name: 'files', context: { cluster: 'c-file', user: 'u-file' } },
          { name: 'tokenfile', context: { cluster: 'c-file', user: 'u-tokenfile' } },
          { name: 'exec', context: { cluster: 'c-data', user: 'u-exec' } },
          { name: 'noserver', context: { cluster: 'c-noserver', user: 'u-data' } },
          { name: 'missing', context: { cluster: 'c-data', user: 'u-missing' } },
        ],
      }),
    );
  });
  afterAll(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('decodes inline *-data fields', async () => {
    expect(await readKubeconfig(file, 'data')).toEqual({
      context: 'data',
      namespace: 'ns1',
      server: 'https://10.0.0.1:6443',
      caPem: 'CA DATA',
      tlsServerName: 'api.example',
      certPem: 'CERT DATA',
      keyPem: 'KEY DATA',
    });
  });

  it('reads file references relative to the kubeconfig folder (or absolute), the current context by default', async () => {
    expect(await readKubeconfig(file)).toEqual({
      context: 'files',
      server: 'https://10.0.0.2:6443',
      caPem: 'CA FILE',
      certPem: 'CERT FILE',
      keyPem: 'KEY FILE',
    });
  });

  it('resolves a tokenFile to an absolute path without reading it, and reads credential plugins without running them', async () => {
    expect((await readKubeconfig(file, 'tokenfile')).tokenFile).toBe(path.join(dir, 'token'));
    expect((await readKubeconfig(file, 'exec')).exec).toEqual({
      apiVersion: 'client.authentication.k8s.io/v1beta1',
      command: path.join(dir, 'bin/aws'),
      args: ['eks', 'get-token'],
    });
  });

  it('says which context is missing and lists the ones there are', async () => {
    const err = (await readKubeconfig(file, 'nope').catch((e: unknown) => e)) as KubeconfigError;
    expect(err).toBeInstanceOf(KubeconfigError);
    expect(err.message).toBe(`${file} has no context 'nope'`);
    expect(err.contexts).toEqual(['data', 'files', 'tokenfile', 'exec', 'noserver', 'missing']);
  });

  it('refuses a cluster without a server, an unreadable reference and an unreadable file, naming them', async () => {
    await expect(readKubeconfig(file, 'noserver')).rejects.toThrow(`context 'noserver' of ${file}: its cluster 'c-noserver' has no server`);
    await expect(readKubeconfig(file, 'missing')).rejects.toThrow(`cannot read its client certificate ${path.join(dir, 'pki', 'absent.crt')}`);
    await expect(readKubeconfig(path.join(dir, 'absent'))).rejects.toThrow(/absent: cannot read it: ENOENT/);
  });

  it('reads back every context of a kubeconfig the lab wrote', () => {
    const text = renderKubeconfig([entry('hub'), { ...entry('cluster1', 'https://10.0.0.2:6443'), token: 'tok' }], 'hub');
    const contexts = kubeconfigContexts(text, kubeconfigFileOrigin('/nowhere/kubeconfig'));
    expect(contexts.map((c) => [c.context, c.server, c.caPem, c.certPem, c.keyPem, c.token])).toEqual([
      ['hub', 'https://10.0.0.1:6443', entry('hub').caPem, 'CERT', 'KEY', undefined],
      ['cluster1', 'https://10.0.0.2:6443', entry('hub').caPem, 'CERT', 'KEY', 'tok'],
    ]);
  });
});
