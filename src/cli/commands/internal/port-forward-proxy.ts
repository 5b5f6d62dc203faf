import net from 'node:net';
import type { CommandModule } from 'yargs';
import { InvalidInputError } from '../../../errors.js';
import { KubeClient } from '../../../kube/client.js';
import { parsePort } from '../../../tunnel/flags.js';
import { forwardToPod, runningPods } from './pod-port-forward.js';
import { runUntilSignal, stamp } from './run-loop.js';

interface Args {
  'hub-kubeconfig': string;
  'proxy-server-namespace': string;
  'pod-selector': string;
  'listen-port': number;
  'target-port': number;
}

/**
 * `ocm-lab internal port-forward-proxy`: cluster-proxy's PortForward entrypoint in the agent pod. Listens on
 * 127.0.0.1:<listen-port>, where the proxy-agent dials, and carries each connection to a Running proxy-server
 * pod (round robin, as upstream's addon-agent) by a port-forward through the hub's API server. The hub
 * kubeconfig is read per connection: it appears once the addon's CSR is approved and its certificate is renewed.
 */
export const portForwardProxyCommand: CommandModule<object, Args> = {
  command: 'port-forward-proxy',
  describe: "cluster-proxy's PortForward entrypoint: proxy-agent connections to the proxy-server pods through the hub API server",
  builder: (y) =>
    y
      .option('hub-kubeconfig', { type: 'string', demandOption: true, describe: "the agent's hub kubeconfig" })
      .option('proxy-server-namespace', { type: 'string', default: 'open-cluster-management-cluster-proxy' })
      .option('pod-selector', { type: 'string', demandOption: true, describe: 'label selector of the proxy-server pods' })
      .option('listen-port', { type: 'number', default: 8091, describe: 'port on 127.0.0.1 the proxy-agent dials' })
      .option('target-port', { type: 'number', default: 8091, describe: "the proxy-server pods' agent port" }) as never,
  handler: async (a) => {
    const listenPort = parsePort('listen-port', a['listen-port']);
    const port = parsePort('target-port', a['target-port']);
    const namespace = a['proxy-server-namespace'];
    let next = 0;
    const server = net.createServer((conn) => {
      void (async () => {
        const hub = await KubeClient.fromKubeconfig(a['hub-kubeconfig']).catch((err: Error) => {
          throw new Error(`hub kubeconfig ${a['hub-kubeconfig']} is not usable yet (${err.message}); it comes with the addon's approved CSR`);
        });
        try {
          const pods = await runningPods(hub, namespace, a['pod-selector']);
          if (!pods.length) throw new Error(`no Running proxy-server pod in ${namespace} matches ${a['pod-selector']}`);
          const pod = pods[next++ % pods.length]!;
          await forwardToPod(hub, { namespace, pod, port }, conn, stamp);
          stamp(`carrying a connection to proxy-server pod ${pod} through the hub's API server`);
        } finally {
          hub.close();
        }
      })().catch((err: Error) => {
        stamp(`connection from the proxy-agent refused: ${err.message}`);
        conn.destroy();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err) => reject(new InvalidInputError(`--listen-port ${listenPort}: cannot listen on 127.0.0.1 (${err.message})`)));
      server.listen(listenPort, '127.0.0.1', resolve);
    });
    stamp(`port-forward proxy on 127.0.0.1:${listenPort} -> pods ${a['pod-selector']} in ${namespace}, port ${port}`);
    await runUntilSignal((signal) => new Promise<void>((resolve) => signal.addEventListener('abort', () => server.close(() => resolve()), { once: true })));
  },
};
