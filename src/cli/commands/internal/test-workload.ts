import fs from 'node:fs/promises';
import http from 'node:http';
import type { CommandModule } from 'yargs';
import { InvalidInputError } from '../../../errors.js';
import { ApiError, endpointFromKubeconfig, inClusterEndpoint, KubeClient } from '../../../kube/client.js';
import { parseDuration } from '../../../tunnel/flags.js';

interface Args {
  check: string[];
  interval?: string;
  port?: number;
  host: string;
  'exit-after'?: string;
  'exit-code': number;
  'print-env': string[];
  'print-file': string[];
}

/** `verb:resource[/name][@namespace]`, e.g. `list:pods@default`, `get:deployments.apps/web@team`, `list:namespaces`. */
export interface ApiCheck {
  verb: 'list' | 'get';
  resource: string;
  group: string;
  name?: string;
  namespace?: string;
  text: string;
}

const CORE_CLUSTER_SCOPED = new Set(['namespaces', 'nodes', 'persistentvolumes']);

export function parseCheck(text: string): ApiCheck {
  const m = /^(list|get):([a-z0-9-]+)((?:\.[a-z0-9-]+)*)(?:\/([a-z0-9.-]+))?(?:@([a-z0-9-]+))?$/.exec(text);
  if (!m) throw new InvalidInputError(`--check '${text}': expected verb:resource[.group][/name][@namespace] with verb list or get, e.g. list:pods@default`);
  const check: ApiCheck = { verb: m[1] as 'list' | 'get', resource: m[2] as string, group: (m[3] ?? '').replace(/^\./, ''), text };
  if (m[4]) check.name = m[4];
  if (m[5]) check.namespace = m[5];
  if (check.verb === 'get' && !check.name) throw new InvalidInputError(`--check '${text}': get needs a name (get:resource/name)`);
  return check;
}

async function checkPath(client: KubeClient, c: ApiCheck, defaultNamespace: string): Promise<string> {
  let base = '/api/v1';
  if (c.group) {
    const group = await client.get<{ preferredVersion?: { groupVersion: string } }>(`/apis/${c.group}`);
    base = `/apis/${group.preferredVersion?.groupVersion ?? `${c.group}/v1`}`;
  }
  const clusterScoped = !c.group && CORE_CLUSTER_SCOPED.has(c.resource);
  const ns = c.namespace ?? defaultNamespace;
  const collection = clusterScoped ? `${base}/${c.resource}` : `${base}/namespaces/${ns}/${c.resource}`;
  return c.name ? `${collection}/${c.name}` : collection;
}

/** Tries one API call with the process' own credentials; one line says how it went. */
async function runCheck(client: KubeClient, c: ApiCheck, defaultNamespace: string): Promise<string> {
  const where = !c.group && CORE_CLUSTER_SCOPED.has(c.resource) ? '' : ` -n ${c.namespace ?? defaultNamespace}`;
  const label = `${c.verb} ${c.resource}${c.group ? `.${c.group}` : ''}${c.name ? `/${c.name}` : ''}${where}`;
  try {
    const res = await client.get<{ items?: unknown[] }>(await checkPath(client, c, defaultNamespace));
    return `ALLOWED ${label}${res.items ? ` (${res.items.length} items)` : ''}`;
  } catch (err) {
    if (err instanceof ApiError && err.status === 403) return `FORBIDDEN ${label}: ${err.message}`;
    return `ERROR ${label}: ${(err as Error).message}`;
  }
}

/**
 * `ocm-lab internal test-workload`: a tiny workload for tests of whatever runs
 * pods (nodelet, kind). It tries API calls with its in-pod credentials and
 * prints ALLOWED/FORBIDDEN lines, prints env vars and mounted files, serves
 * /healthz, and exits on demand.
 */
export const testWorkloadCommand: CommandModule<object, Args> = {
  command: 'test-workload',
  describe: 'test workload: API checks with in-pod credentials, /healthz, exit on demand',
  builder: (y) =>
    y
      .option('check', { type: 'string', array: true, default: [] as string[], describe: 'API call to try: verb:resource[.group][/name][@namespace]' })
      .option('interval', { type: 'string', describe: 'repeat the checks this often (default: once)' })
      .option('port', { type: 'number', default: process.env.PORT ? Number(process.env.PORT) : undefined, describe: 'serve /healthz on this port ($PORT)' })
      .option('host', { type: 'string', default: '0.0.0.0', describe: 'address for /healthz' })
      .option('exit-after', { type: 'string', describe: 'exit after this long, with --exit-code' })
      .option('exit-code', { type: 'number', default: 1 })
      .option('print-env', { type: 'string', array: true, default: [] as string[], describe: 'print these environment variables' })
      .option('print-file', { type: 'string', array: true, default: [] as string[], describe: 'print these files' }) as never,
  handler: async (a) => {
    const checks = a.check.map(parseCheck);
    const intervalMs = a.interval ? parseDuration('interval', a.interval) : undefined;
    const exitAfterMs = a['exit-after'] ? parseDuration('exit-after', a['exit-after']) : undefined;
    const say = (line: string) => process.stdout.write(`${line}\n`);
    say(`test-workload pid ${process.pid} started`);
    for (const name of a['print-env']) say(`ENV ${name}=${process.env[name] ?? '(unset)'}`);
    for (const file of a['print-file']) {
      const text = await fs.readFile(file, 'utf8').catch((err: Error) => `(unreadable: ${err.message})`);
      say(`FILE ${file}: ${text.trim()}`);
    }
    let results: string[] = [];
    if (checks.length) {
      let endpoint;
      try {
        endpoint = process.env.KUBECONFIG ? await endpointFromKubeconfig(process.env.KUBECONFIG) : await inClusterEndpoint();
      } catch (err) {
        throw new InvalidInputError(`--check needs credentials: KUBECONFIG is not set and ${(err as Error).message}`);
      }
      const defaultNamespace = endpoint.namespace ?? 'default';
      const client = new KubeClient(endpoint);
      const round = async () => {
        results = [];
        for (const c of checks) results.push(await runCheck(client, c, defaultNamespace));
        for (const r of results) say(r);
      };
      await round();
      if (intervalMs) setInterval(() => void round(), intervalMs);
    }
    if (a.port !== undefined) {
      const server = http.createServer((req, res) => {
        if (req.url === '/healthz') res.writeHead(200).end('ok');
        else if (req.url === '/checks') res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(results));
        else res.writeHead(404).end('not found');
      });
      await new Promise<void>((resolve, reject) => {
        server.once('error', (err) => reject(new InvalidInputError(`--port ${a.port}: cannot listen on ${a.host} (${err.message})`)));
        server.listen(a.port, a.host, resolve);
      });
      say(`serving /healthz on ${a.host}:${a.port}`);
    }
    if (exitAfterMs !== undefined) {
      setTimeout(() => {
        say(`exiting with ${a['exit-code']} as asked`);
        process.exit(a['exit-code']);
      }, exitAfterMs);
    }
    // A signal listener holds no event-loop handle: without a timer of its own a workload with
    // nothing to serve would end at once, as a container that "completed".
    const keepAlive = setInterval(() => undefined, 1 << 30);
    await new Promise<void>((resolve) => {
      process.once('SIGTERM', () => {
        say('received SIGTERM, exiting');
        resolve();
      });
    });
    clearInterval(keepAlive);
    process.exit(0);
  },
};
