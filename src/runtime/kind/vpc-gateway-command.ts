import type { CommandModule } from 'yargs';
import { InvalidInputError } from '../../errors.js';
import { parseForward, startVpcGateway } from './vpc-gateway.js';

interface Args {
  forward: string[];
  'listen-host': string;
  'connect-timeout': number;
}

/** `ocm-lab internal vpc-gateway --forward PORT=HOST:PORT …`: the kind runtime's forwarder of the hub's published endpoints. */
export const vpcGatewayCommand: CommandModule<object, Args> = {
  command: 'vpc-gateway',
  describe: 'forward TCP ports to the hub (the kind runtime runs it between VPC networks)',
  builder: (y) =>
    y
      .option('forward', { type: 'string', array: true, default: [] as string[], describe: 'PORT=HOST:PORT; HOST is resolved for every connection' })
      .option('listen-host', { type: 'string', default: '0.0.0.0' })
      .option('connect-timeout', { type: 'number', default: 10, describe: 'seconds a target may take to accept a connection' }) as never,
  handler: async (a) => {
    if (!a.forward.length)
      throw new InvalidInputError('vpc-gateway needs at least one --forward PORT=HOST:PORT', { hint: 'e.g. --forward 6443=hub-control-plane:6443' });
    let forwards;
    try {
      forwards = a.forward.map(parseForward);
    } catch (err) {
      throw new InvalidInputError((err as Error).message);
    }
    const gateway = await startVpcGateway(forwards, { listenHost: a['listen-host'], connectTimeoutMs: a['connect-timeout'] * 1000 });
    forwards.forEach((f, i) =>
      process.stderr.write(`${new Date().toISOString()} vpc-gateway: ${a['listen-host']}:${gateway.ports[i]} -> ${f.host}:${f.port}\n`),
    );
    await new Promise<void>((resolve) => {
      const stop = (signal: string) => () => {
        process.stderr.write(`${new Date().toISOString()} vpc-gateway: ${signal}: closing ${gateway.activeConnections()} connection(s)\n`);
        gateway.close().then(resolve, resolve);
      };
      process.once('SIGTERM', stop('SIGTERM'));
      process.once('SIGINT', stop('SIGINT'));
    });
  },
};
