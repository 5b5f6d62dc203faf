/**
 * `npm run bench -- tunnel [--quick] [--no-netns] [--no-upstream] [--rounds N] [--link loopback|veth]`
 *
 * Throughput of one large transfer and p50/p99 of small HTTP requests over one
 * kept-alive connection: direct, through our tunnel and through upstream's Go
 * proxy-server + proxy-agent (driven by our client library, which speaks the
 * same protocol), on loopback and across two network namespaces joined by a
 * veth shaped to 1 Gbit/s. Every part runs as its own process.
 *
 * With --rounds N every link is measured N times, each round running the three
 * paths back to back, and the table shows the median of each figure over the
 * rounds (and its range): one round's p99 moves by ±30% with whatever else the
 * machine does, so a comparison of two paths needs several interleaved rounds.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa, type ResultPromise } from 'execa';
import { createCA, issueCertificate, writeSecretFile } from '../pki/index.js';
import { run } from '../util/exec.js';
import type { Benchmark } from './types.js';
import { buildUpstreamTunnel, freePort, upstreamAgentArgs, upstreamServerArgs, type UpstreamTunnel } from './tunnel-upstream.js';
import { sleep } from '../kube/wait.js';

const ROLES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'tunnel-roles.js');

interface Env {
  name: string;
  hubPrefix: string[];
  spokePrefix: string[];
  hubIP: string;
  spokeIP: string;
}

interface Result {
  mbitPerSec: number;
  p50ms: number;
  p99ms: number;
  /** CPU time of the tunnel's server and agent processes (all threads, user + system) per GiB moved; 0 for direct. */
  cpuSecPerGiB: number;
  /** The same per small request, in microseconds. */
  cpuUsPerRequest: number;
}

/** Figures of one path over several rounds: the median and the range of each. */
interface Summary {
  median: Result;
  min: Result;
  max: Result;
  rounds: number;
}

function median(values: number[]): number {
  const v = [...values].sort((a, b) => a - b);
  const mid = Math.floor(v.length / 2);
  return v.length % 2 ? v[mid]! : (v[mid - 1]! + v[mid]!) / 2;
}

export function summarize(results: Result[]): Summary {
  if (!results.length) throw new Error('summarize: no results (rounds must be at least 1)');
  const pick = (f: (xs: number[]) => number): Result => ({
    mbitPerSec: f(results.map((r) => r.mbitPerSec)),
    p50ms: f(results.map((r) => r.p50ms)),
    p99ms: f(results.map((r) => r.p99ms)),
    cpuSecPerGiB: f(results.map((r) => r.cpuSecPerGiB)),
    cpuUsPerRequest: f(results.map((r) => r.cpuUsPerRequest)),
  });
  return { median: pick(median), min: pick((xs) => Math.min(...xs)), max: pick((xs) => Math.max(...xs)), rounds: results.length };
}

interface Proc {
  proc: ResultPromise;
  first: Promise<Record<string, unknown>>;
  output(): string;
}

function spawn(prefix: string[], file: string, args: string[], expectLine: boolean): Proc {
  const argv = [...prefix, file, ...args];
  const proc = execa(argv[0]!, argv.slice(1), { reject: false, buffer: false, stdin: 'ignore' });
  let out = '';
  let err = '';
  proc.stderr?.on('data', (d: Buffer) => {
    err = (err + d.toString()).slice(-4000);
  });
  const first = new Promise<Record<string, unknown>>((resolve, reject) => {
    proc.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (expectLine && nl >= 0) {
        try {
          resolve(JSON.parse(out.slice(0, nl)) as Record<string, unknown>);
        } catch {
          reject(new Error(`${argv.join(' ')} printed ${out.slice(0, 200)}`));
        }
      }
    });
    void proc.then((r) => reject(new Error(`${argv.join(' ')} exited (${r.exitCode ?? r.signal}) before reporting:\n${err}`)));
  });
  first.catch(() => undefined);
  return { proc, first, output: () => err };
}

function role(prefix: string[], name: string, spec: unknown): Proc {
  return spawn(prefix, process.execPath, [ROLES, name, JSON.stringify(spec)], true);
}

async function stop(procs: Proc[]): Promise<void> {
  for (const p of procs.reverse()) {
    if (p.proc.exitCode !== null && p.proc.exitCode !== undefined) continue;
    p.proc.kill('SIGTERM');
    const t = setTimeout(() => p.proc.kill('SIGKILL'), 3000);
    await p.proc;
    clearTimeout(t);
  }
}

function ipToInt(ip: string): number {
  return ip.split('.').reduce((a, o) => a * 256 + Number(o), 0);
}

/** A /30 for the veth that overlaps nothing in `ip route`. */
async function pickSubnet(): Promise<[string, string]> {
  const routes = (await run('ip', ['-4', 'route', 'show', 'table', 'all'])).stdout;
  const taken = [...routes.matchAll(/(\d+\.\d+\.\d+\.\d+)(?:\/(\d+))?/g)].map((m) => {
    const bits = Number(m[2] ?? 32);
    const size = 2 ** (32 - bits);
    const start = Math.floor(ipToInt(m[1]!) / size) * size;
    return [start, start + size] as const;
  });
  for (const base of ['10.213.77.0', '172.31.254.252', '192.168.254.252', '10.254.253.248']) {
    const s = ipToInt(base);
    if (taken.every(([a, b]) => s + 4 <= a || s >= b)) {
      const p = base.split('.').map(Number);
      const at = (n: number): string => [p[0], p[1], p[2], p[3]! + n].join('.');
      return [at(1), at(2)];
    }
  }
  throw new Error('no free /30 for the benchmark veth: every candidate overlaps a route');
}

async function createVethEnv(): Promise<{ env: Env; teardown: () => Promise<void> }> {
  const id = process.pid % 100000;
  const hub = `ocmlab-bench-hub-${id}`;
  const spoke = `ocmlab-bench-spoke-${id}`;
  const [hubIP, spokeIP] = await pickSubnet();
  const teardown = async (): Promise<void> => {
    await run('ip', ['netns', 'del', hub], { allowFailure: true });
    await run('ip', ['netns', 'del', spoke], { allowFailure: true });
  };
  try {
    await run('ip', ['netns', 'add', hub]);
    await run('ip', ['netns', 'add', spoke]);
    await run('ip', ['link', 'add', `obh${id}`, 'netns', hub, 'type', 'veth', 'peer', 'name', `obs${id}`, 'netns', spoke]);
    for (const [ns, dev, ip] of [
      [hub, `obh${id}`, hubIP],
      [spoke, `obs${id}`, spokeIP],
    ] as const) {
      await run('ip', ['-n', ns, 'addr', 'add', `${ip}/30`, 'dev', dev]);
      await run('ip', ['-n', ns, 'link', 'set', dev, 'up']);
      await run('ip', ['-n', ns, 'link', 'set', 'lo', 'up']);
      await run('tc', ['-n', ns, 'qdisc', 'add', 'dev', dev, 'root', 'tbf', 'rate', '1gbit', 'burst', '256kb', 'latency', '10ms']);
    }
  } catch (err) {
    await teardown();
    throw err;
  }
  return {
    env: { name: 'veth 1 Gbit/s', hubPrefix: ['ip', 'netns', 'exec', hub], spokePrefix: ['ip', 'netns', 'exec', spoke], hubIP, spokeIP },
    teardown,
  };
}

async function waitReady(prefix: string[], url: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const r = await run(prefix[0] ?? 'curl', [...prefix.slice(1), ...(prefix.length ? ['curl'] : []), '-sf', url], { allowFailure: true });
    if (r.exitCode === 0) return;
    await sleep(200);
  }
  throw new Error(`${url} did not become ready within ${timeoutMs} ms`);
}

interface Files {
  ca: string;
  serverCert: string;
  serverKey: string;
  agentCert: string;
  agentKey: string;
  clientCert: string;
  clientKey: string;
}

/** USER_HZ, the unit of /proc/<pid>/stat times: 100 on every Linux architecture Node supports. */
const CLOCK_TICKS_PER_SEC = 100;

/** utime + stime (clock ticks, every thread) from the text of /proc/<pid>/stat. */
export function cpuTicksOfStat(stat: string): number {
  // The command name is in parentheses and may hold spaces and ')': the fields start after the last ')'.
  // After it come state (field 3) … utime (field 14), stime (field 15).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  if (!Number.isFinite(ticks)) throw new Error(`/proc/<pid>/stat ${JSON.stringify(stat.slice(0, 80))}: no utime/stime in fields 14-15`);
  return ticks;
}

/** CPU seconds (user + system, every thread) the processes have used so far. */
function cpuSeconds(procs: Proc[]): number {
  let ticks = 0;
  for (const p of procs) ticks += cpuTicksOfStat(fs.readFileSync(`/proc/${p.proc.pid}/stat`, 'utf8'));
  return ticks / CLOCK_TICKS_PER_SEC;
}

/** Runs the transfer and the requests, each in its own client process, and charges the tunnel processes' CPU time to each. */
async function measure(
  env: Env,
  via: 'direct' | 'tunnel',
  proxyAddress: string | undefined,
  f: Files,
  targets: { sinkPort: number; httpPort: number },
  sizes: { bytes: number; requests: number },
  tunnel: Proc[] = [],
): Promise<Result> {
  const phase = async (name: 'transfer' | 'requests'): Promise<{ out: Record<string, number>; cpu: number }> => {
    const before = cpuSeconds(tunnel);
    const m = role(env.hubPrefix, 'measure', {
      via,
      proxy: proxyAddress ? { address: proxyAddress, servername: 'localhost', certFile: f.clientCert, keyFile: f.clientKey, caFile: f.ca } : undefined,
      sink: `${env.spokeIP}:${targets.sinkPort}`,
      http: `${env.spokeIP}:${targets.httpPort}`,
      phase: name,
      ...sizes,
    });
    const out = (await m.first) as Record<string, number>;
    const cpu = cpuSeconds(tunnel) - before;
    await stop([m]);
    return { out, cpu };
  };
  const transfer = await phase('transfer');
  const requests = await phase('requests');
  return {
    mbitPerSec: transfer.out.mbitPerSec!,
    p50ms: requests.out.p50ms!,
    p99ms: requests.out.p99ms!,
    cpuSecPerGiB: transfer.cpu / (sizes.bytes / 2 ** 30),
    cpuUsPerRequest: (requests.cpu * 1e6) / (sizes.requests + 20),
  };
}

async function runEnv(env: Env, f: Files, upstream: UpstreamTunnel | undefined, sizes: { bytes: number; requests: number }): Promise<Record<string, Result>> {
  const procs: Proc[] = [];
  const results: Record<string, Result> = {};
  try {
    const t = role(env.spokePrefix, 'targets', { host: env.spokeIP });
    procs.push(t);
    const targets = (await t.first) as { sinkPort: number; httpPort: number };
    results.direct = await measure(env, 'direct', undefined, f, targets, sizes);

    const ours: Proc[] = [];
    try {
      const s = role(env.hubPrefix, 'server', { agentHost: env.hubIP, frontendHost: '127.0.0.1', certFile: f.serverCert, keyFile: f.serverKey, caFile: f.ca });
      ours.push(s);
      const ports = (await s.first) as { agentPort: number; frontendPort: number };
      const a = role(env.spokePrefix, 'agent', {
        serverHost: env.hubIP,
        serverPort: ports.agentPort,
        servername: 'localhost',
        certFile: f.agentCert,
        keyFile: f.agentKey,
        caFile: f.ca,
      });
      ours.push(a);
      await a.first;
      results.ours = await measure(env, 'tunnel', `127.0.0.1:${ports.frontendPort}`, f, targets, sizes, ours);
    } finally {
      await stop(ours);
    }

    if (upstream) {
      const theirs: Proc[] = [];
      try {
        const [serverPort, agentPort, healthPort, adminPort, agentHealth, agentAdmin] = await Promise.all(Array.from({ length: 6 }, () => freePort()));
        const serverArgs = upstreamServerArgs({
          serverPort: serverPort!,
          agentPort: agentPort!,
          healthPort: healthPort!,
          adminPort: adminPort!,
          certFile: f.serverCert,
          keyFile: f.serverKey,
          caFile: f.ca,
          strategies: 'default',
        }).map((a) => (a.startsWith('--agent-bind-address=') ? `--agent-bind-address=${env.hubIP}` : a));
        const s = spawn(env.hubPrefix, upstream.server, serverArgs, false);
        theirs.push(s);
        await waitReady(env.hubPrefix, `http://127.0.0.1:${healthPort}/healthz`);
        const agentArgs = upstreamAgentArgs({
          serverPort: agentPort!,
          agentID: 'bench-upstream',
          identifiers: 'default-route=true',
          healthPort: agentHealth!,
          adminPort: agentAdmin!,
          certFile: f.agentCert,
          keyFile: f.agentKey,
          caFile: f.ca,
        }).map((a) => (a.startsWith('--proxy-server-host=') ? `--proxy-server-host=${env.hubIP}` : a));
        theirs.push(spawn(env.spokePrefix, upstream.agent, agentArgs, false));
        await waitReady(env.hubPrefix, `http://127.0.0.1:${healthPort}/readyz`);
        results.upstream = await measure(env, 'tunnel', `127.0.0.1:${serverPort}`, f, targets, sizes, theirs);
      } finally {
        await stop(theirs);
      }
    }
  } finally {
    await stop(procs);
  }
  return results;
}

function table(rows: { env: string; path: string; s: Summary; direct: Result }[]): string {
  const several = rows.some((row) => row.s.rounds > 1);
  const range = (lo: number, hi: number, digits: number): string => (several ? ` (${lo.toFixed(digits)}-${hi.toFixed(digits)})` : '');
  const head = ['LINK', 'PATH', 'THROUGHPUT', '% OF DIRECT', 'P50', 'P99', 'ADDED P50', 'TUNNEL CPU/GiB', 'TUNNEL CPU/REQ'];
  const body = rows.map(({ env, path: p, s, direct }) => [
    env,
    p,
    `${s.median.mbitPerSec.toFixed(0)} Mbit/s${range(s.min.mbitPerSec, s.max.mbitPerSec, 0)}`,
    `${((100 * s.median.mbitPerSec) / direct.mbitPerSec).toFixed(0)}%`,
    `${s.median.p50ms.toFixed(3)} ms${range(s.min.p50ms, s.max.p50ms, 3)}`,
    `${s.median.p99ms.toFixed(3)} ms${range(s.min.p99ms, s.max.p99ms, 3)}`,
    p === 'direct' ? '-' : `${(s.median.p50ms - direct.p50ms).toFixed(3)} ms`,
    p === 'direct' ? '-' : `${s.median.cpuSecPerGiB.toFixed(2)} s`,
    p === 'direct' ? '-' : `${s.median.cpuUsPerRequest.toFixed(0)} µs`,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  return [head, ...body]
    .map((cols) =>
      cols
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

async function runBenchmark(args: string[]): Promise<void> {
  const quick = args.includes('--quick');
  const rounds = positiveIntArg(args, '--rounds') ?? 1;
  const linkArg = args.includes('--link') ? args[args.indexOf('--link') + 1] : undefined;
  if (linkArg !== undefined && linkArg !== 'loopback' && linkArg !== 'veth') throw new Error(`--link ${JSON.stringify(linkArg)}: use loopback or veth`);
  const sizes = quick ? { bytes: 64 * 1024 * 1024, requests: 300 } : { bytes: 256 * 1024 * 1024, requests: 1000 };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ocm-lab-bench-tunnel-'));
  const teardowns: (() => Promise<void>)[] = [];
  const onSignal = (): void => {
    void Promise.all(teardowns.map((t) => t())).finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const useNetns = !args.includes('--no-netns') && linkArg !== 'loopback' && process.getuid?.() === 0;
    const vethPlan = useNetns ? await pickSubnet() : undefined;
    const ca = await createCA('tunnel-bench-ca');
    const server = await issueCertificate(ca, {
      commonName: 'proxy-server',
      dnsNames: ['localhost'],
      ipAddresses: ['127.0.0.1', ...(vethPlan ? [vethPlan[0]] : [])],
      usages: ['server'],
    });
    const agent = await issueCertificate(ca, { commonName: 'proxy-agent', usages: ['client'] });
    const client = await issueCertificate(ca, { commonName: 'proxy-client', usages: ['client'] });
    const f: Files = {
      ca: path.join(dir, 'ca.crt'),
      serverCert: path.join(dir, 'server.crt'),
      serverKey: path.join(dir, 'server.key'),
      agentCert: path.join(dir, 'agent.crt'),
      agentKey: path.join(dir, 'agent.key'),
      clientCert: path.join(dir, 'client.crt'),
      clientKey: path.join(dir, 'client.key'),
    };
    await writeSecretFile(f.ca, ca.certPem);
    for (const [cert, key, pair] of [
      [f.serverCert, f.serverKey, server],
      [f.agentCert, f.agentKey, agent],
      [f.clientCert, f.clientKey, client],
    ] as const) {
      await writeSecretFile(cert, pair.certPem);
      await writeSecretFile(key, pair.keyPem);
    }
    let upstream: UpstreamTunnel | undefined;
    if (!args.includes('--no-upstream')) {
      process.stdout.write('building upstream apiserver-network-proxy v0.36 (cached after the first run)…\n');
      upstream = await buildUpstreamTunnel();
    }
    const envs: Env[] = linkArg === 'veth' ? [] : [{ name: 'loopback', hubPrefix: [], spokePrefix: [], hubIP: '127.0.0.1', spokeIP: '127.0.0.1' }];
    if (linkArg === 'veth' && !useNetns) throw new Error('--link veth needs root (network namespaces) and no --no-netns');
    if (useNetns) {
      const v = await createVethEnv();
      teardowns.push(v.teardown);
      envs.push(v.env);
    } else {
      process.stdout.write('skipping the veth run (needs root; or --no-netns given)\n');
    }
    const rows: { env: string; path: string; s: Summary; direct: Result }[] = [];
    for (const env of envs) {
      const byPath: Record<string, Result[]> = {};
      for (let round = 1; round <= rounds; round++) {
        process.stdout.write(
          `measuring on ${env.name} (${(sizes.bytes / 1048576).toFixed(0)} MiB transfer, ${sizes.requests} requests per path)` +
            `${rounds > 1 ? `, round ${round} of ${rounds}` : ''}…\n`,
        );
        const res = await runEnv(env, f, upstream, sizes);
        for (const [p, r] of Object.entries(res)) (byPath[p] ??= []).push(r);
      }
      const direct = summarize(byPath.direct!).median;
      for (const [p, rs] of Object.entries(byPath))
        rows.push({ env: env.name, path: p === 'ours' ? 'ocm-lab tunnel' : p === 'upstream' ? 'upstream Go tunnel' : p, s: summarize(rs), direct });
    }
    process.stdout.write(`\n${table(rows)}\n`);
  } finally {
    for (const t of teardowns) await t();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function positiveIntArg(args: string[], name: string): number | undefined {
  const i = args.indexOf(name);
  if (i < 0) return undefined;
  const n = Number(args[i + 1]);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} ${JSON.stringify(args[i + 1] ?? '')}: give a whole number of rounds, 1 or more`);
  return n;
}

export const tunnelBenchmark: Benchmark = {
  name: 'tunnel',
  describe: 'tunnel throughput and request latency: direct vs ocm-lab vs upstream Go, loopback and 1 Gbit/s veth',
  options: [
    { flag: '--quick', describe: '64 MiB and 300 requests instead of 256 MiB and 1000' },
    { flag: '--rounds N', describe: 'measure every link N times, paths interleaved; the table shows medians and ranges' },
    { flag: '--link loopback|veth', describe: 'only this link (veth needs root)' },
    { flag: '--no-netns', describe: 'skip the veth link (network namespaces)' },
    { flag: '--no-upstream', describe: "leave upstream's Go proxy out" },
  ],
  run: runBenchmark,
};
