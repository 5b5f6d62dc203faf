import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderLabConfig } from '../../src/config/index.js';
import { certificateInfo } from '../../src/pki/index.js';
import { downLab, labStatus, upLab } from '../../src/lab/lifecycle.js';
import { readLocalState } from '../../src/runtime/local/state.js';
import { labDir } from '../../src/paths.js';
import type { LabStatus } from '../../src/runtime/types.js';
import { waitUntil } from '../support/wait.js';
import { cli, isolatedLabHome, kubectl, kubectlPath, machineSnapshot, testLabConfig } from '../support/lab.js';

const LAB = 'e2e-substrate';
const config = testLabConfig(LAB);

/** TCP connect from inside a network namespace (or the host when netns is null); true when it connected. */
async function canConnect(netns: string | null, host: string, port: number): Promise<boolean> {
  const script = `const s=require('net').connect({host:${JSON.stringify(host)},port:${port}});s.setTimeout(2000,()=>process.exit(3));s.on('connect',()=>process.exit(0));s.on('error',()=>process.exit(4));`;
  const cmd = netns ? ['ip', ['netns', 'exec', netns, process.execPath, '-e', script]] : [process.execPath, ['-e', script]];
  const r = await execa(cmd[0] as string, cmd[1] as string[], { reject: false, timeout: 10_000 });
  return r.exitCode === 0;
}

function hostPort(url: string): { host: string; port: number } {
  const u = new URL(url);
  return { host: u.hostname, port: Number(u.port) };
}

describe('lab substrate (local runtime, real control planes)', () => {
  let home: Awaited<ReturnType<typeof isolatedLabHome>>;
  let before: Awaited<ReturnType<typeof machineSnapshot>>;
  let status: LabStatus;
  let kubeconfig: string;

  beforeAll(async () => {
    home = await isolatedLabHome('substrate');
    before = await machineSnapshot(home.home);
    const result = await upLab(config, { renderer: 'silent' });
    status = result.status;
    kubeconfig = status.kubeconfig ?? '';
  });

  afterAll(async () => {
    await downLab(config).catch(() => undefined);
    await home.cleanup();
  });

  it('brings up three ready clusters with contexts named after them', async () => {
    expect(status.clusters.map((c) => c.name)).toEqual(['hub', 'cluster1', 'cluster2']);
    expect(status.clusters.every((c) => c.ready)).toBe(true);
    for (const context of ['hub', 'cluster1', 'cluster2']) {
      const r = await kubectl(kubeconfig, ['--context', context, 'get', 'ns', '-o', 'name']);
      expect(r.stderr).toBe('');
      expect(r.stdout).toContain('namespace/kube-system');
    }
  });

  it('reports VPC isolation as enforced, with a namespace per VPC', () => {
    expect(status.isolation.enforced).toBe(true);
    expect(status.vpcs.map((v) => v.name)).toEqual(['vpc-1', 'vpc-2']);
    expect(status.vpcs.every((v) => v.carrier && v.details.netns === v.carrier)).toBe(true);
  });

  it('issues ServiceAccount tokens on a spoke that authenticate but are forbidden to list pods', async () => {
    const ns = `tokens-${crypto.randomBytes(3).toString('hex')}`;
    try {
      expect((await kubectl(kubeconfig, ['--context', 'cluster1', 'create', 'namespace', ns])).exitCode).toBe(0);
      expect((await kubectl(kubeconfig, ['--context', 'cluster1', '-n', ns, 'create', 'serviceaccount', 'probe'])).exitCode).toBe(0);
      const token = await kubectl(kubeconfig, ['--context', 'cluster1', '-n', ns, 'create', 'token', 'probe', '--duration', '10m']);
      expect(token.exitCode).toBe(0);
      const cluster1 = status.clusters.find((c) => c.name === 'cluster1')!;
      const ca = path.join(labDir(LAB), 'clusters', 'cluster1', 'pki', 'ca.crt');
      const run = await execa(
        await kubectlPath(),
        ['--server', cluster1.apiServer, '--certificate-authority', ca, '--token', token.stdout.trim(), 'get', 'pods', '-A'],
        { reject: false, env: { KUBECONFIG: '/dev/null' } },
      );
      expect(run.exitCode).not.toBe(0);
      expect(String(run.stderr)).toContain(`User "system:serviceaccount:${ns}:probe" cannot list resource "pods"`);
    } finally {
      await kubectl(kubeconfig, ['--context', 'cluster1', 'delete', 'namespace', ns, '--wait=false']);
    }
  });

  it('signs an approved kube-apiserver-client CSR with the lab CA', async () => {
    const name = `e2e-csr-${crypto.randomBytes(3).toString('hex')}`;
    const { privateKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const csrPem = await makeCsrPem(privateKey, 'e2e-user');
    const manifest = {
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'CertificateSigningRequest',
      metadata: { name },
      spec: {
        request: Buffer.from(csrPem).toString('base64'),
        signerName: 'kubernetes.io/kube-apiserver-client',
        usages: ['client auth'],
        expirationSeconds: 3600,
      },
    };
    try {
      expect((await kubectl(kubeconfig, ['--context', 'hub', 'create', '-f', '-'], JSON.stringify(manifest))).exitCode).toBe(0);
      expect((await kubectl(kubeconfig, ['--context', 'hub', 'certificate', 'approve', name])).exitCode).toBe(0);
      const wait = await kubectl(kubeconfig, ['--context', 'hub', 'wait', `csr/${name}`, '--for=jsonpath={.status.certificate}', '--timeout=60s']);
      expect(wait.exitCode, wait.stderr).toBe(0);
      const cert = await kubectl(kubeconfig, ['--context', 'hub', 'get', 'csr', name, '-o', 'jsonpath={.status.certificate}']);
      const pem = Buffer.from(cert.stdout, 'base64').toString('utf8');
      const caPem = await fs.readFile(path.join(labDir(LAB), 'clusters', 'hub', 'pki', 'ca.crt'), 'utf8');
      const issued = new crypto.X509Certificate(pem);
      expect(issued.subject).toContain('CN=e2e-user');
      expect(issued.verify(new crypto.X509Certificate(caPem).publicKey)).toBe(true);
      expect(certificateInfo(pem).issuer).toBe(certificateInfo(caPem).subject);
    } finally {
      await kubectl(kubeconfig, ['--context', 'hub', 'delete', 'csr', name, '--ignore-not-found']);
    }
  });

  it('lets vpc-2 reach the hub, keeps the hub VPC away from the spokes, and lets the host reach both', async () => {
    const hub = status.clusters.find((c) => c.name === 'hub')!;
    const spoke = status.clusters.find((c) => c.name === 'cluster1')!;
    const hubNs = status.vpcs.find((v) => v.name === 'vpc-1')!.carrier;
    const spokeNs = status.vpcs.find((v) => v.name === 'vpc-2')!.carrier;
    const spokeApi = hostPort(spoke.apiServer);
    const hubApi = hostPort(hub.apiServer);
    expect(await canConnect(hubNs, spokeApi.host, spokeApi.port)).toBe(false);
    expect(await canConnect(spokeNs, hubApi.host, hubApi.port)).toBe(true);
    expect(await canConnect(null, spokeApi.host, spokeApi.port)).toBe(true);
    expect(await canConnect(null, hubApi.host, hubApi.port)).toBe(true);
  });

  it('prints one cluster kubeconfig and merges the lab contexts into a user kubeconfig', async () => {
    const labFile = path.join(home.home, 'lab-kc.yaml');
    await fs.writeFile(labFile, renderLabConfig(config));
    const one = await cli(['kubeconfig', 'cluster1', '--config', labFile], { OCM_LAB_HOME: home.home });
    expect(one.exitCode, one.stderr).toBe(0);
    expect(one.stdout).toContain('name: cluster1');
    expect(one.stdout).not.toContain('name: hub');
    const userKubeconfig = path.join(home.home, 'user-kubeconfig');
    await fs.writeFile(
      userKubeconfig,
      'apiVersion: v1\nkind: Config\nclusters:\n- name: prod\n  cluster: {server: "https://prod.invalid"}\ncontexts: []\nusers: []\ncurrent-context: ""\n',
    );
    const merged = await cli(['kubeconfig', '--merge', '--config', labFile], { OCM_LAB_HOME: home.home, KUBECONFIG: userKubeconfig });
    expect(merged.exitCode, merged.stderr).toBe(0);
    expect((await fs.stat(userKubeconfig)).mode & 0o777).toBe(0o600);
    const r = await execa(await kubectlPath(), ['--kubeconfig', userKubeconfig, '--context', 'cluster2', 'get', 'ns', 'default', '-o', 'name']);
    expect(r.stdout).toBe('namespace/default');
    expect(await fs.readFile(userKubeconfig, 'utf8')).toContain('prod.invalid');
    const unknown = await cli(['kubeconfig', 'cluster9', '--config', labFile], { OCM_LAB_HOME: home.home });
    expect(unknown.exitCode).toBe(5);
    expect(unknown.stderr).toContain("no cluster 'cluster9'");
  });

  it('a second up changes nothing', async () => {
    const pidsBefore = (await labStatus(config)).clusters.flatMap((c) => c.components.map((x) => x.detail));
    const again = await upLab(config, { renderer: 'silent' });
    const pidsAfter = again.status.clusters.flatMap((c) => c.components.map((x) => x.detail));
    expect(pidsAfter).toEqual(pidsBefore);
    expect(again.steps.filter((s) => s.title.includes('control plane')).every((s) => s.result === 'already running')).toBe(true);
  });

  it('up restarts a component that died while the supervisor was dead, and the supervisor too', async () => {
    // With its supervisor alive the apiserver would be back at once (test/faults/supervise.test.ts): up is the repair here.
    const supervisor = (await labStatus(config)).supervisor!;
    expect(supervisor.running).toBe(true);
    process.kill(supervisor.pid!, 'SIGKILL');
    await waitUntil(async () => ((await labStatus(config)).supervisor?.running ? undefined : true), 'the supervisor to show as not running', 10_000, 100);
    const cluster2 = (await labStatus(config)).clusters.find((c) => c.name === 'cluster2')!;
    const apiserver = cluster2.components.find((c) => c.name === 'kube-apiserver')!;
    expect(apiserver.detail).toMatch(/^pid \d+$/);
    process.kill(Number(apiserver.detail!.slice('pid '.length)), 'SIGKILL');
    await waitUntil(
      async () => {
        const c = (await labStatus(config)).clusters.find((x) => x.name === 'cluster2')!;
        return c.components.find((x) => x.name === 'kube-apiserver')!.running ? undefined : true;
      },
      'the killed kube-apiserver of cluster2 to show as not running',
      30_000,
      200,
    );
    const labFile = path.join(home.home, 'lab.yaml');
    await fs.writeFile(labFile, renderLabConfig(config));
    const st = await cli(['status', '-o', 'json', '--config', labFile], { OCM_LAB_HOME: home.home });
    expect(st.exitCode, st.stderr).toBe(0);
    const shown = JSON.parse(st.stdout) as LabStatus;
    const shownC2 = shown.clusters.find((c) => c.name === 'cluster2')!;
    expect(shownC2.ready).toBe(false);
    expect(shownC2.components.find((c) => c.name === 'kube-apiserver')!.running).toBe(false);
    expect(shownC2.components.find((c) => c.name === 'etcd')!.running).toBe(true);
    const repaired = await upLab(config, { renderer: 'silent' });
    const c2 = repaired.status.clusters.find((c) => c.name === 'cluster2')!;
    expect(c2.ready).toBe(true);
    expect(repaired.status.supervisor?.running).toBe(true);
    expect(c2.components.find((c) => c.name === 'kube-apiserver')!.detail).not.toBe(apiserver.detail);
    expect((await kubectl(kubeconfig, ['--context', 'cluster2', 'get', 'ns', 'default'])).exitCode).toBe(0);
  });

  it('down removes every process, namespace, link and rule, and is idempotent', async () => {
    const state = await readLocalState(LAB);
    expect(state?.runtimeState.networkResources.length).toBeGreaterThan(0);
    const result = await downLab(config);
    expect(result.existed).toBe(true);
    const after = await machineSnapshot(home.home);
    expect(after).toEqual(before);
    await expect(fs.access(labDir(LAB))).rejects.toThrow();
    const second = await downLab(config);
    expect(second.existed).toBe(false);
    expect(second.removed).toEqual([]);
  });
});

async function makeCsrPem(privateKey: crypto.KeyObject, commonName: string): Promise<string> {
  const x509 = await import('@peculiar/x509');
  const webKey = await crypto.webcrypto.subtle.importKey('jwk', privateKey.export({ format: 'jwk' }), { name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign']);
  const pub = crypto.createPublicKey(privateKey);
  const webPub = await crypto.webcrypto.subtle.importKey('jwk', pub.export({ format: 'jwk' }), { name: 'ECDSA', namedCurve: 'P-256' }, true, ['verify']);
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: `CN=${commonName}, O=e2e`,
    keys: { privateKey: webKey, publicKey: webPub },
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
  });
  return csr.toString('pem');
}
