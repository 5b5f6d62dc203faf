import type { CommandModule } from 'yargs';
import { InvalidInputError } from '../../../errors.js';
import { startUserServer } from '../../../addons/cluster-proxy/user-server.js';
import { USER_SERVER_PORT } from '../../../addons/cluster-proxy/service-routing.js';
import { createTunnelClient } from '../../../tunnel/index.js';
import { parsePort, readPemFlag } from '../../../tunnel/flags.js';
import { TLS_PROFILE_OPTIONS, tlsProfileOfArgs, type TlsProfileArgs } from './tls-flags.js';

interface Args extends TlsProfileArgs {
  host: string;
  port: number;
  'proxy-server-name'?: string;
  'proxy-ca-cert'?: string;
  'proxy-cert'?: string;
  'proxy-key'?: string;
  'server-cert'?: string;
  'server-key'?: string;
  'server-port': number;
  'bind-address': string;
  'service-proxy-ca-cert'?: string;
  'agent-install-namespace'?: string;
}

const stamp = (line: string) => process.stderr.write(`${new Date().toISOString()} ${line}\n`);

/** `ocm-lab internal user-server`: cluster-proxy's user server, with upstream's flag names. */
export const userServerCommand: CommandModule<object, Args> = {
  command: 'user-server',
  describe: "run cluster-proxy's user server (HTTPS on the hub → the clusters' service proxies through the tunnel)",
  builder: (y) =>
    y
      .option('host', { type: 'string', default: '127.0.0.1', describe: 'the proxy-server (gRPC frontend) to open tunnels through' })
      .option('port', { type: 'number', default: 8090, describe: "the proxy-server's frontend port" })
      .option('proxy-server-name', { type: 'string', describe: "the name to verify the proxy-server's certificate as (default: --host)" })
      .option('proxy-ca-cert', { type: 'string', describe: "CA of the proxy-server's certificate" })
      .option('proxy-cert', { type: 'string', describe: 'client certificate for the proxy-server (proxy-client)' })
      .option('proxy-key', { type: 'string' })
      .option('server-cert', { type: 'string', describe: 'serving certificate (cluster-proxy-user-serving-cert)' })
      .option('server-key', { type: 'string' })
      .option('server-port', { type: 'number', default: USER_SERVER_PORT })
      .option('bind-address', { type: 'string', default: '0.0.0.0' })
      .option('service-proxy-ca-cert', { type: 'string', describe: "CA of the service proxies' serving certificates" })
      .option('agent-install-namespace', { type: 'string', describe: 'accepted for upstream compatibility; unused' })
      .options(TLS_PROFILE_OPTIONS) as never,
  handler: async (a) => {
    const tlsProfile = tlsProfileOfArgs(a);
    const tunnel = createTunnelClient({
      address: `${a.host}:${parsePort('port', a.port)}`,
      tls: {
        caPem: readPemFlag('proxy-ca-cert', a['proxy-ca-cert'], "the proxy-server's certificate is verified against it"),
        certPem: readPemFlag('proxy-cert', a['proxy-cert'], 'the proxy-server accepts only clients with certificates'),
        keyPem: readPemFlag('proxy-key', a['proxy-key'], 'the key of --proxy-cert'),
        ...(a['proxy-server-name'] ? { servername: a['proxy-server-name'] } : {}),
      },
      dialTimeoutMs: 10_000,
    });
    const server = await startUserServer({
      tunnel,
      serviceProxyCaPem: readPemFlag('service-proxy-ca-cert', a['service-proxy-ca-cert'], "the service proxies' certificates are verified against it").toString(
        'utf8',
      ),
      serving: {
        certPem: readPemFlag('server-cert', a['server-cert'], 'the user server serves HTTPS').toString('utf8'),
        keyPem: readPemFlag('server-key', a['server-key'], 'the key of --server-cert').toString('utf8'),
      },
      tlsProfile,
      port: parsePort('server-port', a['server-port']),
      host: a['bind-address'],
      log: stamp,
    }).catch((err: Error) => {
      throw new InvalidInputError(`--server-port ${a['server-port']}: cannot listen on ${a['bind-address']} (${err.message})`);
    });
    stamp(`user server listening on ${a['bind-address']}:${server.port} (tunnel via ${a.host}:${a.port})`);
    await new Promise<void>((resolve) => {
      const stop = () =>
        void server.close().finally(() => {
          tunnel.close();
          resolve();
        });
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
    });
  },
};
