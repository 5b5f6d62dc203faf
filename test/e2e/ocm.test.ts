import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderLabConfig } from '../../src/config/index.js';
import { NotReadyError } from '../../src/errors.js';
import { downLab, upLab } from '../../src/lab/lifecycle.js';
import { acceptClusters, approveBootstrapCsrs, clusterCsrs, csrState, managedClusterPath, type ManagedCluster } from '../../src/ocm/accept.js';
import { AGENT_DEPLOYMENTS, BOOTSTRAP_USERNAME, CLUSTER_NAME_LABEL, HUB_DEPLOYMENTS } from '../../src/ocm/constants.js';
import type { KubeClient } from '../../src/kube/client.js';
import { getOrNull, objectPath } from '../../src/kube/objects.js';
import { waitUntil } from '../../src/kube/wait.js';
import { hubClient, ocmStatus } from '../../src/ocm/status.js';
import { manifestWorkHeader, type ManifestWork } from '../../src/ocm/work.js';
import { labDir } from '../../src/paths.js';
import { x509 } from '../../src/pki/x509.js';
import type { LabStatus } from '../../src/runtime/types.js';
import { cli, isolatedLabHome, kubectl, machineSnapshot, testLabConfig } from '../support/lab.js';

const LAB = 'e2e-ocm';
const config = testLabConfig(LAB);

async function canConnect(netns: string | null, host: string, port: number): Promise<boolean> {
  const script = `const s=require('net').connect({host:${JSON.stringify(host)},port:${port}});s.setTimeout(2000,()=>process.exit(3));s.on('connect',()=>process.exit(0));s.on('error',()=>process.exit(4));`;
  const cmd: [string, string[]] = netns ? ['ip', ['netns', 'exec', netns, process.execPath, '-e', script]] : [process.execPath, ['-e', script]];
  return (await execa(cmd[0], cmd[1], { reject: false, timeout: 10_000 })).exitCode === 0;
}

interface PodList {
  items: {
    metadata: { name: string; uid: string; namespace: string };
    status: { phase?: string; containerStatuses?: { ready: boolean; restartCount: number }[] };
  }[];
}

/** The OCM pods of the lab (operators, hub controllers, klusterlet agents) by cluster/namespace/name → uid. */
async function ocmPods(kubeconfig: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [cluster, namespaces] of [
    ['hub', ['open-cluster-management', 'open-cluster-management-hub']],
    ['cluster1', ['open-cluster-management', 'open-cluster-management-agent']],
    ['cluster2', ['open-cluster-management', 'open-cluster-management-agent']],
  ] as const) {
    for (const ns of namespaces) {
      const r = await kubectl(kubeconfig, ['--context', cluster, '-n', ns, 'get', 'pods', '-o', 'json']);
      for (const pod of (JSON.parse(r.stdout) as PodList).items) out[`${cluster}/${ns}/${pod.metadata.name}`] = pod.metadata.uid;
    }
  }
  return out;
}

async function csrPem(commonName: string): Promise<string> {
  const keys = (await crypto.webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify'])) as crypto.webcrypto.CryptoKeyPair;
  const req = await x509.Pkcs10CertificateRequestGenerator.create({ name: `CN=${commonName}`, keys, signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' } });
  return req.toString('pem');
}

describe('OCM on the lab (hub, klusterlets, accept, ManifestWork)', () => {
  let home: Awaited<ReturnType<typeof isolatedLabHome>>;
  let before: Awaited<ReturnType<typeof machineSnapshot>>;
  let status: LabStatus;
  let kubeconfig: string;
  let labFile: string;
  let hub: KubeClient;

  beforeAll(async () => {
    home = await isolatedLabHome('ocm');
    before = await machineSnapshot(home.home);
    labFile = path.join(home.home, 'lab.yaml');
    await fs.writeFile(labFile, renderLabConfig(config));
    status = (await upLab(config, { renderer: 'silent' })).status;
    kubeconfig = status.kubeconfig ?? '';
    hub = await hubClient(config);
  });

  afterAll(async () => {
    hub?.close();
    await downLab(config).catch(() => undefined);
    await home.cleanup();
  });

  it('ends up with cluster1 and cluster2 accepted, joined and available, and says so in status', async () => {
    const { clusters } = await ocmStatus(config);
    expect(clusters).toEqual([
      { name: 'cluster1', hubAccepted: true, joined: true, available: true },
      { name: 'cluster2', hubAccepted: true, joined: true, available: true },
    ]);
    expect(status.capabilities).toContain('ocm');
    // Accepted through our accept: the CSRs were requested by the bootstrap identity and issued.
    for (const cluster of ['cluster1', 'cluster2']) {
      const csrs = await clusterCsrs(hub, cluster);
      expect(csrs.some((c) => c.spec.username === BOOTSTRAP_USERNAME && csrState(c) === 'Issued')).toBe(true);
    }
  });

  it('runs OCM as clusteradm installs it: operators, ClusterManager and Klusterlets, every pod Running under its upstream name', async () => {
    const running = async (cluster: string, ns: string) => {
      const r = await kubectl(kubeconfig, ['--context', cluster, '-n', ns, 'get', 'pods', '-o', 'json']);
      expect(r.exitCode, r.stderr).toBe(0);
      return (JSON.parse(r.stdout) as PodList).items
        .filter((p) => p.status.phase === 'Running' && p.status.containerStatuses?.every((c) => c.ready))
        .map((p) => p.metadata.name.replace(/-[a-z0-9]+-[a-z0-9]+$/, ''))
        .sort();
    };
    expect(await running('hub', 'open-cluster-management')).toEqual(['cluster-manager']);
    expect(await running('hub', 'open-cluster-management-hub')).toEqual([...HUB_DEPLOYMENTS].sort());
    for (const spoke of ['cluster1', 'cluster2']) {
      expect(await running(spoke, 'open-cluster-management')).toEqual(['klusterlet']);
      expect(await running(spoke, 'open-cluster-management-agent')).toEqual([...AGENT_DEPLOYMENTS].sort());
    }
    const cm = await kubectl(kubeconfig, ['--context', 'hub', 'get', 'clustermanager', '-o', 'name']);
    expect(cm.stdout.trim()).toBe('clustermanager.operator.open-cluster-management.io/cluster-manager');
    const k = await kubectl(kubeconfig, [
      '--context',
      'cluster1',
      'get',
      'klusterlet',
      'klusterlet',
      '-o',
      'jsonpath={.spec.clusterName} {.spec.deployOption.mode}',
    ]);
    expect(k.stdout).toBe('cluster1 Default');
    // Each operator only where clusteradm puts it.
    expect((await kubectl(kubeconfig, ['--context', 'hub', 'get', 'klusterlet'])).stderr).toMatch(/the server doesn't have a resource type "klusterlet"/);
    expect((await kubectl(kubeconfig, ['--context', 'cluster1', 'get', 'clustermanager'])).stderr).toMatch(
      /the server doesn't have a resource type "clustermanager"/,
    );
    // The spoke's bootstrap kubeconfig names the hub address its VPC reaches.
    const secret = await kubectl(kubeconfig, [
      '--context',
      'cluster1',
      '-n',
      'open-cluster-management-agent',
      'get',
      'secret',
      'bootstrap-hub-kubeconfig',
      '-o',
      'jsonpath={.data.kubeconfig}',
    ]);
    expect(Buffer.from(secret.stdout, 'base64').toString('utf8')).toContain(`server: ${status.clusters.find((c) => c.name === 'hub')!.apiServer}`);
  });

  it("shows the clusters through 'ocm-lab get clusters' (text and -o json)", async () => {
    const json = await cli(['get', 'clusters', '-c', labFile, '-o', 'json']);
    expect(json.exitCode, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({
      clusters: [
        { name: 'cluster1', hubAccepted: true, joined: true, available: true },
        { name: 'cluster2', hubAccepted: true, joined: true, available: true },
      ],
    });
    const text = await cli(['get', 'clusters', '-c', labFile]);
    expect(text.exitCode, text.stderr).toBe(0);
    expect(text.stdout.split('\n')[0]).toMatch(/^NAME\s+HUB ACCEPTED\s+JOINED\s+AVAILABLE$/);
    expect(text.stdout).toMatch(/cluster1\s+true\s+True\s+True/);
  });

  it('serves the addon CRDs in v1beta1 through the conversion webhook', async () => {
    const name = `conv-${crypto.randomBytes(3).toString('hex')}`;
    const v1alpha1 = {
      apiVersion: 'addon.open-cluster-management.io/v1alpha1',
      kind: 'ManagedClusterAddOn',
      metadata: { name, namespace: 'cluster1' },
      spec: { installNamespace: 'probe-install-ns' },
    };
    try {
      const created = await kubectl(kubeconfig, ['--context', 'hub', 'create', '-f', '-'], JSON.stringify(v1alpha1));
      expect(created.exitCode, created.stderr).toBe(0);
      const read = await kubectl(kubeconfig, [
        '--context',
        'hub',
        'get',
        `managedclusteraddons.v1beta1.addon.open-cluster-management.io/${name}`,
        '-n',
        'cluster1',
        '-o',
        'json',
      ]);
      expect(read.exitCode, read.stderr).toBe(0);
      const obj = JSON.parse(read.stdout) as { apiVersion: string; metadata: { annotations?: Record<string, string> }; spec: Record<string, unknown> };
      expect(obj.apiVersion).toBe('addon.open-cluster-management.io/v1beta1');
      // v1beta1 has no spec.installNamespace: the webhook moves it into an annotation.
      expect(obj.metadata.annotations?.['addon.open-cluster-management.io/v1alpha1-install-namespace']).toBe('probe-install-ns');
      expect(obj.spec.installNamespace).toBeUndefined();
    } finally {
      await kubectl(kubeconfig, [
        '--context',
        'hub',
        'delete',
        'managedclusteraddons.addon.open-cluster-management.io',
        name,
        '-n',
        'cluster1',
        '--ignore-not-found',
      ]);
    }
  });

  it('delivers a ConfigMap to cluster1 with create work, reports Applied/Available, and removes it with the work', async () => {
    const name = `cm-${crypto.randomBytes(3).toString('hex')}`;
    const file = path.join(home.home, `${name}.yaml`);
    await fs.writeFile(
      file,
      [
        `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: default\ndata:\n  greeting: hello from the hub`,
        `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${name}-ns`,
      ].join('\n---\n'),
    );
    const created = await cli(['create', 'work', name, '--cluster', 'cluster1', '-f', file, '-c', labFile, '-o', 'json']);
    expect(created.exitCode, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({
      name,
      cluster: 'cluster1',
      action: 'created',
      manifests: [`ConfigMap/${name}`, `Namespace/${name}-ns`],
    });
    const conditions = await waitUntil(
      async () => {
        const work = await getOrNull<ManifestWork>(hub, objectPath(manifestWorkHeader(name, 'cluster1')));
        const c = work?.status?.conditions ?? [];
        const ok = (type: string) => c.some((x) => x.type === type && x.status === 'True');
        return ok('Applied') && ok('Available') ? c.map((x) => `${x.type}=${x.status}`) : undefined;
      },
      { timeoutMs: 90_000, what: `ManifestWork cluster1/${name} Applied and Available` },
    );
    expect(conditions).toEqual(expect.arrayContaining(['Applied=True', 'Available=True']));
    const cm = await kubectl(kubeconfig, ['--context', 'cluster1', 'get', 'configmap', name, '-n', 'default', '-o', 'jsonpath={.data.greeting}']);
    expect(cm.stdout).toBe('hello from the hub');
    // Never delivered anywhere else.
    expect((await kubectl(kubeconfig, ['--context', 'cluster2', 'get', 'configmap', name, '-n', 'default'])).exitCode).not.toBe(0);

    const again = await cli(['create', 'work', name, '--cluster', 'cluster1', '-f', file, '-c', labFile]);
    expect(again.exitCode).toBe(6);
    expect(again.stderr).toContain('--overwrite');

    expect((await kubectl(kubeconfig, ['--context', 'hub', 'delete', 'manifestwork', name, '-n', 'cluster1'])).exitCode).toBe(0);
    await waitUntil(
      async () => ((await kubectl(kubeconfig, ['--context', 'cluster1', 'get', 'configmap', name, '-n', 'default'])).exitCode !== 0 ? true : undefined),
      {
        timeoutMs: 90_000,
        what: `ConfigMap ${name} to be removed from cluster1 with its work`,
      },
    );
  });

  it('rejects bad work input with exit 2 and an unknown cluster with exit 5, creating nothing', async () => {
    const bad = path.join(home.home, 'bad.yaml');
    await fs.writeFile(bad, 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {namespace: default}\n');
    const invalid = await cli(['create', 'work', 'bad-input', '--cluster', 'cluster1', '-f', bad, '-c', labFile]);
    expect(invalid.exitCode).toBe(2);
    expect(invalid.stderr).toContain("document 2 (ConfigMap): missing field 'metadata.name'");
    const good = path.join(home.home, 'good.yaml');
    await fs.writeFile(good, 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok, namespace: default}\n');
    const unknown = await cli(['create', 'work', 'to-nowhere', '--cluster', 'cluster9', '-f', good, '-c', labFile]);
    expect(unknown.exitCode).toBe(5);
    expect(unknown.stderr).toContain("cluster 'cluster9' is not a managed cluster");
    for (const [ns, work] of [
      ['cluster1', 'bad-input'],
      ['cluster9', 'to-nowhere'],
    ] as const) {
      expect(await getOrNull(hub, objectPath(manifestWorkHeader(work, ns)))).toBeNull();
    }
  });

  it('accept leaves a CSR from any requester but the bootstrap identity pending', async () => {
    const name = `cluster1-intruder-${crypto.randomBytes(3).toString('hex')}`;
    const manifest = {
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'CertificateSigningRequest',
      metadata: { name, labels: { [CLUSTER_NAME_LABEL]: 'cluster1' } },
      spec: {
        request: Buffer.from(await csrPem('system:open-cluster-management:cluster1:intruder')).toString('base64'),
        signerName: 'kubernetes.io/kube-apiserver-client',
        usages: ['client auth'],
      },
    };
    try {
      // Requested as another user (impersonation sets spec.username; the group lets it create CSRs at all),
      // labelled as if it were cluster1's.
      const created = await kubectl(
        kubeconfig,
        ['--context', 'hub', '--as', 'intruder', '--as-group', 'system:masters', 'create', '-f', '-'],
        JSON.stringify(manifest),
      );
      expect(created.exitCode, created.stderr).toBe(0);
      expect(await approveBootstrapCsrs(hub, 'cluster1')).toEqual([]);
      await acceptClusters(hub, ['cluster1'], { timeoutMs: 10_000 });
      const after = (await clusterCsrs(hub, 'cluster1')).find((c) => c.metadata.name === name);
      expect(after?.spec.username).toBe('intruder');
      expect(after && csrState(after)).toBe('Pending');
    } finally {
      await kubectl(kubeconfig, ['--context', 'hub', 'delete', 'csr', name, '--ignore-not-found']);
    }
  });

  it('gives up on a cluster that never registers, saying what is missing', async () => {
    let caught: unknown;
    try {
      await acceptClusters(hub, ['ghost'], { timeoutMs: 2_000, intervalMs: 200 });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(NotReadyError);
    expect((caught as Error).message).toContain('cluster ghost was not accepted, joined and available within 2 s');
    expect((caught as Error).message).toContain('ManagedCluster ghost does not exist on the hub');
    expect(await getOrNull(hub, managedClusterPath('ghost'))).toBeNull();
  });

  it('keeps the hub VPC away from the spokes with OCM running', async () => {
    const hubNs = status.vpcs.find((v) => v.name === 'vpc-1')!.carrier;
    const spokeNs = status.vpcs.find((v) => v.name === 'vpc-2')!.carrier;
    const hubUrl = new URL(status.clusters.find((c) => c.name === 'hub')!.apiServer);
    for (const spoke of ['cluster1', 'cluster2']) {
      const url = new URL(status.clusters.find((c) => c.name === spoke)!.apiServer);
      expect(await canConnect(hubNs, url.hostname, Number(url.port))).toBe(false);
      expect(await canConnect(null, url.hostname, Number(url.port))).toBe(true); // …which is up
    }
    expect(await canConnect(spokeNs, hubUrl.hostname, Number(hubUrl.port))).toBe(true);
  });

  it('re-running up changes nothing, and puts back an operator someone deleted', async () => {
    const pods = await ocmPods(kubeconfig);
    const uid = async (c: string) => (await getOrNull<ManagedCluster>(hub, managedClusterPath(c)))?.metadata.uid;
    const uids = [await uid('cluster1'), await uid('cluster2')];
    const csrNames = (await clusterCsrs(hub, 'cluster1')).map((c) => c.metadata.name).sort();
    const result = await upLab(config, { renderer: 'silent' });
    const ocmResults = result.steps.filter((s) => /OCM|klusterlet|cluster manager/.test(s.title)).map((s) => `${s.title}: ${s.result}`);
    expect(ocmResults.length).toBeGreaterThanOrEqual(6);
    expect(ocmResults.join('\n')).not.toMatch(/created|updated|written|approved|set/);
    expect(await ocmPods(kubeconfig)).toEqual(pods);
    expect([await uid('cluster1'), await uid('cluster2')]).toEqual(uids);
    expect((await clusterCsrs(hub, 'cluster1')).map((c) => c.metadata.name).sort()).toEqual(csrNames);

    // The klusterlet operator deleted by hand: up applies it again, and cluster1 stays joined.
    const deleted = await kubectl(kubeconfig, ['--context', 'cluster1', '-n', 'open-cluster-management', 'delete', 'deployment', 'klusterlet', '--wait']);
    expect(deleted.exitCode, deleted.stderr).toBe(0);
    const repaired = await upLab(config, { renderer: 'silent' });
    expect(repaired.steps.find((s) => s.title === 'cluster1: klusterlet')?.result).toContain('Deployment klusterlet created');
    const ready = await kubectl(kubeconfig, [
      '--context',
      'cluster1',
      '-n',
      'open-cluster-management',
      'rollout',
      'status',
      'deployment/klusterlet',
      '--timeout=60s',
    ]);
    expect(ready.exitCode, ready.stderr).toBe(0);
    expect((await ocmStatus(config)).clusters.every((c) => c.hubAccepted && c.joined && c.available)).toBe(true);
  });

  it('down removes all of it', async () => {
    await downLab(config);
    await expect(fs.access(labDir(LAB))).rejects.toThrow();
    expect(await machineSnapshot(home.home)).toEqual(before);
  });
});
