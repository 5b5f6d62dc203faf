import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { describe, expect, it } from 'vitest';
import { mergeKubeconfigText, renderKubeconfig, writeKubeconfig, type KubeconfigEntry } from '../../src/kube/kubeconfig.js';

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
