import fs from 'node:fs/promises';
import https from 'node:https';
import path from 'node:path';
import { execa } from 'execa';
import { hubTunnel } from '../addons/cluster-proxy/hub-tunnel.js';
import { gatewayProxyPath } from '../addons/cluster-gateway/kubeconfig.js';
import { CLUSTER_PROXY_SERVER_NAME } from '../addons/cluster-gateway/proxy.js';
import { hubClientFor } from '../addons/hub-client.js';
import { fromBase64 } from '../kube/objects.js';
import { CLUSTER_GATEWAY_UPSTREAM_VERSION } from '../provision/recipes.js';
import { UPSTREAM_CLUSTER_GATEWAY_IMAGE } from '../images/catalogue.js';
import { deployUpstreamGateway, removeUpstreamGateway, switchApiService } from './gateway-upstream.js';
import { defaultLabConfig, renderLabConfig } from '../config/index.js';
import { downLab, upLab } from '../lab/lifecycle.js';
import { ensureBinaries } from '../provision/index.js';
import { withBenchLabHome } from './home.js';
import type { Benchmark } from './types.js';
import { sleep } from '../kube/wait.js';

const ROUNDS = 200;
/** Rounds are measured in blocks; with an upstream gateway, blocks alternate between the two. */
const BLOCKS = 4;

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
          if ((res.statusCode ?? 0) >= 300)
            reject(new Error(`${r.label}: ${method} ${p}: HTTP ${res.statusCode}: ${Buffer.concat(chunks).toString().slice(0, 300)}`));
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

/** GET the group's discovery through the hub: upstream also serves `virtualclusters` there, which tells the two apart. */
function servedBy(r: Route): Promise<'ours' | 'upstream' | 'none'> {
  return new Promise((resolve) => {
    https
      .get({ host: r.host, port: r.port, path: '/apis/cluster.core.oam.dev/v1alpha1', agent: r.agent, headers: r.headers }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve(res.statusCode !== 200 ? 'none' : body.includes('virtualclusters') ? 'upstream' : 'ours'));
      })
      .on('error', () => resolve('none'));
  });
}

async function waitServedBy(r: Route, who: 'ours' | 'upstream', timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let seen = 0;
  // The aggregator picks up an APIService change asynchronously: require a few answers in a row.
  while (seen < 5) {
    seen = (await servedBy(r)) === who ? seen + 1 : 0;
    if (Date.now() > deadline)
      throw new Error(`the hub does not route cluster.core.oam.dev to ${who === 'ours' ? "ocm-lab's" : "upstream's"} gateway within ${timeoutMs / 1000} s`);
    if (seen < 5) await sleep(200);
  }
}

type Impl = 'ours' | 'upstream';
const IDLE_ROUNDS = 6;
const IDLE_MS = 7_000;

/** Established TCP connections in a network namespace to a destination port, as `local peer` pairs (ss -Htn). */
async function connectionsTo(netns: string, port: number): Promise<string[]> {
  const r = await execa('ip', ['netns', 'exec', netns, 'ss', '-Htn', 'state', 'established', `( dport = :${port} )`], { reject: false });
  return String(r.stdout)
    .split('\n')
    .map((l) => l.trim().split(/\s+/).slice(-2).join(' '))
    .filter((l) => l.includes(':'));
}

/** Ports the hub API server dials each gateway's pod on. */
const GATEWAY_POD_PORT: Record<Impl, number> = { ours: 9460, upstream: 9443 };
const GET_PATH = '/api/v1/namespaces/default/configmaps/bench';

type Series = Record<'direct' | 'tunnel' | 'hub' | 'ours' | 'upstream' | 'object:ours' | 'object:upstream', number[]>;

const series = (): Series => ({ direct: [], tunnel: [], hub: [], ours: [], upstream: [], 'object:ours': [], 'object:upstream': [] });

/** What the rounds measure: GETs, create+update+delete cycles, GETs after an idle pause, and connection reuse. */
interface Results {
  gets: Series;
  cycles: Series;
  idle: Series;
  reuse: string[];
}

/** The ways to cluster1 the rounds compare, and the hub connections behind them. */
interface BenchRoutes {
  hub: Awaited<ReturnType<typeof hubClientFor>>;
  tunnel: Awaited<ReturnType<typeof hubTunnel>>['client'];
  direct: Route;
  viaTunnel: Route;
  hubOwn: Route;
  gateway: Route;
  all: Route[];
}

/**
 * `npm run bench -- gateway`: GET of one ConfigMap and a create+update+delete cycle on
 * cluster1, (a) directly from the host, (b) through cluster-proxy's tunnel from the host,
 * (c) through the hub API server and cluster-gateway's proxy subresource — ours, and
 * upstream's Go build as a pod beside it, blocks alternating by switching the APIService —
 * the same ServiceAccount token on the cluster every time, keep-alive clients, rounds
 * interleaved. Two reference rows show where the gateway's time goes: a GET the hub API
 * server answers itself, and a GET of the ClusterGateway object (hub → aggregator → gateway,
 * no tunnel).
 */
export const gatewayBenchmark: Benchmark = {
  name: 'gateway',
  describe:
    `GET and create+update+delete on cluster1: direct vs tunnel vs ocm-lab's cluster-gateway vs upstream's ${CLUSTER_GATEWAY_UPSTREAM_VERSION} ` +
    "(p50/p99); --no-upstream leaves upstream's out",
  options: [{ flag: '--no-upstream', describe: "leave upstream's cluster-gateway out" }],
  run: (args) => withBenchLabHome((home) => runGatewayBench(home, !args.includes('--no-upstream'))),
};

async function runGatewayBench(home: string, withUpstream: boolean): Promise<void> {
  const labFile = path.join(home, 'lab.yaml');
  const base = defaultLabConfig();
  const config = { ...base, name: 'bench-gateway', clusters: base.clusters.filter((c) => c.name !== 'cluster2'), source: labFile };
  await fs.writeFile(labFile, renderLabConfig(config));
  // Built once from the Go module proxy (minutes), then cached; the hub's nodelet maps upstream's image to it.
  if (withUpstream) await ensureBinaries(['cluster-gateway-upstream']);
  try {
    const up = await upLab(config, { renderer: 'silent', ...(withUpstream ? { extraImageBinaries: ['cluster-gateway-upstream'] } : {}) });
    const routes = await benchRoutes(config, up.status);
    const impls: Impl[] = withUpstream ? ['ours', 'upstream'] : ['ours'];
    const results: Results = { gets: series(), idle: series(), cycles: series(), reuse: [] };
    const hubCluster = up.status.clusters.find((c) => c.hub);
    const hubNetns = (up.status.vpcs.find((v) => v.name === hubCluster?.vpc)?.details.netns as string | null | undefined) ?? null;
    let deployed = false;
    try {
      if (withUpstream) {
        deployed = true;
        await deployUpstreamGateway(routes.hub);
      }
      await measureBlocks(routes, impls, withUpstream, hubNetns, results);
      await measureIdle(routes, impls, withUpstream, results);
    } finally {
      if (deployed) {
        await switchApiService(routes.hub, 'ours').catch((err: unknown) =>
          process.stderr.write(`restoring the APIService to ocm-lab's gateway failed: ${String(err)}\n`),
        );
        await removeUpstreamGateway(routes.hub).catch((err: unknown) => process.stderr.write(`removing upstream's gateway failed: ${String(err)}\n`));
      }
      routes.tunnel.close();
      routes.hub.close();
      for (const r of routes.all) r.agent.destroy();
    }
    report(results);
  } finally {
    await downLab(config).catch(() => undefined);
  }
}

/** Grants the gateway's ServiceAccount edit on cluster1, creates the ConfigMaps the rounds GET, and builds the four routes. */
async function benchRoutes(config: Parameters<typeof upLab>[0], status: Awaited<ReturnType<typeof upLab>>['status']): Promise<BenchRoutes> {
  const kubeconfig = status.kubeconfig ?? '';
  const { kubectl } = await ensureBinaries(['kubectl']);
  const k = (a: string[]) => execa(kubectl, ['--kubeconfig', kubeconfig, ...a]);
  await k([
    '--context',
    'cluster1',
    'create',
    'clusterrolebinding',
    'bench-gateway-edit',
    '--clusterrole=edit',
    '--serviceaccount=open-cluster-management-managed-serviceaccount:cluster-gateway',
  ]);
  await k(['--context', 'cluster1', '-n', 'default', 'create', 'configmap', 'bench', '--from-literal=a=b']);

  const hub = await hubClientFor(config);
  await hub.post('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'bench' }, data: { a: 'b' } });
  const secret = await hub.get<{ data?: Record<string, string> }>('/api/v1/namespaces/open-cluster-management-credentials/secrets/cluster1');
  const token = fromBase64(secret.data?.token);
  const spokeCa = fromBase64(secret.data?.['ca.crt']);
  const cluster1 = new URL(status.clusters.find((c) => c.name === 'cluster1')?.apiServer ?? '');
  const hubEndpoint = hub.endpoint;
  const hubUrl = new URL(hubEndpoint.server);
  const { client: tunnel } = await hubTunnel(hub);
  const auth = { authorization: `Bearer ${token}` };
  const hubRoute = (label: string, prefix: string): Route => ({
    label,
    agent: new https.Agent({ keepAlive: true, ca: hubEndpoint.caPem, cert: hubEndpoint.certPem, key: hubEndpoint.keyPem }),
    host: hubUrl.hostname,
    port: Number(hubUrl.port),
    prefix,
    headers: hubEndpoint.token ? { authorization: `Bearer ${hubEndpoint.token}` } : {},
  });
  const direct: Route = {
    label: 'direct',
    agent: new https.Agent({ keepAlive: true, ca: spokeCa }),
    host: cluster1.hostname,
    port: Number(cluster1.port),
    prefix: '',
    headers: auth,
  };
  const viaTunnel: Route = {
    label: 'tunnel',
    agent: tunnel.httpsAgent({ keepAlive: true, ca: spokeCa, servername: CLUSTER_PROXY_SERVER_NAME }),
    host: 'cluster1',
    port: 443,
    prefix: '',
    headers: auth,
  };
  const hubOwn = hubRoute('hub', '');
  const gateway = hubRoute('gateway', gatewayProxyPath('cluster1'));
  return { hub, tunnel, direct, viaTunnel, hubOwn, gateway, all: [direct, viaTunnel, hubOwn, gateway] };
}

/** Points the hub's APIService at `impl`'s gateway (with upstream's deployed) and waits until the aggregator routes there. */
async function servedNow(routes: BenchRoutes, impl: Impl, withUpstream: boolean): Promise<void> {
  if (!withUpstream) return;
  await switchApiService(routes.hub, impl);
  await waitServedBy(routes.gateway, impl);
}

/** The measured rounds, in blocks alternating between the implementations. */
async function measureBlocks(routes: BenchRoutes, impls: Impl[], withUpstream: boolean, hubNetns: string | null, results: Results): Promise<void> {
  const { gateway, hubOwn } = routes;
  const { gets, cycles, reuse } = results;
  const perBlock = Math.ceil(ROUNDS / BLOCKS);
  for (let block = 0; block < BLOCKS; block++) {
    for (const impl of impls) {
      await servedNow(routes, impl, withUpstream);
      // Warm-up: connections, TLS sessions, the gateway's authorization cache.
      for (const r of routes.all) for (let i = 0; i < 5; i++) await call(r, 'GET', GET_PATH);
      const before = hubNetns ? await connectionsTo(hubNetns, GATEWAY_POD_PORT[impl]) : [];
      for (let i = 0; i < perBlock; i++) {
        for (const r of routes.all) {
          // direct, tunnel and the hub's own GET once per round: in the first implementation's blocks.
          if (r !== gateway && impl !== impls[0]) continue;
          const label = r === gateway ? impl : (r.label as 'direct' | 'tunnel' | 'hub');
          gets[label].push(await call(r, 'GET', GET_PATH));
          if (r === gateway) gets[`object:${impl}`].push(await call(hubOwn, 'GET', '/apis/cluster.core.oam.dev/v1alpha1/clustergateways/cluster1'));
          if (i % 4 === 0 && r !== hubOwn) cycles[label].push(await cycle(r, `bench-${label}-${block}-${i}`));
        }
      }
      if (hubNetns) {
        // Keep-alive between the aggregator and the gateway: the same connections before and after the block.
        const after = await connectionsTo(hubNetns, GATEWAY_POD_PORT[impl]);
        const kept = after.filter((c) => before.includes(c)).length;
        reuse.push(
          `block ${block + 1} ${impl}: hub API server → gateway :${GATEWAY_POD_PORT[impl]}: ` +
            `${before.length} connection(s) before, ${after.length} after, ${kept} of them the same`,
        );
      }
    }
  }
}

/** A GET after the connections to the gateway sat idle for longer than a server's keep-alive timeout. */
async function measureIdle(routes: BenchRoutes, impls: Impl[], withUpstream: boolean, results: Results): Promise<void> {
  for (const impl of impls) {
    await servedNow(routes, impl, withUpstream);
    for (let i = 0; i < IDLE_ROUNDS; i++) {
      await sleep(IDLE_MS);
      results.idle[impl].push(await call(routes.gateway, 'GET', GET_PATH));
    }
  }
}

function report({ gets, cycles, idle, reuse }: Results): void {
  const row = (label: string, xs: number[], against?: number[]) =>
    xs.length === 0
      ? ''
      : `  ${label.padEnd(62)} p50 ${quantile(xs, 0.5).toFixed(2).padStart(8)} ms   p99 ${quantile(xs, 0.99).toFixed(2).padStart(8)} ms` +
        `${against ? `   p50 ×${(quantile(xs, 0.5) / quantile(against, 0.5)).toFixed(2)} of the tunnel` : ''}`;
  const out = (s: string) => s && process.stdout.write(`${s}\n`);
  const table = (what: string, xs: Series) => {
    out(`${what} (${xs.direct.length} rounds, interleaved, keep-alive clients, the same ServiceAccount token on cluster1):`);
    out(row('direct (host → cluster1 API server)', xs.direct));
    out(row('through the tunnel (host → proxy-server → agent)', xs.tunnel));
    out(row("through ocm-lab's cluster-gateway (hub API → gateway → tunnel)", xs.ours, xs.tunnel));
    out(row(`through upstream's cluster-gateway ${CLUSTER_GATEWAY_UPSTREAM_VERSION} (${UPSTREAM_CLUSTER_GATEWAY_IMAGE.ref})`, xs.upstream, xs.tunnel));
    out(row('reference: the hub API server alone (a hub ConfigMap)', xs.hub));
    out(row("reference: hub → aggregator → ocm-lab's gateway (the ClusterGateway)", xs['object:ours']));
    out(row("reference: hub → aggregator → upstream's gateway (the ClusterGateway)", xs['object:upstream']));
  };
  table(`GET ${GET_PATH}`, gets);
  table('create + update + delete of a ConfigMap', cycles);
  out(`GET through the gateway after ${IDLE_MS / 1000} s without requests (${IDLE_ROUNDS} rounds each):`);
  out(row("ocm-lab's cluster-gateway", idle.ours));
  out(row(`upstream's cluster-gateway ${CLUSTER_GATEWAY_UPSTREAM_VERSION}`, idle.upstream));
  if (reuse.length) out(`Connections (ss -tn in the hub's network namespace):\n  ${reuse.join('\n  ')}`);
}
