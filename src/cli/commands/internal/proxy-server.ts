import type { CommandModule } from 'yargs';
import { InvalidInputError } from '../../../errors.js';
import { startProxyServer, parseStrategies, tuneGcForBulkTransfer, type Strategy } from '../../../tunnel/index.js';
import { parseDuration, parsePort, readPemFlag } from '../../../tunnel/flags.js';
import { TLS_PROFILE_OPTIONS, tlsProfileOfArgs, type TlsProfileArgs } from './tls-flags.js';

interface Args extends TlsProfileArgs {
  'server-port': number;
  'server-bind-address': string;
  'http-connect-port': number;
  'agent-port': number;
  'agent-bind-address': string;
  'health-port': number;
  'health-bind-address': string;
  'admin-port': number;
  'admin-bind-address': string;
  mode: string;
  'server-cert'?: string;
  'server-key'?: string;
  'server-ca-cert'?: string;
  'cluster-cert'?: string;
  'cluster-key'?: string;
  'cluster-ca-cert'?: string;
  'server-id'?: string;
  'server-count': number;
  'proxy-strategies': string;
  'backend-dial-timeout': string;
}

/** `ocm-lab internal proxy-server`: flags named like apiserver-network-proxy's server. */
export const proxyServerCommand: CommandModule<object, Args> = {
  command: 'proxy-server',
  describe: 'run the tunnel proxy server (apiserver-network-proxy compatible)',
  builder: (y) =>
    y
      .option('server-port', { type: 'number', default: 8090, describe: 'frontend port (gRPC, or HTTP CONNECT in that mode)' })
      .option('server-bind-address', { type: 'string', default: '0.0.0.0' })
      .option('http-connect-port', { type: 'number', default: 8093, describe: 'HTTP CONNECT port when --mode both' })
      .option('agent-port', { type: 'number', default: 8091 })
      .option('agent-bind-address', { type: 'string', default: '0.0.0.0' })
      .option('health-port', { type: 'number', default: 8092 })
      .option('health-bind-address', { type: 'string', default: '0.0.0.0' })
      .option('admin-port', { type: 'number', default: 8095 })
      .option('admin-bind-address', { type: 'string', default: '127.0.0.1' })
      .option('mode', { type: 'string', default: 'grpc', describe: "'grpc', 'http-connect' or 'both'" })
      .option('server-cert', { type: 'string', describe: 'frontend serving certificate (PEM)' })
      .option('server-key', { type: 'string' })
      .option('server-ca-cert', { type: 'string', describe: 'CA that signs frontend client certificates' })
      .option('cluster-cert', { type: 'string', describe: 'agent-facing serving certificate (PEM); defaults to --server-cert' })
      .option('cluster-key', { type: 'string' })
      .option('cluster-ca-cert', { type: 'string', describe: 'CA that signs agent client certificates' })
      .option('server-id', { type: 'string', describe: 'unique ID of this server (default: random)' })
      .option('server-count', { type: 'number', default: 1, describe: 'number of proxy servers agents should connect to' })
      .option('proxy-strategies', { type: 'string', default: 'default', describe: 'comma-separated: destHost, defaultRoute, default' })
      .option('backend-dial-timeout', { type: 'string', default: '30s' })
      .options(TLS_PROFILE_OPTIONS) as never,
  handler: async (a) => {
    const mode = a.mode;
    if (mode !== 'grpc' && mode !== 'http-connect' && mode !== 'both') {
      throw new InvalidInputError(`--mode ${JSON.stringify(mode)} is not one of grpc, http-connect, both`);
    }
    let strategies: Strategy[];
    try {
      strategies = parseStrategies(a['proxy-strategies']);
    } catch (err) {
      throw new InvalidInputError(`--proxy-strategies: ${(err as Error).message}`);
    }
    if (!Number.isInteger(a['server-count']) || a['server-count'] < 1) {
      throw new InvalidInputError(`--server-count ${a['server-count']} must be a whole number of at least 1`);
    }
    const tlsProfile = tlsProfileOfArgs(a);
    const frontendTLS = {
      certPem: readPemFlag('server-cert', a['server-cert'], 'the frontend serves TLS'),
      keyPem: readPemFlag('server-key', a['server-key'], 'the frontend serves TLS'),
      clientCaPem: readPemFlag('server-ca-cert', a['server-ca-cert'], 'frontend clients must present certificates from this CA'),
    };
    const agentTLS = {
      certPem: a['cluster-cert'] ? readPemFlag('cluster-cert', a['cluster-cert'], '') : frontendTLS.certPem,
      keyPem: a['cluster-key'] ? readPemFlag('cluster-key', a['cluster-key'], '') : frontendTLS.keyPem,
      clientCaPem: readPemFlag('cluster-ca-cert', a['cluster-ca-cert'], 'agents must present certificates from this CA'),
    };
    const frontendAddr = { host: a['server-bind-address'], port: parsePort('server-port', a['server-port']), tls: frontendTLS };
    tuneGcForBulkTransfer();
    const server = await startProxyServer({
      serverID: a['server-id'],
      serverCount: a['server-count'],
      mode,
      strategies,
      agent: { host: a['agent-bind-address'], port: parsePort('agent-port', a['agent-port']), tls: agentTLS },
      frontend: frontendAddr,
      ...(mode === 'both' ? { httpConnect: { ...frontendAddr, port: parsePort('http-connect-port', a['http-connect-port']) } } : {}),
      health: { host: a['health-bind-address'], port: parsePort('health-port', a['health-port']) },
      admin: { host: a['admin-bind-address'], port: parsePort('admin-port', a['admin-port']) },
      dialTimeoutMs: parseDuration('backend-dial-timeout', a['backend-dial-timeout']),
      tlsProfile,
      log: (line) => process.stderr.write(`${new Date().toISOString()} ${line}\n`),
    });
    process.stdout.write(`${JSON.stringify({ serverID: server.serverID, ports: server.ports })}\n`);
    await new Promise<void>((resolve) => {
      const stop = (): void => {
        server.close().then(resolve, resolve);
      };
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
    });
  },
};
