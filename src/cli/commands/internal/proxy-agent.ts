import http from 'node:http';
import type { CommandModule } from 'yargs';
import { InvalidInputError } from '../../../errors.js';
import { DEFAULT_BACKOFF, parseAgentIdentifiers, startProxyAgent, tuneGcForBulkTransfer } from '../../../tunnel/index.js';
import { parseDuration, parseHostMapping, parsePort, readPemFlag } from '../../../tunnel/flags.js';

interface Args {
  'proxy-server-host': string;
  'proxy-server-port': number;
  'agent-id'?: string;
  'agent-identifiers': string;
  'ca-cert'?: string;
  'agent-cert'?: string;
  'agent-key'?: string;
  'host-mapping': string[];
  'sync-interval': string;
  'sync-interval-cap': string;
  'health-server-host': string;
  'health-server-port': number;
  'drain-timeout': string;
}

/** `ocm-lab internal proxy-agent`: flags named like apiserver-network-proxy's agent, plus --host-mapping. */
export const proxyAgentCommand: CommandModule<object, Args> = {
  command: 'proxy-agent',
  describe: 'run the tunnel proxy agent (apiserver-network-proxy compatible)',
  builder: (y) =>
    y
      .option('proxy-server-host', { type: 'string', default: '127.0.0.1' })
      .option('proxy-server-port', { type: 'number', default: 8091 })
      .option('agent-id', { type: 'string', describe: 'unique ID of this agent' })
      .option('agent-identifiers', { type: 'string', default: '', describe: 'what this agent serves, e.g. host=cluster1&host=cluster1.ns' })
      .option('ca-cert', { type: 'string', describe: 'CA of the proxy server certificate' })
      .option('agent-cert', { type: 'string', describe: 'client certificate (PEM)' })
      .option('agent-key', { type: 'string' })
      .option('host-mapping', { type: 'string', array: true, default: [] as string[], describe: 'rewrite a dial target, e.g. cluster1:443=10.0.0.2:6443' })
      .option('sync-interval', {
        type: 'string',
        default: `${DEFAULT_BACKOFF.initialMs}ms`,
        describe: "first wait between connection attempts (upstream's agent: 1s)",
      })
      .option('sync-interval-cap', {
        type: 'string',
        default: `${DEFAULT_BACKOFF.capMs}ms`,
        describe: "longest wait between connection attempts (upstream's agent: 10s)",
      })
      .option('health-server-host', { type: 'string', default: '127.0.0.1' })
      .option('health-server-port', { type: 'number', default: 8093, describe: '/healthz and /readyz (ready = at least one server); 0 picks a free port' })
      .option('drain-timeout', { type: 'string', default: '30s', describe: 'after the first SIGTERM, how long open connections may finish' }) as never,
  handler: async (a) => {
    if (!a['agent-id']) throw new InvalidInputError('--agent-id is required: the proxy server routes by it', { hint: 'e.g. --agent-id cluster1' });
    try {
      parseAgentIdentifiers(a['agent-identifiers']);
    } catch (err) {
      throw new InvalidInputError(`--agent-identifiers: ${(err as Error).message}`);
    }
    const hostMappings = Object.fromEntries(a['host-mapping'].map(parseHostMapping));
    tuneGcForBulkTransfer();
    const agent = await startProxyAgent({
      proxyServerHost: a['proxy-server-host'],
      proxyServerPort: parsePort('proxy-server-port', a['proxy-server-port']),
      agentID: a['agent-id'],
      agentIdentifiers: a['agent-identifiers'],
      tls: {
        caPem: readPemFlag('ca-cert', a['ca-cert'], 'the proxy server certificate is verified against it'),
        certPem: readPemFlag('agent-cert', a['agent-cert'], 'the proxy server accepts only agents with certificates'),
        keyPem: readPemFlag('agent-key', a['agent-key'], 'the key of --agent-cert'),
      },
      hostMappings,
      backoff: { initialMs: parseDuration('sync-interval', a['sync-interval']), capMs: parseDuration('sync-interval-cap', a['sync-interval-cap']) },
      log: (line) => process.stderr.write(`${new Date().toISOString()} ${line}\n`),
    });
    const drainMs = parseDuration('drain-timeout', a['drain-timeout']);
    const health = http.createServer((req, res) => {
      if (req.url === '/healthz') res.writeHead(200).end('ok');
      else if (req.url === '/readyz' || req.url === '/ready') {
        if (agent.connectedServerIDs().length > 0) res.writeHead(200).end('ok');
        else res.writeHead(500).end('not ready: no proxy server connected');
      } else res.writeHead(404).end('not found');
    });
    await new Promise<void>((resolve, reject) => {
      health.once('error', (err) => reject(new InvalidInputError(`--health-server-port ${a['health-server-port']}: cannot listen (${err.message})`)));
      health.listen(parsePort('health-server-port', a['health-server-port']), a['health-server-host'], resolve);
    });
    const addr = health.address();
    process.stdout.write(`${JSON.stringify({ agentID: agent.agentID, healthPort: typeof addr === 'object' && addr ? addr.port : undefined })}\n`);
    await new Promise<void>((resolve) => {
      const finish = (): void => {
        health.close();
        agent.close().then(resolve, resolve);
      };
      // First SIGTERM: DRAIN (servers stop sending new dials), let open connections finish; second: stop now.
      process.once('SIGTERM', () => {
        process.stderr.write(`${new Date().toISOString()} SIGTERM: draining; send SIGTERM again to stop at once\n`);
        agent.drain();
        process.once('SIGTERM', finish);
        const deadline = Date.now() + drainMs;
        const poll = setInterval(() => {
          if (agent.activeConnections() === 0 || Date.now() >= deadline) {
            clearInterval(poll);
            finish();
          }
        }, 200);
      });
      process.once('SIGINT', finish);
    });
  },
};
