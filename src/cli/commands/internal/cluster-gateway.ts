import type { CommandModule } from 'yargs';
import { inPodClient } from '../../../addons/framework/agent-env.js';
import { CREDENTIALS_NAMESPACE, GATEWAY_PORT } from '../../../addons/cluster-gateway/constants.js';
import { startGatewayServer } from '../../../addons/cluster-gateway/server.js';
import { InvalidInputError } from '../../../errors.js';
import { parsePort, readPemFlag } from '../../../tunnel/flags.js';
import { runUntilSignal, stamp } from './run-loop.js';

interface Args {
  'secure-port': number;
  'bind-address': string;
  'tls-cert-file'?: string;
  'tls-private-key-file'?: string;
  'secret-namespace': string;
  'ocm-integration': boolean;
  'client-identity-penetration': boolean;
  'feature-gates': string;
}

/** Upstream's `--feature-gates=A=true,B=false`: the gates that are on. */
export function enabledFeatureGates(text: string): Set<string> {
  const on = new Set<string>();
  for (const pair of text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [name, value] = pair.split('=');
    if (!name || (value !== 'true' && value !== 'false'))
      throw new InvalidInputError(`--feature-gates: ${JSON.stringify(pair)} is not Name=true or Name=false`);
    if (value === 'true') on.add(name);
  }
  return on;
}

/** `ocm-lab internal cluster-gateway`: the aggregated API server (flags named like upstream's where it has them). */
export const clusterGatewayCommand: CommandModule<object, Args> = {
  command: 'cluster-gateway',
  describe: 'run the cluster-gateway aggregated API server (cluster.core.oam.dev/v1alpha1)',
  builder: (y) =>
    y
      .option('secure-port', { type: 'number', default: GATEWAY_PORT })
      .option('bind-address', { type: 'string', default: '0.0.0.0' })
      .option('tls-cert-file', { type: 'string', describe: 'serving certificate (PEM), named for <service>.<namespace>.svc' })
      .option('tls-private-key-file', { type: 'string' })
      .option('secret-namespace', { type: 'string', default: CREDENTIALS_NAMESPACE, describe: 'namespace of the Secrets that become ClusterGateways' })
      .option('ocm-integration', { type: 'boolean', default: true, describe: 'endpoints from ManagedClusters (spec.managedClusterClientConfigs)' })
      .option('client-identity-penetration', {
        type: 'boolean',
        default: false,
        describe: "pass the caller's hub identity to the cluster as Impersonate-* headers",
      })
      .option('feature-gates', {
        type: 'string',
        default: '',
        describe: 'upstream spelling: ClientIdentityPenetration=true is the same as --client-identity-penetration',
      }) as never,
  handler: async (a) => {
    const certPem = readPemFlag('tls-cert-file', a['tls-cert-file'], 'the hub API server reaches the gateway over TLS').toString('utf8');
    const keyPem = readPemFlag('tls-private-key-file', a['tls-private-key-file'], 'the key of --tls-cert-file').toString('utf8');
    const hub = await inPodClient('cluster-gateway');
    const server = await startGatewayServer({
      hub,
      host: a['bind-address'],
      port: parsePort('secure-port', a['secure-port']),
      tls: { certPem, keyPem },
      credentialsNamespace: a['secret-namespace'],
      ocmIntegration: a['ocm-integration'],
      identityPenetration: a['client-identity-penetration'] || enabledFeatureGates(a['feature-gates']).has('ClientIdentityPenetration'),
      log: stamp,
    });
    // A listening server holds the event loop; wait for the signal, then close it.
    await runUntilSignal(
      (signal) =>
        new Promise<void>((resolve) => {
          signal.addEventListener('abort', () => resolve(), { once: true });
        }),
    );
    await server.close();
    hub.close();
  },
};
