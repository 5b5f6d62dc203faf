import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { executeBlock } from '../../src/scenario/execute.js';
import { parseScenario } from '../../src/scenario/index.js';
import { useTempDir } from '../support/temp-dir.js';

const DOC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../scenarios/clusterprofile.md');

interface Kubeconfig {
  clusters: { name: string; cluster: Record<string, unknown> }[];
}

// scenarios/clusterprofile.md's consumer builds its kubeconfig from the profile's access provider, dialing where the
// host reaches the API server (Docker Desktop's host has no route to a node's address). Its own block, run here on files.
describe('the ClusterProfile document’s consumer kubeconfig', () => {
  const dir = useTempDir('cp-consumer-');

  async function consumerCluster(providerServer: string, hostServer: string): Promise<Record<string, unknown>> {
    const scenario = parseScenario(await fs.readFile(DOC, 'utf8'), DOC);
    const step = scenario.steps.find((s) => s.language === 'js' && s.code.includes('consumer.kubeconfig'));
    expect(step, 'the document has the js block that writes consumer.kubeconfig').toBeDefined();
    const profile = {
      metadata: { name: 'cluster1', namespace: 'open-cluster-management-cluster-inventory' },
      status: {
        accessProviders: [
          { name: 'other', cluster: { server: 'https://elsewhere:1' } },
          {
            name: 'open-cluster-management',
            cluster: {
              server: providerServer,
              'certificate-authority-data': 'Q0E=',
              extensions: [{ name: 'client.authentication.k8s.io/exec', extension: { clusterName: 'cluster1' } }],
            },
          },
        ],
      },
    };
    await fs.writeFile(path.join(dir.path, 'profile.json'), JSON.stringify(profile));
    await fs.writeFile(path.join(dir.path, 'host-server.txt'), hostServer);
    const ran = await executeBlock({
      language: 'js',
      code: step!.code,
      timeoutSeconds: 30,
      env: process.env,
      cwd: dir.path,
      stateFile: path.join(dir.path, 'state.sh'),
      source: { file: DOC, line: step!.line },
    });
    expect(ran.exitCode, ran.output).toBe(0);
    const written = parse(await fs.readFile(path.join(dir.path, 'consumer.kubeconfig'), 'utf8')) as Kubeconfig;
    expect(written.clusters.map((c) => c.name)).toEqual(['cluster1']);
    return written.clusters[0]!.cluster;
  }

  it('dials the host’s reach (kind: 127.0.0.1:<published port>) and verifies it as the provider’s server, with its CA and extension', async () => {
    const cluster = await consumerCluster('https://10.238.1.3:6443', 'https://127.0.0.1:40211');
    expect(cluster).toEqual({
      server: 'https://127.0.0.1:40211',
      'tls-server-name': '10.238.1.3',
      'certificate-authority-data': 'Q0E=',
      extensions: [{ name: 'client.authentication.k8s.io/exec', extension: { clusterName: 'cluster1' } }],
    });
  });

  it('an IPv6 provider server is named without brackets', async () => {
    const cluster = await consumerCluster('https://[fd00::3]:6443', 'https://127.0.0.1:40211');
    expect(cluster['tls-server-name']).toBe('fd00::3');
  });

  it('uses the provider’s cluster as it is where the host reaches the same address (local runtime)', async () => {
    const cluster = await consumerCluster('https://10.213.1.10:6443', 'https://10.213.1.10:6443');
    expect(cluster).toEqual({
      server: 'https://10.213.1.10:6443',
      'certificate-authority-data': 'Q0E=',
      extensions: [{ name: 'client.authentication.k8s.io/exec', extension: { clusterName: 'cluster1' } }],
    });
  });
});
