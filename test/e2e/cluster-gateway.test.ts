import fs from 'node:fs/promises';
import https from 'node:https';
import tls from 'node:tls';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LabConfig } from '../../src/config/index.js';
import { clusterPkiPaths } from '../../src/pki/index.js';
import { labDir } from '../../src/paths.js';
import { filesUnder } from '../support/secret-scan.js';
import { cli, kubectl, kubectlPath } from '../support/lab.js';
import { useTempDir } from '../support/temp-dir.js';
import { useSharedLab } from '../support/test-lab.js';
import { waitUntil } from '../support/wait.js';

const GW = '/apis/cluster.core.oam.dev/v1alpha1/clustergateways';
const GW_NS = 'open-cluster-management-cluster-gateway';
const CRED_NS = 'open-cluster-management-credentials';
const GW_SA = 'system:serviceaccount:open-cluster-management-managed-serviceaccount:cluster-gateway';
const GATEWAY_PORT = 9460;
const PENETRATION_GATE = '--feature-gates=ClientIdentityPenetration=true';

/**
 * cluster-gateway on a real lab (hub + cluster1, all three addons): the aggregated API
 * through the hub API server, its authentication and authorization, the proxy subresource
 * (plain, watch, upgrade), seed 001's kubeconfig and seed 004's identity penetration. On the
 * shared hub + cluster1 lab: what the tests grant, make and switch on (RBAC on both clusters, hub
 * ServiceAccounts, the gateway's ClientIdentityPenetration gate) is taken away again in afterAll.
 * "A ClusterGateway goes when its ManagedCluster goes" deletes cluster1's ManagedCluster: it runs in
 * cluster-add-remove.test.ts, on a lab of its own.
 */
describe('cluster-gateway', () => {
  const lab = useSharedLab('hub-cluster1', 'test/e2e/cluster-gateway.test.ts');
  const own = useTempDir('ocm-lab-gateway-');
  let config: LabConfig;
  let kubeconfig: string;
  let env: NodeJS.ProcessEnv;
  let hubAddress: string;
  const k = (context: string, args: string[], input?: string) => kubectl(kubeconfig, ['--context', context, ...args], input);
  const ok = async (context: string, args: string[], input?: string) => {
    const r = await k(context, args, input);
    if (r.exitCode !== 0) throw new Error(`kubectl --context ${context} ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  /** kubectl with a kubeconfig file of its own (a user's, or the gateway one). */
  const kc = async (file: string, args: string[]) => {
    const r = await execa(await kubectlPath(), ['--kubeconfig', file, ...args], { reject: false, timeout: 60_000 });
    return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
  };
  /** A hub ServiceAccount's token kubeconfig: a hub user that is not an admin. */
  const hubUserKubeconfig = async (name: string): Promise<string> => {
    await k('hub', ['-n', 'default', 'create', 'serviceaccount', name]);
    const token = (await ok('hub', ['-n', 'default', 'create', 'token', name, '--duration=1h'])).trim();
    const server = (await ok('hub', ['config', 'view', '--minify', '-o', 'jsonpath={.clusters[0].cluster.server}'])).trim();
    const ca = (await ok('hub', ['config', 'view', '--minify', '--raw', '-o', 'jsonpath={.clusters[0].cluster.certificate-authority-data}'])).trim();
    const file = path.join(own.path, `${name}.kubeconfig`);
    await fs.writeFile(
      file,
      `apiVersion: v1\nkind: Config\nclusters: [{name: hub, cluster: {server: "${server}", certificate-authority-data: ${ca}}}]\nusers: [{name: ${name}, user: {token: "${token}"}}]\ncontexts: [{name: ${name}, context: {cluster: hub, user: ${name}}}]\ncurrent-context: ${name}\n`,
      { mode: 0o600 },
    );
    return file;
  };
  /** The same user through the gateway to cluster1 (seed 001's tweak of the server URL). */
  const viaGateway = async (file: string): Promise<string> => {
    const text = await fs.readFile(file, 'utf8');
    const out = file.replace(/\.kubeconfig$/, '-gw.kubeconfig');
    await fs.writeFile(out, text.replace(/server: "?(https:\/\/[^"\s]+)"?/, `server: "$1${GW}/cluster1/proxy"`), { mode: 0o600 });
    return out;
  };
  /** The gateway pod's own address (the host reaches pod IPs, as it reaches every cluster). */
  const gatewayAddress = async () =>
    (
      await ok('hub', [
        '-n',
        'open-cluster-management-cluster-gateway',
        'get',
        'pods',
        '-l',
        'app=cluster-gateway',
        '--field-selector',
        'status.phase=Running',
        '-o',
        'jsonpath={.items[0].status.podIP}',
      ])
    ).trim();
  /** A request straight to the gateway's port, as something other than the hub API server. */
  const direct = async (p: string, opts: { cert?: boolean; headers?: Record<string, string> } = {}) => {
    const host = await gatewayAddress();
    return new Promise<{ status: number; body: string }>((resolve, reject) => {
      const pki = clusterPkiPaths(path.join(labDir(config.name), 'clusters', 'hub', 'pki'));
      const req = https.get(
        {
          host,
          port: GATEWAY_PORT,
          path: p,
          rejectUnauthorized: false,
          headers: opts.headers,
          ...(opts.cert ? { cert: require_(pki.frontProxyClientCert), key: require_(pki.frontProxyClientKey) } : {}),
        },
        (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
    });
  };
  const pemCache = new Map<string, string>();
  const require_ = (file: string) => pemCache.get(file) ?? '';

  beforeAll(async () => {
    ({ config, kubeconfig, env } = lab);
    hubAddress = new URL((await ok('hub', ['config', 'view', '--minify', '-o', 'jsonpath={.clusters[0].cluster.server}'])).trim()).hostname;
    const pki = clusterPkiPaths(path.join(labDir(config.name), 'clusters', 'hub', 'pki'));
    for (const f of [pki.frontProxyClientCert, pki.frontProxyClientKey]) pemCache.set(f, await fs.readFile(f, 'utf8'));
  }, 600_000);

  // The shared lab as this file found it: the RBAC and ServiceAccounts the tests made go, the gateway runs without the
  // identity-penetration gate again and reaches cluster1 (useSharedLab then compares every object).
  afterAll(async () => {
    await k('hub', ['-n', 'default', 'delete', 'serviceaccount', 'nobody', 'alice', '--ignore-not-found']);
    await k('hub', ['delete', 'clusterrolebinding', 'alice-gateway-proxy', '--ignore-not-found']);
    await k('hub', ['delete', 'clusterrole', 'gateway-proxy-user', '--ignore-not-found']);
    await k('cluster1', ['delete', 'clusterrolebinding', 'gateway-admin', 'gateway-impersonator', '--ignore-not-found']);
    await k('cluster1', ['delete', 'clusterrole', 'gateway-impersonator', '--ignore-not-found']);
    await k('cluster1', ['delete', 'namespace', 'team-a', '--ignore-not-found', '--wait=false']);
    const args = JSON.parse(
      await ok('hub', ['-n', GW_NS, 'get', 'deployment', 'cluster-gateway', '-o', 'jsonpath={.spec.template.spec.containers[0].args}']),
    ) as string[];
    const gate = args.indexOf(PENETRATION_GATE);
    if (gate !== -1) {
      await ok('hub', [
        '-n',
        GW_NS,
        'patch',
        'deployment',
        'cluster-gateway',
        '--type=json',
        '-p',
        JSON.stringify([{ op: 'remove', path: `/spec/template/spec/containers/0/args/${gate}` }]),
      ]);
      await ok('hub', ['-n', GW_NS, 'rollout', 'status', 'deployment/cluster-gateway', '--timeout=120s']);
    }
    await waitUntil(
      async () => ((await k('hub', ['get', '--raw', `${GW}/cluster1/proxy/healthz`])).stdout === 'ok' ? true : undefined),
      'the gateway to reach cluster1 after the clean-up',
      60_000,
    );
  }, 300_000);

  it('get --raw …/clustergateways/cluster1/proxy/healthz prints ok with the hub admin kubeconfig', async () => {
    expect(await ok('hub', ['get', '--raw', `${GW}/cluster1/proxy/healthz`])).toBe('ok');
  });

  it('kubectl get clustergateway: the table; -o yaml; explain; the addon Available', async () => {
    const table = await waitUntil(
      async () => {
        const out = await ok('hub', ['get', 'clustergateway']);
        return /^cluster1 +ServiceAccountToken +ClusterProxy +True$/m.test(out) ? out : undefined;
      },
      'cluster1 healthy in the table',
      60_000,
    );
    expect(table.split('\n')[0]).toMatch(/^NAME +PROVIDER +CREDENTIAL-TYPE +ENDPOINT-TYPE +HEALTHY$/);
    const yaml = await ok('hub', ['get', 'clustergateway', 'cluster1', '-o', 'yaml']);
    expect(yaml).toMatch(/kind: ClusterGateway/);
    expect(yaml).toMatch(/type: ClusterProxy/);
    // The credential itself never leaves the gateway (a JWT starts with eyJ).
    expect(yaml).not.toMatch(/serviceAccountToken:|eyJ/);
    expect(await ok('hub', ['explain', 'clustergateway.spec.access'])).toMatch(/FIELDS:/);
    expect(await ok('hub', ['get', 'managedclusteraddon', '-n', 'cluster1', 'cluster-gateway'])).toMatch(/cluster-gateway +True/);
    expect((await k('hub', ['get', 'clustergateway', 'nope'])).stderr).toMatch(/clustergateways.cluster.core.oam.dev "nope" not found/);
  });

  it('401 for requests that do not come from the hub API server', async () => {
    const noCert = await direct(`${GW}/cluster1/proxy/healthz`);
    expect(noCert.status).toBe(401);
    expect(JSON.parse(noCert.body)).toMatchObject({ kind: 'Status', reason: 'Unauthorized' });
    const noUser = await direct(`${GW}`, { cert: true });
    expect(noUser.status).toBe(401);
    expect(noUser.body).toMatch(/X-Remote-User/);
    expect((await direct('/healthz')).body).toBe('ok');
  });

  it('403 for a hub user without RBAC, at the hub and at the gateway itself (SubjectAccessReview)', async () => {
    const nobody = await hubUserKubeconfig('nobody');
    const r = await kc(nobody, ['get', '--raw', `${GW}/cluster1/proxy/healthz`]);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(
      /Forbidden.*User "system:serviceaccount:default:nobody" cannot get resource "clustergateways\/proxy" in API group "cluster.core.oam.dev"/,
    );
    const atGateway = await direct(`${GW}/cluster1/proxy/healthz`, {
      cert: true,
      headers: { 'X-Remote-User': 'nobody', 'X-Remote-Group': 'system:authenticated' },
    });
    expect(atGateway.status).toBe(403);
    expect(JSON.parse(atGateway.body).message).toMatch(/User "nobody" cannot get resource "clustergateways\/proxy"/);
    const admin = await direct(`${GW}/cluster1/proxy/healthz`, { cert: true, headers: { 'X-Remote-User': 'admin', 'X-Remote-Group': 'system:masters' } });
    expect(admin).toEqual({ status: 200, body: 'ok' });
  });

  it('manual mode, Const endpoint: Secrets with a token or a client certificate reach the API server they name (here the hub itself)', async () => {
    const server = (await ok('hub', ['config', 'view', '--minify', '-o', 'jsonpath={.clusters[0].cluster.server}'])).trim();
    const raw = (p: string) =>
      ok('hub', ['config', 'view', '--minify', '--raw', '-o', `jsonpath=${p}`]).then((x) => Buffer.from(x.trim(), 'base64').toString('utf8'));
    const ca = await raw('{.clusters[0].cluster.certificate-authority-data}');
    const token = (await ok('hub', ['-n', 'default', 'create', 'token', 'nobody', '--duration=1h'])).trim();
    const files = { ca: path.join(own.path, 'hub-ca.crt'), crt: path.join(own.path, 'admin.crt'), key: path.join(own.path, 'admin.key') };
    await fs.writeFile(files.ca, ca);
    await fs.writeFile(files.crt, await raw('{.users[0].user.client-certificate-data}'), { mode: 0o600 });
    await fs.writeFile(files.key, await raw('{.users[0].user.client-key-data}'), { mode: 0o600 });
    try {
      await ok('hub', [
        '-n',
        CRED_NS,
        'create',
        'secret',
        'generic',
        'hub-as-nobody',
        `--from-literal=endpoint=${server}`,
        `--from-file=ca.crt=${files.ca}`,
        `--from-literal=token=${token}`,
      ]);
      await ok('hub', [
        '-n',
        CRED_NS,
        'label',
        'secret',
        'hub-as-nobody',
        'cluster.core.oam.dev/cluster-credential-type=ServiceAccountToken',
        'cluster.core.oam.dev/cluster-endpoint-type=Const',
      ]);
      await ok('hub', [
        '-n',
        CRED_NS,
        'create',
        'secret',
        'generic',
        'hub-as-admin',
        `--from-literal=endpoint=${server}`,
        `--from-file=ca.crt=${files.ca}`,
        `--from-file=tls.crt=${files.crt}`,
        `--from-file=tls.key=${files.key}`,
      ]);
      await ok('hub', ['-n', CRED_NS, 'label', 'secret', 'hub-as-admin', 'cluster.core.oam.dev/cluster-credential-type=X509Certificate']);
      const asNobody = await waitUntil(
        async () => {
          const r = await k('hub', ['get', '--raw', `${GW}/hub-as-nobody/proxy/api/v1/namespaces`]);
          return r.exitCode !== 0 && /Forbidden|forbidden/.test(r.stderr) ? r.stderr : undefined;
        },
        'a Forbidden from the hub as nobody through Const',
        20_000,
        300,
      );
      expect(asNobody).toMatch(/system:serviceaccount:default:nobody/);
      expect(await ok('hub', ['get', '--raw', `${GW}/hub-as-admin/proxy/api/v1/namespaces/kube-system`])).toMatch(/"name":"kube-system"/);
      expect(await ok('hub', ['get', 'clustergateway', 'hub-as-admin', '--no-headers'])).toMatch(/^hub-as-admin +X509Certificate +Const/);
    } finally {
      await k('hub', ['-n', CRED_NS, 'delete', 'secret', 'hub-as-nobody', 'hub-as-admin', '--ignore-not-found']);
    }
  });

  it('seed 001: the --via gateway kubeconfig is Forbidden as the cluster-gateway ServiceAccount until RBAC is granted', async () => {
    const out = await cli(['kubeconfig', '--via', 'gateway', 'cluster1'], env);
    expect(out.exitCode, out.stderr).toBe(0);
    expect(out.stdout).toMatch(new RegExp(`server: https://[^\\s]+${GW}/cluster1/proxy`));
    const file = path.join(own.path, 'cluster1-gw.kubeconfig');
    await fs.writeFile(file, out.stdout, { mode: 0o600 });
    const before = await kc(file, ['get', 'ns']);
    expect(before.stderr).toContain(
      `Error from server (Forbidden): namespaces is forbidden: User "${GW_SA}" cannot list resource "namespaces" in API group "" at the cluster scope`,
    );
    await ok('cluster1', [
      'create',
      'clusterrolebinding',
      'gateway-admin',
      '--clusterrole=cluster-admin',
      '--serviceaccount=open-cluster-management-managed-serviceaccount:cluster-gateway',
    ]);
    const after = await waitUntil(
      async () => {
        const r = await kc(file, ['get', 'ns']);
        return r.exitCode === 0 ? r.stdout : undefined;
      },
      'get ns through the gateway',
      30_000,
    );
    expect(after).toMatch(/^kube-system +Active/m);
  });

  it('a watch streams through the proxy', async () => {
    const file = path.join(own.path, 'cluster1-gw.kubeconfig');
    const watch = execa(await kubectlPath(), ['--kubeconfig', file, '-n', 'default', 'get', 'configmaps', '--watch', '--output-watch-events'], {
      reject: false,
      timeout: 60_000,
    });
    let seen = '';
    watch.stdout?.on('data', (c: Buffer) => (seen += c.toString()));
    try {
      await waitUntil(async () => (seen.includes('kube-root-ca.crt') ? true : undefined), 'the watch to list', 30_000);
      expect(seen).toMatch(/^EVENT +NAME +DATA +AGE$/m);
      await ok('cluster1', ['-n', 'default', 'create', 'configmap', 'through-the-gateway', '--from-literal=a=b']);
      await waitUntil(async () => (/ADDED +through-the-gateway/.test(seen) ? true : undefined), 'the watch event', 30_000);
      await ok('cluster1', ['-n', 'default', 'delete', 'configmap', 'through-the-gateway']);
      await waitUntil(async () => (/DELETED +through-the-gateway/.test(seen) ? true : undefined), 'the delete event', 30_000);
    } finally {
      watch.kill();
      await watch;
    }
  });

  it('upgrades pass through: a WebSocket watch to the cluster through hub and gateway', async () => {
    const ca = Buffer.from(
      (await ok('hub', ['config', 'view', '--minify', '--raw', '-o', 'jsonpath={.clusters[0].cluster.certificate-authority-data}'])).trim(),
      'base64',
    );
    const cert = Buffer.from(
      (await ok('hub', ['config', 'view', '--minify', '--raw', '-o', 'jsonpath={.users[0].user.client-certificate-data}'])).trim(),
      'base64',
    );
    const key = Buffer.from((await ok('hub', ['config', 'view', '--minify', '--raw', '-o', 'jsonpath={.users[0].user.client-key-data}'])).trim(), 'base64');
    const frames = await new Promise<string>((resolve, reject) => {
      const req = https.request({
        host: hubAddress,
        port: 6443,
        path: `${GW}/cluster1/proxy/api/v1/namespaces/kube-system/configmaps?watch=true`,
        ca,
        cert,
        key,
        headers: {
          Connection: 'Upgrade',
          Upgrade: 'websocket',
          'Sec-WebSocket-Version': '13',
          'Sec-WebSocket-Key': Buffer.from('ocm-lab-gateway!').toString('base64'),
          'Sec-WebSocket-Protocol': 'base64.binary.k8s.io',
          Origin: 'http://localhost',
        },
      });
      req.on('upgrade', (res, socket) => {
        expect(res.statusCode).toBe(101);
        let data = Buffer.alloc(0);
        socket.on('data', (c: Buffer) => {
          data = Buffer.concat([data, c]);
          const text = decodeFrames(data);
          if (text.includes('"ADDED"')) {
            socket.destroy();
            resolve(text);
          }
        });
        socket.on('error', reject);
      });
      req.on('response', (res) => reject(new Error(`no upgrade: HTTP ${res.statusCode}`)));
      req.on('error', reject);
      req.end();
    });
    expect(frames).toMatch(/"type":"ADDED".*"kind":"ConfigMap"/);
  });

  it('exec and logs -f through the gateway, as they work directly', async () => {
    const gwFile = path.join(own.path, 'cluster1-gw.kubeconfig');
    const pod = (await ok('cluster1', ['-n', 'open-cluster-management-cluster-proxy', 'get', 'pods', '-o', 'name'])).split('\n')[0]!;
    const ns = ['-n', 'open-cluster-management-cluster-proxy'];
    const directLogs = await k('cluster1', [...ns, 'logs', pod, '--tail=1']);
    expect(directLogs.exitCode, directLogs.stderr).toBe(0);
    const viaLogs = await kc(gwFile, [...ns, 'logs', pod, '--tail=1']);
    expect(viaLogs.exitCode, viaLogs.stderr).toBe(0);
    // logs -f: the stream stays open and delivers the first line before it is stopped.
    const follow = execa(await kubectlPath(), ['--kubeconfig', gwFile, ...ns, 'logs', '-f', pod, '--tail=1'], { reject: false, timeout: 30_000 });
    let followed = '';
    follow.stdout?.on('data', (c: Buffer) => (followed += c.toString()));
    try {
      await waitUntil(async () => (followed.trim() ? true : undefined), 'a line from logs -f through the gateway', 20_000);
      expect(follow.exitCode).toBeNull(); // still streaming
    } finally {
      follow.kill();
      await follow;
    }
    const script = 'process.stdout.write("exec-through-the-gateway")';
    const directExec = await k('cluster1', [...ns, 'exec', pod, '--', 'node', '-e', script]);
    expect(directExec.exitCode, directExec.stderr).toBe(0);
    const viaExec = await kc(gwFile, [...ns, 'exec', pod, '--', 'node', '-e', script]);
    expect(viaExec.exitCode, viaExec.stderr).toBe(0);
    expect(viaExec.stdout).toBe('exec-through-the-gateway');
  });

  it('seed 004: with identity penetration the cluster judges the hub user, with its own Forbidden', async () => {
    // The gateway's ServiceAccount may impersonate on cluster1; alice may use the proxy on the hub
    // and read pods in team-a on cluster1 only.
    await ok(
      'cluster1',
      ['apply', '-f', '-'],
      `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: gateway-impersonator}
rules: [{apiGroups: [""], resources: [users, groups, serviceaccounts], verbs: [impersonate]}, {apiGroups: [authentication.k8s.io], resources: [userextras/authentication.kubernetes.io/credential-id, uids], verbs: [impersonate]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: gateway-impersonator}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: gateway-impersonator}
subjects: [{kind: ServiceAccount, name: cluster-gateway, namespace: open-cluster-management-managed-serviceaccount}]
---
apiVersion: v1
kind: Namespace
metadata: {name: team-a}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: alice-view, namespace: team-a}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}
subjects: [{kind: User, name: "system:serviceaccount:default:alice"}]
`,
    );
    const alice = await viaGateway(await hubUserKubeconfig('alice'));
    await ok(
      'hub',
      ['apply', '-f', '-'],
      `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: gateway-proxy-user}
rules: [{apiGroups: [cluster.core.oam.dev], resources: [clustergateways/proxy], verbs: [get, create, update, patch, delete]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: alice-gateway-proxy}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: gateway-proxy-user}
subjects: [{kind: ServiceAccount, name: alice, namespace: default}]
`,
    );
    // Without penetration alice acts as the gateway's ServiceAccount (cluster-admin from the seed-001 test).
    expect((await kc(alice, ['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}'])).stdout).toBe(GW_SA);
    await ok('hub', [
      '-n',
      GW_NS,
      'patch',
      'deployment',
      'cluster-gateway',
      '--type=json',
      '-p',
      JSON.stringify([{ op: 'add', path: '/spec/template/spec/containers/0/args/-', value: PENETRATION_GATE }]),
    ]);
    await waitUntil(
      async () => {
        const r = await kc(alice, ['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}']);
        return r.stdout === 'system:serviceaccount:default:alice' ? true : undefined;
      },
      'the new gateway pod to impersonate alice',
      120_000,
      1_000,
    );
    expect((await kc(alice, ['-n', 'team-a', 'get', 'pods'])).stderr).toMatch(/No resources found in team-a namespace/);
    const elsewhere = await kc(alice, ['-n', 'default', 'get', 'pods']);
    expect(elsewhere.stderr).toContain(
      'Error from server (Forbidden): pods is forbidden: User "system:serviceaccount:default:alice" cannot list resource "pods" in API group "" in the namespace "default"',
    );
  });

  it('ocm-tls-profile with a TLS 1.3 minimum: the gateway refuses a TLS 1.2 client, without a restart; deleted, TLS 1.2 is served again', async () => {
    /** The TLS version the gateway's port agrees to with a client capped at `max`, or the handshake error. */
    const handshake = async (max: tls.SecureVersion) => {
      const host = await gatewayAddress();
      return new Promise<string>((resolve) => {
        const s = tls.connect({ host, port: GATEWAY_PORT, rejectUnauthorized: false, maxVersion: max }, () => {
          resolve(s.getProtocol() ?? 'none');
          s.end();
        });
        s.on('error', (err) => resolve(`refused: ${err.message}`));
      });
    };
    const podBefore = await gatewayAddress();
    expect(await handshake('TLSv1.2')).toBe('TLSv1.2');
    await ok('hub', ['-n', 'open-cluster-management-addon', 'create', 'configmap', 'ocm-tls-profile', '--from-literal=minTLSVersion=VersionTLS13']);
    try {
      await waitUntil(async () => ((await handshake('TLSv1.2')).startsWith('refused') ? true : undefined), 'the gateway to refuse TLS 1.2', 30_000);
      expect(await handshake('TLSv1.3')).toBe('TLSv1.3');
      expect(await gatewayAddress()).toBe(podBefore);
    } finally {
      await ok('hub', ['-n', 'open-cluster-management-addon', 'delete', 'configmap', 'ocm-tls-profile']);
    }
    await waitUntil(async () => ((await handshake('TLSv1.2')) === 'TLSv1.2' ? true : undefined), 'the gateway to serve TLS 1.2 again', 30_000);
    await waitUntil(
      async () => ((await k('hub', ['get', '--raw', `${GW}/cluster1/proxy/healthz`])).stdout === 'ok' ? true : undefined),
      'the gateway to reach cluster1 again',
      60_000,
    );
  });

  it('a ClusterGateway follows its Secret: appears, changes and goes', async () => {
    await ok('hub', ['-n', CRED_NS, 'create', 'secret', 'generic', 'manual', '--from-literal=endpoint=https://192.0.2.1:6443', '--from-literal=token=t']);
    expect((await k('hub', ['get', 'clustergateway', 'manual'])).exitCode).toBe(1);
    await ok('hub', ['-n', CRED_NS, 'label', 'secret', 'manual', 'cluster.core.oam.dev/cluster-credential-type=ServiceAccountToken']);
    const row = await waitUntil(
      async () => {
        const r = await k('hub', ['get', 'clustergateway', 'manual', '--no-headers']);
        return r.exitCode === 0 ? r.stdout : undefined;
      },
      'ClusterGateway manual',
      10_000,
      200,
    );
    expect(row).toMatch(/^manual +ServiceAccountToken +Const +Unknown/);
    await ok('hub', ['-n', CRED_NS, 'delete', 'secret', 'manual']);
    await waitUntil(
      async () => ((await k('hub', ['get', 'clustergateway', 'manual'])).exitCode === 1 ? true : undefined),
      'ClusterGateway manual to go',
      10_000,
      200,
    );
  });

  it('no Node.js runtime warning (deprecations, listener leaks, …) in the log of any process of the lab', async () => {
    // Node writes `(node:PID) [DEP0123] DeprecationWarning: …`, `(node:PID) MaxListenersExceededWarning: …` to stderr.
    const warning = /\(node:\d+\) (\[[A-Z]+\d+\] )?\w*Warning\b/;
    expect(warning.test('(node:7) [DEP0123] DeprecationWarning: Setting the TLS ServerName to an IP address is not permitted')).toBe(true);
    const logs = (await filesUnder(labDir(config.name))).filter((f) => f.endsWith('.log'));
    // The nodelets', the control planes' and every container's: the gateway, its manager, the addons' agents and servers.
    expect(logs.length).toBeGreaterThan(20);
    const found: string[] = [];
    for (const file of logs) {
      const line = (await fs.readFile(file, 'utf8')).split('\n').find((l) => warning.test(l));
      if (line) found.push(`${path.relative(labDir(config.name), file)}: ${line.slice(0, 200)}`);
    }
    expect(found).toEqual([]);
  });
});

/** Payloads of the unmasked server→client WebSocket frames in `buf` (a watch sends each event as one text frame of JSON). */
function decodeFrames(buf: Buffer): string {
  let out = '';
  let i = 0;
  while (i + 2 <= buf.length) {
    let len = buf[i + 1]! & 0x7f;
    let off = i + 2;
    if (len === 126) {
      if (off + 2 > buf.length) break;
      len = buf.readUInt16BE(off);
      off += 2;
    } else if (len === 127) {
      if (off + 8 > buf.length) break;
      len = Number(buf.readBigUInt64BE(off));
      off += 8;
    }
    if (off + len > buf.length) break;
    out += buf.subarray(off, off + len).toString('utf8');
    i = off + len;
  }
  return out;
}
