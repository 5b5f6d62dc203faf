import path from 'node:path';
import type { CommandModule } from 'yargs';
import { InvalidInputError } from '../../../errors.js';
import { DEFAULT_BACKOFF } from '../../../nodelet/backoff.js';
import { parseImageBinaries } from '../../../nodelet/images.js';
import { runNodelet } from '../../../nodelet/nodelet.js';
import { ALL_BINARIES, OCM_BINARIES } from '../../../provision/recipes.js';
import { OCM_VERSION } from '../../../provision/versions.js';
import { parseDuration } from '../../../tunnel/flags.js';

interface Args {
  cluster: string;
  kubeconfig: string;
  'scheduler-kubeconfig': string;
  'node-name'?: string;
  'work-dir': string;
  address: string;
  'kubernetes-version': string;
  'restart-backoff': string;
  'restart-backoff-max': string;
  resync: string;
  'image-binary': string[];
  'ocm-version': string;
  'runc-root'?: string;
  lab?: string;
  'vpc-netns'?: string;
  'pod-cidr'?: string;
  'proxy-kubeconfig'?: string;
  'kubelet-port': number;
  'tls-cert-file'?: string;
  'tls-private-key-file'?: string;
  'client-ca-file'?: string;
}

/** `ocm-lab internal nodelet`: the lab's node agent, one per cluster, started by `up` inside the cluster's VPC. */
export const nodeletCommand: CommandModule<object, Args> = {
  command: 'nodelet',
  describe: 'run the node agent that runs pods (ocm-lab and OCM images) as runc containers',
  builder: (y) =>
    y
      .option('cluster', { type: 'string', demandOption: true, describe: 'cluster name (kubeconfig entry of the pods)' })
      .option('kubeconfig', { type: 'string', demandOption: true, describe: 'node credentials (CN=system:node:<node>, O=system:nodes)' })
      .option('scheduler-kubeconfig', { type: 'string', demandOption: true, describe: 'credentials allowed to bind pods (CN=system:kube-scheduler)' })
      .option('node-name', { type: 'string', describe: 'Node name (default <cluster>-nodelet)' })
      .option('work-dir', { type: 'string', demandOption: true, describe: 'pod directories (logs, volumes, kubeconfigs) go under <work-dir>/pods' })
      .option('address', { type: 'string', demandOption: true, describe: "the cluster's address: node InternalIP and every pod's podIP" })
      .option('kubernetes-version', { type: 'string', default: 'v0.0.0', describe: 'reported as the kubelet version' })
      .option('restart-backoff', {
        type: 'string',
        default: `${DEFAULT_BACKOFF.initialMs / 1000}s`,
        describe: 'delay before restarting a container that crashes again (the first restart is at once), doubling per crash',
      })
      .option('restart-backoff-max', { type: 'string', default: `${DEFAULT_BACKOFF.maxMs / 1000}s`, describe: 'longest restart delay' })
      .option('resync', { type: 'string', default: '60s', describe: 'how often volumes are written again' })
      .option('image-binary', {
        type: 'string',
        array: true,
        default: [] as string[],
        describe: `provisioned binary for OCM's images: <name>=<path>, name one of ${OCM_BINARIES.join(', ')} (repeat)`,
      })
      .option('ocm-version', { type: 'string', default: OCM_VERSION, describe: "the tag of OCM's images this node runs" })
      .option('runc-root', { type: 'string', describe: "runc's state directory (default <work-dir>/runc)" })
      .option('lab', { type: 'string', describe: 'lab name (pod network namespaces are ocmlab.<lab>.p-<cluster>-<uid>)' })
      .option('vpc-netns', { type: 'string', describe: 'the VPC network namespace the nodelet runs in (with --pod-cidr)' })
      .option('pod-cidr', { type: 'string', describe: "the cluster's pod range: every pod gets a network namespace and an address from it" })
      .option('proxy-kubeconfig', { type: 'string', describe: 'credentials to watch Services and EndpointSlices (CN=system:kube-proxy)' })
      .option('kubelet-port', { type: 'number', default: 0, describe: 'serve the kubelet API (logs, exec, port-forward) on <address>:<port>; 0: none' })
      .option('tls-cert-file', { type: 'string', describe: "the kubelet API's serving certificate (IP SAN = --address)" })
      .option('tls-private-key-file', { type: 'string', describe: "the kubelet API's key" })
      .option('client-ca-file', { type: 'string', describe: "CA of the API server's kubelet client certificate" }) as never,
  handler: async (a) => {
    const node = a['node-name'] ?? `${a.cluster}-nodelet`;
    if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(node))
      throw new InvalidInputError(`--node-name '${node}' is not a valid Node name (lower-case DNS subdomain)`);
    const initialMs = parseDuration('restart-backoff', a['restart-backoff']);
    const maxMs = parseDuration('restart-backoff-max', a['restart-backoff-max']);
    if (maxMs < initialMs)
      throw new InvalidInputError(`--restart-backoff-max (${a['restart-backoff-max']}) is shorter than --restart-backoff (${a['restart-backoff']})`);
    const podNetworkFlags = [a.lab, a['vpc-netns'], a['pod-cidr']].filter((v) => v !== undefined).length;
    if (podNetworkFlags !== 0 && podNetworkFlags !== 3)
      throw new InvalidInputError('--lab, --vpc-netns and --pod-cidr go together: give all three for pod networks, or none');
    const tls = [a['tls-cert-file'], a['tls-private-key-file'], a['client-ca-file']];
    if (a['kubelet-port'] && tls.some((v) => !v))
      throw new InvalidInputError('--kubelet-port needs --tls-cert-file, --tls-private-key-file and --client-ca-file');
    let imageBinaries;
    try {
      imageBinaries = parseImageBinaries(a['image-binary'], ALL_BINARIES);
    } catch (err) {
      throw new InvalidInputError((err as Error).message);
    }
    const nodelet = await runNodelet({
      clusterName: a.cluster,
      nodeName: node,
      kubeconfig: path.resolve(a.kubeconfig),
      schedulerKubeconfig: path.resolve(a['scheduler-kubeconfig']),
      workDir: path.resolve(a['work-dir']),
      address: a.address,
      version: a['kubernetes-version'],
      cliMain: path.resolve(process.argv[1] ?? ''),
      backoff: { initialMs, maxMs, resetAfterMs: 2 * maxMs },
      resyncMs: parseDuration('resync', a.resync),
      ocmVersion: a['ocm-version'],
      imageBinaries,
      ...(a['runc-root'] ? { runcRoot: path.resolve(a['runc-root']) } : {}),
      ...(a.lab && a['vpc-netns'] && a['pod-cidr'] ? { podNetwork: { labName: a.lab, vpcNetns: a['vpc-netns'], podCidr: a['pod-cidr'] } } : {}),
      ...(a['proxy-kubeconfig'] ? { proxyKubeconfig: a['proxy-kubeconfig'] } : {}),
      kubeletPort: a['kubelet-port'],
      ...(a['tls-cert-file'] && a['tls-private-key-file'] && a['client-ca-file']
        ? { kubeletTls: { certFile: a['tls-cert-file'], keyFile: a['tls-private-key-file'], clientCaFile: a['client-ca-file'] } }
        : {}),
    });
    await new Promise<void>((resolve) => {
      const stop = (): void => {
        process.stderr.write(`${new Date().toISOString()} stopping: containers get SIGTERM\n`);
        nodelet.stop().then(resolve, (err: Error) => {
          process.stderr.write(`stop: ${err.message}\n`);
          resolve();
        });
      };
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
    });
    process.exit(0);
  },
};
