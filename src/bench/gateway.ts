import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import https from 'node:https';
import path from 'node:path';
import { execa } from 'execa';
import { hubAdminKubeconfig } from '../lab/kubeconfig-access.js';
import type { KubeClient } from '../kube/client.js';
import { hubTunnel } from '../addons/cluster-proxy/hub-tunnel.js';
import { gatewayProxyPath } from '../addons/cluster-gateway/kubeconfig.js';
import { CLUSTER_PROXY_SERVER_NAME } from '../addons/cluster-gateway/proxy.js';
import { hubClientFor } from '../addons/hub-client.js';
import { fromBase64 } from '../kube/objects.js';
import { defaultLabConfig, renderLabConfig } from '../config/index.js';
import { downLab, upLab } from '../lab/lifecycle.js';
import { ensureBinaries } from '../provision/index.js';
import { withBenchLabHome } from './home.js';
import type { Benchmark } from './registry.js';

const ROUNDS = 200;
/** Rounds are measured in blocks; with an upstream gateway, blocks alternate between the two. */
const BLOCKS = 4;
const UPSTREAM_PORT = 9461;
const GW_NS = 'open-cluster-management-cluster-gateway';

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
};

/** One way to the cluster's API: a keep-alive agent, a base URL (maybe a proxy path) and credentials. */
interface Route {
  label: string;
  agent: https.Agent;
  host: string;
  port: number;
  prefix: string;
  headers: Record<string, string>;
}

function call(r: Route, method: string, p: string, body?: unknown): Promise<number> {
  const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        method,
        host: r.host,
        port: r.port,
        path: `${r.prefix}${p}`,
        agent: r.agent,
        headers: { ...r.headers, accept: 'application/json', ...(data ? { 'content-type': 'application/json', 'content-length': data.length } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          if ((res.statusCode ?? 0) >= 300) reject(new Error(`${r.label}: ${method} ${p}: HTTP ${res.statusCode}: ${Buffer.concat(chunks).toString().slice(0, 300)}`));
          else resolve(Number(process.hrtime.bigint() - started) / 1e6);
        });
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

/** create + update + delete of one ConfigMap, timed as a whole. */
async function cycle(r: Route, name: string): Promise<number> {
  const base = '/api/v1/namespaces/default/configmaps';
  const t = process.hrtime.bigint();
  await call(r, 'POST', base, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: '1' } });
  await call(r, 'PUT', `${base}/${name}`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: '2' } });
  await call(r, 'DELETE', `${base}/${name}`);
  return Number(process.hrtime.bigint() - t) / 1e6;
}

/**
 * `npm run bench -- gateway`: GET of one ConfigMap and a create+update+delete cycle on
 * cluster1, (a) directly from the host, (b) through cluster-proxy's tunnel from the host,
 * (c) through the hub API server and cluster-gateway's proxy subresource — the same
 * ServiceAccount token on the cluster every time, keep-alive clients, rounds interleaved.
 */
export const gatewayBenchmark: Benchmark = {
  name: 'gateway',
  describe: 'GET and create+update+delete on cluster1: direct vs through the tunnel vs through cluster-gateway (p50/p99); --upstream BIN adds upstream cluster-gateway side by side',
  run: (args) =>
    withBenchLabHome(async (home) => {
      const labFile = path.join(home, 'lab.yaml');
      const base = defaultLabConfig();
      const config = { ...base, name: 'bench-gateway', clusters: base.clusters.filter((c) => c.name !== 'cluster2'), source: labFile };
      await fs.writeFile(labFile, renderLabConfig(config));
      try {
        const up = await upLab(config, { renderer: 'silent' });
        const kubeconfig = up.status.kubeconfig ?? '';
        const { kubectl } = await ensureBinaries(['kubectl']);
        const k = (args: string[]) => execa(kubectl, ['--kubeconfig', kubeconfig, ...args]);
        await k(['--context', 'cluster1', 'create', 'clusterrolebinding', 'bench-gateway-edit', '--clusterrole=edit', '--serviceaccount=open-cluster-management-managed-serviceaccount:cluster-gateway']);
        await k(['--context', 'cluster1', '-n', 'default', 'create', 'configmap', 'bench', '--from-literal=a=b']);

        const hub = await hubClientFor(config);
        const secret = await hub.get<{ data?: Record<string, string> }>('/api/v1/namespaces/open-cluster-management-credentials/secrets/cluster1');
        const token = fromBase64(secret.data?.token);
        const spokeCa = fromBase64(secret.data?.['ca.crt']);
        const cluster1 = new URL(up.status.clusters.find((c) => c.name === 'cluster1')?.apiServer ?? '');
        const hubEndpoint = hub.endpoint;
        const hubUrl = new URL(hubEndpoint.server);
        const { client: tunnel } = await hubTunnel(hub);
        const upstreamBin = upstreamFlag(args);
        const auth = { authorization: `Bearer ${token}` };
        const routes: Route[] = [
          { label: 'direct', agent: new https.Agent({ keepAlive: true, ca: spokeCa }), host: cluster1.hostname, port: Number(cluster1.port), prefix: '', headers: auth },
          {
            label: 'tunnel',
            agent: tunnel.httpsAgent({ keepAlive: true, ca: spokeCa, servername: CLUSTER_PROXY_SERVER_NAME }),
            host: 'cluster1',
            port: 443,
            prefix: '',
            headers: auth,
          },
          {
            label: 'gateway',
            agent: new https.Agent({ keepAlive: true, ca: hubEndpoint.caPem, cert: hubEndpoint.certPem, key: hubEndpoint.keyPem }),
            host: hubUrl.hostname,
            port: Number(hubUrl.port),
            prefix: gatewayProxyPath('cluster1'),
            headers: hubEndpoint.token ? { authorization: `Bearer ${hubEndpoint.token}` } : {},
          },
        ];
        const labels = ['direct', 'tunnel', 'gateway', ...(upstreamBin ? ['upstream'] : [])];
        const gets: Record<string, number[]> = Object.fromEntries(labels.map((l) => [l, []]));
        const cycles: Record<string, number[]> = Object.fromEntries(labels.map((l) => [l, []]));
        let upstream: ChildProcess | undefined;
        try {
          if (upstreamBin) upstream = await startUpstreamGateway(upstreamBin, hub, home, config, up.status);
          const perBlock = Math.ceil(ROUNDS / BLOCKS);
          for (let block = 0; block < BLOCKS; block++) {
            for (const impl of upstreamBin ? ['gateway', 'upstream'] : ['gateway']) {
              if (upstreamBin) await routeApiServiceTo(hub, impl === 'upstream', routes[2]!);
              // Warm-up: connections, TLS sessions, the gateway's authorization cache.
              for (const r of routes) for (let i = 0; i < 5; i++) await call(r, 'GET', '/api/v1/namespaces/default/configmaps/bench');
              for (let i = 0; i < perBlock; i++) {
                for (const r of routes) {
                  const label = r.label === 'gateway' ? impl : r.label;
                  if (impl === 'upstream' && r.label !== 'gateway') continue; // direct and tunnel once per round
                  gets[label]!.push(await call(r, 'GET', '/api/v1/namespaces/default/configmaps/bench'));
                  if (i % 4 === 0) cycles[label]!.push(await cycle(r, `bench-${label}-${block}-${i}`));
                }
              }
            }
          }
        } finally {
          if (upstreamBin) await routeApiServiceTo(hub, false, routes[2]!).catch(() => undefined);
          if (upstream?.pid) {
            try {
              process.kill(-upstream.pid, 'SIGTERM');
            } catch {
              // already gone
            }
          }
          tunnel.close();
          hub.close();
          for (const r of routes) r.agent.destroy();
        }
        const row = (label: string, xs: number[], against?: number[]) =>
          `  ${label.padEnd(56)} p50 ${quantile(xs, 0.5).toFixed(2).padStart(8)} ms   p99 ${quantile(xs, 0.99).toFixed(2).padStart(8)} ms${against ? `   p50 ×${(quantile(xs, 0.5) / quantile(against, 0.5)).toFixed(2)} of the tunnel` : ''}`;
        const out = (s: string) => process.stdout.write(`${s}\n`);
        const table = (what: string, xs: Record<string, number[]>) => {
          out(`${what} (${xs.direct!.length} rounds, interleaved, keep-alive clients, the same ServiceAccount token on cluster1):`);
          out(row('direct (host → cluster1 API server)', xs.direct!));
          out(row('through the tunnel (host → proxy-server → agent)', xs.tunnel!));
          out(row('through ocm-lab cluster-gateway (hub API → gateway → tunnel)', xs.gateway!, xs.tunnel));
          if (xs.upstream) out(row('through upstream cluster-gateway v1.9.0 (same path)', xs.upstream, xs.tunnel));
        };
        table('GET /api/v1/namespaces/default/configmaps/bench', gets);
        table('create + update + delete of a ConfigMap', cycles);
      } finally {
        await downLab(config).catch(() => undefined);
      }
    }),
};

/** `--upstream PATH`: an upstream cluster-gateway apiserver binary (github.com/oam-dev/cluster-gateway/cmd/apiserver) to compare with. */
function upstreamFlag(args: string[]): string | undefined {
  const i = args.findIndex((a) => a === '--upstream' || a.startsWith('--upstream='));
  if (i === -1) return undefined;
  const value = args[i]!.includes('=') ? args[i]!.slice('--upstream='.length) : args[i + 1];
  if (!value) throw new Error('--upstream needs the path of an upstream cluster-gateway apiserver binary');
  return path.resolve(value);
}

/**
 * Runs the upstream gateway in the hub's network namespace next to ours, on the same
 * serving certificate (so the APIService's caBundle holds), the admin's hub credentials,
 * OCM integration and cluster-proxy's proxy-client certificate.
 */
async function startUpstreamGateway(bin: string, hub: KubeClient, home: string, config: Parameters<typeof hubAdminKubeconfig>[0], status: { vpcs: { name: string; netns: string | null }[]; clusters: { hub: boolean; vpc: string; apiServer: string }[] }): Promise<ChildProcess> {
  const hubCluster = status.clusters.find((c) => c.hub)!;
  const netns = status.vpcs.find((v) => v.name === hubCluster.vpc)?.netns;
  if (!netns) throw new Error('the upstream comparison needs the local runtime (the hub VPC network namespace)');
  const hubAddress = new URL(hubCluster.apiServer).hostname;
  const dir = path.join(home, 'upstream-gateway');
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const secret = async (ns: string, name: string) => (await hub.get<{ data?: Record<string, string> }>(`/api/v1/namespaces/${ns}/secrets/${name}`)).data ?? {};
  const serving = await secret(GW_NS, 'cluster-gateway-serving');
  const proxyClient = await secret('open-cluster-management-cluster-proxy', 'proxy-client');
  const files: Record<string, string> = { 'tls.crt': serving['tls.crt']!, 'tls.key': serving['tls.key']!, 'proxy.crt': proxyClient['tls.crt']!, 'proxy.key': proxyClient['tls.key']!, 'proxy-ca.crt': proxyClient['ca.crt']! };
  for (const [name, data] of Object.entries(files)) await fs.writeFile(path.join(dir, name), fromBase64(data), { mode: 0o600 });
  const kubeconfig = hubAdminKubeconfig(config);
  const args = [
    'netns', 'exec', netns, bin,
    `--secure-port=${UPSTREAM_PORT}`, `--bind-address=${hubAddress}`,
    `--tls-cert-file=${path.join(dir, 'tls.crt')}`, `--tls-private-key-file=${path.join(dir, 'tls.key')}`,
    `--kubeconfig=${kubeconfig}`, `--authentication-kubeconfig=${kubeconfig}`, `--authorization-kubeconfig=${kubeconfig}`,
    '--secret-namespace=open-cluster-management-credentials', '--ocm-integration=true',
    `--proxy-host=${hubAddress}`, '--proxy-port=8090',
    `--proxy-ca-cert=${path.join(dir, 'proxy-ca.crt')}`, `--proxy-cert=${path.join(dir, 'proxy.crt')}`, `--proxy-key=${path.join(dir, 'proxy.key')}`,
  ];
  await upstreamService(hub, hubAddress);
  const log = await fs.open(path.join(dir, 'upstream.log'), 'w');
  const child = spawn('ip', args, { detached: true, stdio: ['ignore', log.fd, log.fd] });
  child.on('exit', () => void log.close());
  return child;
}

/** Points the gateway Service at a port on the gateway pod's (host network) address and waits until that server answers through the hub. */
const UPSTREAM_SERVICE = 'cluster-gateway-upstream';

/**
 * A Service without a selector whose endpoint is the upstream gateway (a process in the hub's VPC
 * namespace, on the hub's address), so the APIService can be pointed at either implementation.
 */
async function upstreamService(hub: KubeClient, hubAddress: string): Promise<void> {
  await hub.post(`/api/v1/namespaces/${GW_NS}/services`, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: UPSTREAM_SERVICE, namespace: GW_NS },
    spec: { ports: [{ name: 'https', port: 443, targetPort: UPSTREAM_PORT, protocol: 'TCP' }] },
  });
  // v1 Endpoints (mirrored into an EndpointSlice): what the aggregator's endpoint routing reads.
  await hub.post(`/api/v1/namespaces/${GW_NS}/endpoints`, {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: { name: UPSTREAM_SERVICE, namespace: GW_NS },
    subsets: [{ addresses: [{ ip: hubAddress }], ports: [{ name: 'https', port: UPSTREAM_PORT, protocol: 'TCP' }] }],
  });
}

async function routeApiServiceTo(hub: KubeClient, upstream: boolean, gatewayRoute: Route): Promise<void> {
  const expectUpstream = upstream;
  await hub.mergePatch('/apis/apiregistration.k8s.io/v1/apiservices/v1alpha1.cluster.core.oam.dev', {
    spec: { service: { name: upstream ? UPSTREAM_SERVICE : 'cluster-gateway', namespace: GW_NS, port: 443 } },
  });
  const deadline = Date.now() + 90_000;
  for (;;) {
    // Upstream also serves virtualclusters in the group: its discovery tells the two apart.
    const discovery = await new Promise<string>((resolve) => {
      https
        .get({ host: gatewayRoute.host, port: gatewayRoute.port, path: '/apis/cluster.core.oam.dev/v1alpha1', agent: gatewayRoute.agent, headers: gatewayRoute.headers }, (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () => resolve(res.statusCode === 200 ? body : ''));
        })
        .on('error', () => resolve(''));
    });
    if (discovery && discovery.includes('virtualclusters') === expectUpstream) {
      try {
        await call(gatewayRoute, 'GET', '/healthz');
        return;
      } catch {
        // not routed yet
      }
    }
    if (Date.now() > deadline) throw new Error(`the hub does not reach the ${expectUpstream ? 'upstream' : 'ocm-lab'} gateway within 90 s`);
    await new Promise((r) => setTimeout(r, 500));
  }
}
