// A lab of its own, not the shared hub + cluster1 one: it comes up with `clusterProxy.entrypoint: port-forward`, which would move every other user's tunnel.
import https from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LabConfig } from '../../src/config/index.js';
import { downLab } from '../../src/lab/lifecycle.js';
import { KubeClient } from '../../src/kube/client.js';
import { readKubeconfig } from '../../src/kube/kubeconfig.js';
import { hubTunnel } from '../../src/addons/cluster-proxy/hub-tunnel.js';
import { cli, hubAndCluster1Config, isolatedLabHome, kubectl, machineSnapshot } from '../support/lab.js';
import { upLabIn } from '../support/test-lab.js';
import { waitUntil } from '../support/wait.js';

const PROXY_NS = 'open-cluster-management-cluster-proxy';
const AGENT = 'cluster-proxy-proxy-agent';

interface Container {
  name: string;
  args?: string[];
}
interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

/**
 * cluster-proxy's entrypoint types on the local runtime (the nodelet serves the kubelet API's port-forward):
 * a lab brought up with `clusterProxy.entrypoint: port-forward`, whose agents reach the proxy-server only
 * through the hub's API server; then its ManagedProxyConfiguration switched to LoadBalancerService (no load
 * balancer controller exists here: the Service is made, the addon says why it waits, the agents stay) and
 * to Hostname.
 */
describe('cluster-proxy entrypoint types: PortForward, LoadBalancerService without a load balancer, Hostname', () => {
  let home: Awaited<ReturnType<typeof isolatedLabHome>>;
  let config: LabConfig;
  let kubeconfig: string;
  let env: NodeJS.ProcessEnv;
  const ok = async (context: string, args: string[]) => {
    const r = await kubectl(kubeconfig, ['--context', context, ...args]);
    if (r.exitCode !== 0) throw new Error(`kubectl --context ${context} ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const json = async <T>(context: string, args: string[]) => JSON.parse(await ok(context, [...args, '-o', 'json'])) as T;
  const agentContainers = async () =>
    (await json<{ spec: { template: { spec: { containers: Container[] } } } }>('cluster1', ['-n', PROXY_NS, 'get', 'deployment', AGENT])).spec.template.spec
      .containers;
  const dialArg = async () => (await agentContainers()).find((c) => c.name === 'proxy-agent')?.args?.find((a) => a.startsWith('--proxy-server-host='));
  const mpcConditions = async () =>
    (await json<{ status?: { conditions?: Condition[] } }>('hub', ['get', 'managedproxyconfiguration', 'cluster-proxy'])).status?.conditions ?? [];
  const configured = async () =>
    (await json<{ status?: { conditions?: Condition[] } }>('hub', ['-n', 'cluster1', 'get', 'managedclusteraddon', 'cluster-proxy'])).status?.conditions?.find(
      (c) => c.type === 'Configured',
    );
  const patchEntrypoint = (entrypoint: Record<string, unknown>) =>
    ok('hub', ['patch', 'managedproxyconfiguration', 'cluster-proxy', '--type', 'merge', '-p', JSON.stringify({ spec: { proxyServer: { entrypoint } } })]);
  const healthy = async () => {
    const r = await cli(['proxy', 'health'], env);
    return r.exitCode === 0 && /^cluster1 +True +True +True +[0-9.]+ms$/m.test(r.stdout) ? r.stdout : undefined;
  };

  beforeAll(async () => {
    home = await isolatedLabHome('entrypoint');
    ({ config, kubeconfig, env } = await upLabIn(home.home, {
      ...hubAndCluster1Config('e2e-entrypoint', ['cluster-proxy']),
      clusterProxy: { entrypoint: 'port-forward' },
    }));
  }, 600_000);

  afterAll(async () => {
    await downLab(config).catch(() => undefined);
    expect((await machineSnapshot(home.home)).processes).toEqual([]);
    await home.cleanup();
  }, 300_000);

  it('up with entrypoint port-forward: agents dial their own port-forward proxy, proxy health is True and a request reaches cluster1', async () => {
    const mpc = await json<{ spec: { proxyServer: { entrypoint: { type: string } } } }>('hub', ['get', 'managedproxyconfiguration', 'cluster-proxy']);
    expect(mpc.spec.proxyServer.entrypoint.type).toBe('PortForward');
    const containers = await agentContainers();
    expect(containers.map((c) => c.name)).toContain('port-forward-proxy');
    expect(await dialArg()).toBe('--proxy-server-host=127.0.0.1');
    expect(await ok('hub', ['-n', PROXY_NS, 'get', 'role,rolebinding', '-o', 'name'])).toContain('cluster-proxy-addon-agent:portforward');
    expect(await mpcConditions()).toContainEqual(expect.objectContaining({ type: 'EntrypointReady', status: 'True', reason: 'PortForward' }));
    // The tunnel came through the API server: the port-forward proxy logged the connection it carried.
    const logs = await ok('cluster1', ['-n', PROXY_NS, 'logs', `deploy/${AGENT}`, '-c', 'port-forward-proxy']);
    expect(logs).toMatch(/carrying a connection to proxy-server pod \S+ through the hub's API server/);
    await waitUntil(healthy, 'proxy health True for cluster1');

    // An authenticated request to cluster1's API server through the tunnel, with cluster1's admin credentials.
    const hub = await KubeClient.fromKubeconfig(kubeconfig);
    const { client } = await hubTunnel(hub);
    try {
      const admin = await readKubeconfig(kubeconfig, 'cluster1');
      const agent = client.httpsAgent({ rejectUnauthorized: false, keepAlive: false, cert: admin.certPem, key: admin.keyPem });
      const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        https
          .get({ host: 'cluster1', port: 443, path: '/api/v1/namespaces/kube-system', agent, timeout: 15_000 }, (res) => {
            let body = '';
            res.on('data', (c: Buffer) => (body += c.toString('utf8')));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          })
          .on('error', reject);
      });
      agent.destroy();
      expect(answer.status, answer.body).toBe(200);
      expect((JSON.parse(answer.body) as { metadata: { name: string } }).metadata.name).toBe('kube-system');
    } finally {
      client.close();
      hub.close();
    }
  });

  it('LoadBalancerService without a load balancer: the Service is made with both ports, the addon says why it waits, the agents stay', async () => {
    await patchEntrypoint({ type: 'LoadBalancerService', loadBalancerService: { name: 'proxy-agent-entrypoint' } });
    const svc = await waitUntil(async () => {
      const r = await kubectl(kubeconfig, ['--context', 'hub', '-n', PROXY_NS, 'get', 'service', 'proxy-agent-entrypoint', '-o', 'json']);
      return r.exitCode === 0 ? (JSON.parse(r.stdout) as { spec: { type: string; ports: { name: string; port: number; nodePort?: number }[] } }) : undefined;
    }, 'Service proxy-agent-entrypoint');
    expect(svc.spec.type).toBe('LoadBalancer');
    expect(svc.spec.ports.map((p) => `${p.name}:${p.port}`)).toEqual(['proxy-server:8090', 'agent-server:8091']);
    const waiting = await waitUntil(async () => {
      const c = await configured();
      return c?.status === 'False' && c.reason === 'EntrypointNotReady' ? c : undefined;
    }, 'Configured False with reason EntrypointNotReady');
    expect(waiting.message).toContain('proxy-agent-entrypoint of type LoadBalancer has no status.loadBalancer.ingress yet');
    expect(await mpcConditions()).toContainEqual(expect.objectContaining({ type: 'EntrypointReady', status: 'False', reason: 'LoadBalancerPending' }));
    // The agents were left as they were, and the permission they use stays while the new entrypoint is not usable.
    expect(await dialArg()).toBe('--proxy-server-host=127.0.0.1');
    expect(await ok('hub', ['-n', PROXY_NS, 'get', 'role', '-o', 'name'])).toContain('cluster-proxy-addon-agent:portforward');
    await waitUntil(healthy, 'proxy health still True for cluster1');
  });

  it('Hostname: agents dial the hub address, the Service and the port-forward permission go, proxy health is True', async () => {
    const manager = await json<{ spec: { template: { spec: { containers: Container[] } } } }>('hub', [
      '-n',
      'open-cluster-management-addon',
      'get',
      'deployment',
      'cluster-proxy-addon-manager',
    ]);
    const host = manager.spec.template.spec.containers[0]?.args?.find((a) => a.startsWith('--proxy-entrypoint-host='))?.split('=')[1] ?? '';
    expect(host).not.toBe('');
    await patchEntrypoint({ type: 'Hostname', hostname: { value: host }, loadBalancerService: null });
    await waitUntil(async () => ((await dialArg()) === `--proxy-server-host=${host}` ? true : undefined), `the agent dials ${host}`);
    expect((await agentContainers()).map((c) => c.name)).not.toContain('port-forward-proxy');
    await waitUntil(
      async () =>
        (await ok('hub', ['-n', PROXY_NS, 'get', 'service,role,rolebinding', '-o', 'name'])).match(/proxy-agent-entrypoint|portforward/) ? undefined : true,
      'the LoadBalancer Service and the port-forward Role and RoleBinding removed',
    );
    expect((await configured())?.status).toBe('True');
    await waitUntil(healthy, 'proxy health True for cluster1 on the Hostname entrypoint');
  });
});
