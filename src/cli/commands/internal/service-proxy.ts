import fs from 'node:fs';
import type { CommandModule } from 'yargs';
import { InvalidInputError } from '../../../errors.js';
import { inClusterEndpoint } from '../../../kube/client.js';
import { startServiceProxy } from '../../../addons/cluster-proxy/service-proxy.js';
import { SERVICE_PROXY_PORT } from '../../../addons/cluster-proxy/service-routing.js';
import { parsePort, readPemFlag } from '../../../tunnel/flags.js';
import { TLS_PROFILE_OPTIONS, tlsProfileOfArgs, type TlsProfileArgs } from './tls-flags.js';

interface Args extends TlsProfileArgs {
  cert?: string;
  key?: string;
  'additional-service-ca'?: string;
  'hub-kubeconfig'?: string;
  'enable-impersonation': boolean;
  port: number;
  'bind-address': string;
}

const stamp = (line: string) => process.stderr.write(`${new Date().toISOString()} ${line}\n`);

/** `ocm-lab internal service-proxy`: cluster-proxy's service proxy (in the proxy-agent pod), with upstream's flag names. */
export const serviceProxyCommand: CommandModule<object, Args> = {
  command: 'service-proxy',
  describe: "run cluster-proxy's service proxy (HTTPS in the proxy-agent pod → the cluster's Services and API server)",
  builder: (y) =>
    y
      .option('cert', { type: 'string', describe: 'serving certificate' })
      .option('key', { type: 'string' })
      .option('additional-service-ca', { type: 'string', describe: 'more CAs for HTTPS Services (a missing file is skipped, as upstream does)' })
      .option('hub-kubeconfig', { type: 'string', describe: "the agent's hub kubeconfig, for TokenReviews of hub users" })
      .option('enable-impersonation', { type: 'boolean', default: true, describe: 'authenticate API-server requests here and impersonate hub users' })
      .option('port', { type: 'number', default: SERVICE_PROXY_PORT })
      .option('bind-address', { type: 'string', default: '127.0.0.1', describe: 'the agent reaches it on loopback; nothing else needs to' })
      .options(TLS_PROFILE_OPTIONS) as never,
  handler: async (a) => {
    const tlsProfile = tlsProfileOfArgs(a);
    const cluster = await inClusterEndpoint();
    if (!cluster.tokenFile)
      throw new InvalidInputError('no ServiceAccount token in the pod: the service proxy needs it for TokenReviews and impersonation', {
        hint: 'run it in a pod with automountServiceAccountToken',
      });
    const extra = a['additional-service-ca'];
    const serviceCaPems = extra && fs.existsSync(extra) ? [readPemFlag('additional-service-ca', extra, '').toString('utf8')] : [];
    if (extra && !serviceCaPems.length) stamp(`--additional-service-ca ${extra}: no such file; HTTPS Services are verified against the cluster's CA only`);
    const proxy = await startServiceProxy({
      serving: {
        certPem: readPemFlag('cert', a.cert, 'the service proxy serves HTTPS').toString('utf8'),
        keyPem: readPemFlag('key', a.key, 'the key of --cert').toString('utf8'),
      },
      tlsProfile,
      port: parsePort('port', a.port),
      host: a['bind-address'],
      cluster: { ...cluster, tokenFile: cluster.tokenFile },
      serviceCaPems,
      ...(a['hub-kubeconfig'] ? { hubKubeconfig: a['hub-kubeconfig'] } : {}),
      impersonation: a['enable-impersonation'],
      log: stamp,
    }).catch((err: Error) => {
      throw new InvalidInputError(`--port ${a.port}: cannot listen on ${a['bind-address']} (${err.message})`);
    });
    stamp(`service proxy listening on ${a['bind-address']}:${proxy.port} (impersonation ${a['enable-impersonation'] ? 'on' : 'off'})`);
    await new Promise<void>((resolve) => {
      const stop = () => void proxy.close().finally(resolve);
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
    });
  },
};
