import { existsSync, realpathSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_BACKOFF, type BackoffPolicy } from './backoff.js';
import { Binder } from './binder.js';
import { EventRecorder } from './events.js';
import { cliLauncherScript, ImageCatalog, type ImageCatalogOptions } from './images.js';
import { isStatus, KubeClient } from '../kube/client.js';
import { NodeAgent } from './node-agent.js';
import { SHARED_HOST_DIRS } from './oci/bundle.js';
import { cleanupContainers, runcAt, type Runc } from './oci/runc.js';
import { startKubeletServer, type KubeletServer } from './kubelet-api/index.js';
import { nodeletKubeletBackend } from './kubelet-backend.js';
import { hostPortCheck, PodNetwork, podNetworkHooks, ServiceProxy } from './pod-network/index.js';
import { probeUserAgent } from './probes.js';
import { SERVICE_IP } from '../kube/service-network.js';
import { PodWorker, type NodeletContext } from './pod-worker.js';
import { Informer, RESYNCING } from '../kube/informer.js';
import { sleep } from '../kube/wait.js';
import type { ConfigMap, ObjectSource, Pod, Secret } from './types.js';
import type { BinaryName } from '../provision/recipes.js';
import { OCM_VERSION } from '../provision/versions.js';
import { writeFileAtomic } from '../util/atomic-file.js';

/** How long a starting nodelet waits for the pods bound to it before posting its node Ready. */
const KNOWN_PODS_WAIT_MS = 30_000;

export interface NodeletOptions {
  clusterName: string;
  nodeName: string;
  /** Node identity (CN=system:node:<node>, O=system:nodes): the Node authorizer limits it like a kubelet. */
  kubeconfig: string;
  /** Scheduler identity (CN=system:kube-scheduler): binds pods, which nodes may not. */
  schedulerKubeconfig: string;
  workDir: string;
  /** The cluster's address: node InternalIP (and podIP of hostNetwork pods, and of every pod without podNetwork). */
  address: string;
  version: string;
  /** The kubelet API's port on `address`, reported in the Node's daemonEndpoints. */
  kubeletPort?: number;
  cliMain: string;
  nodeBinary?: string;
  /** The lab's OCM version: OCM's upstream images run at this tag (default: the version ocm-lab provisions). */
  ocmVersion?: string;
  /** Provisioned binaries the image map needs (`registration-operator` → path, …); without them only our image runs. */
  imageBinaries?: Partial<Record<BinaryName, string>>;
  /** runc's state directory; default `<workDir>/runc`. */
  runcRoot?: string;
  /** Pods get network namespaces and addresses of their own: the lab, the VPC namespace the nodelet runs in, and the cluster's pod range. */
  podNetwork?: { labName: string; vpcNetns: string; podCidr: string };
  /** The `system:kube-proxy` identity: Services and EndpointSlices for the pods' ClusterIP rules (with podNetwork). */
  proxyKubeconfig?: string;
  /** The kubelet API's TLS: serving certificate and key (IP SAN = address), and the CA of the API server's client certificate. */
  kubeletTls?: { certFile: string; keyFile: string; clientCaFile: string };
  backoff?: BackoffPolicy;
  resyncMs?: number;
  log?: (line: string) => void;
}

export interface RunningNodelet {
  /** Running container pids by pod (`namespace/name`) and container. */
  pids(): Record<string, Record<string, number>>;
  stop(): Promise<void>;
}

function objectSource(client: KubeClient): ObjectSource {
  const read = async <T>(p: string): Promise<T | null> => {
    try {
      return await client.get<T>(p);
    } catch (err) {
      if (isStatus(err, 404)) return null;
      throw err; // 403 right after binding: the Node authorizer's graph has not seen the pod yet; the caller retries
    }
  };
  return {
    secret: (ns, name) => read<Secret>(`/api/v1/namespaces/${ns}/secrets/${name}`),
    configMap: (ns, name) => read<ConfigMap>(`/api/v1/namespaces/${ns}/configmaps/${name}`),
  };
}

/**
 * How the ocm-lab image runs here: `<package>/dist/cli/main.js` (symlinks
 * resolved: an npm bin link would otherwise point at the wrong root), with the
 * package root mounted at its own path so node_modules resolve — and the folder
 * `<package>/node_modules` links to, when it is a link out of the package (a git
 * worktree sharing a checkout's install): in the container the link would lead nowhere.
 */
function cliImage(cliMain: string, nodeBinary: string): ImageCatalogOptions['cli'] {
  const main = realpathSync(cliMain);
  const packageRoot = path.resolve(path.dirname(main), '..', '..');
  if (!existsSync(path.join(packageRoot, 'package.json')))
    throw new Error(`internal: ${main} is not <package>/dist/cli/main.js (no package.json in ${packageRoot})`);
  const modules = path.join(packageRoot, 'node_modules');
  const linked = existsSync(modules) ? realpathSync(modules) : modules;
  const outside = linked !== modules && !linked.startsWith(`${packageRoot}${path.sep}`);
  return { nodeBinary: realpathSync(nodeBinary), cliMain: main, packageRoot, ...(outside ? { linkedDependencies: linked } : {}) };
}

/**
 * Runs every pod bound to this node until stopped. As a kubelet, the node is posted Ready only once its
 * kubelet API listens and the pods already bound here are known (their containers adopted), so `kubectl logs`
 * and `exec` answer from the moment the node is Ready.
 */
export async function runNodelet(o: NodeletOptions): Promise<RunningNodelet> {
  const log = o.log ?? ((line: string) => process.stderr.write(`${new Date().toISOString()} ${line}\n`));
  const parts = await buildParts(o, log);
  return startPods(o, parts, log);
}

/** What the pods of a node run on: API clients, its pod network and the context pod workers share. */
interface NodeletParts {
  client: KubeClient;
  scheduler: KubeClient;
  proxyClient: KubeClient | undefined;
  podNetwork: PodNetwork | undefined;
  serviceProxy: ServiceProxy | undefined;
  images: ImageCatalog;
  ctx: NodeletContext;
}

/** Builds the parts; the Service rules are running when it returns. */
async function buildParts(o: NodeletOptions, log: (line: string) => void): Promise<NodeletParts> {
  const client = await KubeClient.fromKubeconfig(o.kubeconfig);
  const scheduler = await KubeClient.fromKubeconfig(o.schedulerKubeconfig);
  const node = { nodeName: o.nodeName, address: o.address, cpuCores: os.cpus().length, memoryBytes: os.totalmem() };
  const podsDir = path.join(o.workDir, 'pods');
  await fs.mkdir(podsDir, { recursive: true, mode: 0o700 });
  const runc = runcAt(o.runcRoot ?? path.join(o.workDir, 'runc'));
  const cli = cliImage(o.cliMain, o.nodeBinary ?? process.execPath);
  // `ocm-lab` on PATH in our image, as the Dockerfile links it: a script of this node and CLI, bound in read-only.
  const launcher = path.join(o.workDir, 'ocm-lab-launcher');
  await writeFileAtomic(launcher, cliLauncherScript(cli.nodeBinary, cli.cliMain), 0o755);
  const images = new ImageCatalog({ ocmVersion: o.ocmVersion ?? OCM_VERSION, binaries: o.imageBinaries ?? {}, cli: { ...cli, launcher } });
  const { podNetwork, serviceProxy, proxyClient } = await startPodNetwork(o, client, log);
  const vpcNetns = o.podNetwork?.vpcNetns;

  const ctx: NodeletContext = {
    client,
    objects: objectSource(client),
    events: new EventRecorder(client, 'nodelet', o.nodeName, log),
    node,
    clusterName: o.clusterName,
    apiServer: { url: client.endpoint.server, caPem: client.endpoint.caPem },
    podsDir,
    images,
    runc,
    hostDirs: SHARED_HOST_DIRS.filter((d) => existsSync(d)),
    ...(podNetwork ? { network: podNetworkHooks(podNetwork) } : {}),
    ...(serviceProxy ? { kubernetesService: { host: SERVICE_IP, port: '443' }, serviceHosts: (namespace: string) => serviceProxy.hostAliases(namespace) } : {}),
    ...(vpcNetns ? { hostPortInUse: (port: number, protocol: 'TCP' | 'UDP' | 'SCTP') => hostPortCheck(vpcNetns, o.address, port, protocol) } : {}),
    probeUserAgent: probeUserAgent(o.version),
    backoff: o.backoff ?? DEFAULT_BACKOFF,
    resyncMs: o.resyncMs ?? 60_000,
    log,
  };
  return { client, scheduler, proxyClient, podNetwork, serviceProxy, images, ctx };
}

/** Registers the Node (retrying while the API server comes up), then starts its lease and status loops. */
async function registerNode(o: NodeletOptions, client: KubeClient, node: NodeletContext['node'], log: (line: string) => void): Promise<NodeAgent> {
  const agent = new NodeAgent({
    client,
    node,
    version: o.version,
    kubeletPort: o.kubeletPort ?? 0,
    leaseDurationSeconds: 40,
    renewIntervalMs: 10_000,
    statusIntervalMs: 60_000,
    log,
  });
  for (let attempt = 1; ; attempt++) {
    try {
      await agent.register();
      break;
    } catch (err) {
      if (attempt >= 30) throw err;
      log(`registering node ${o.nodeName}: ${(err as Error).message}; retrying`);
      await sleep(Math.min(500 * attempt, 5_000));
    }
  }
  agent.start();
  return agent;
}

/** The pods' own network (with podNetwork) and the ClusterIP rules of Services (with a kube-proxy identity too). */
async function startPodNetwork(
  o: NodeletOptions,
  client: KubeClient,
  log: (line: string) => void,
): Promise<{ podNetwork: PodNetwork | undefined; serviceProxy: ServiceProxy | undefined; proxyClient: KubeClient | undefined }> {
  const podNetwork = o.podNetwork
    ? new PodNetwork({
        labName: o.podNetwork.labName,
        clusterName: o.clusterName,
        vpcNetns: o.podNetwork.vpcNetns,
        podCidr: o.podNetwork.podCidr,
        nodeIP: o.address,
        log,
      })
    : undefined;
  const apiServer = new URL(client.endpoint.server);
  let serviceProxy: ServiceProxy | undefined;
  let proxyClient: KubeClient | undefined;
  if (podNetwork && o.proxyKubeconfig) {
    proxyClient = await KubeClient.fromKubeconfig(o.proxyKubeconfig);
    serviceProxy = new ServiceProxy({ client: proxyClient, sink: podNetwork, log, apiServer: { ip: apiServer.hostname, port: Number(apiServer.port || 443) } });
    serviceProxy.start();
  }
  return { podNetwork, serviceProxy, proxyClient };
}

/**
 * Starts the kubelet API and the pod loops: a worker per pod bound here (orphans of pods gone while no
 * nodelet ran are removed once the reflector has synced); then registers the node and starts the binder.
 */
async function startPods(o: NodeletOptions, parts: NodeletParts, log: (line: string) => void): Promise<RunningNodelet> {
  const { client, scheduler, proxyClient, podNetwork, serviceProxy, images, ctx } = parts;
  const workers = new Map<string, PodWorker>();
  const removing = new Set<Promise<void>>();
  const remove = (uid: string) => {
    const w = workers.get(uid);
    if (!w) return;
    workers.delete(uid);
    const p = w.removed().finally(() => removing.delete(p));
    removing.add(p);
  };
  let kubelet: KubeletServer | undefined;
  if (o.kubeletTls && o.kubeletPort) {
    kubelet = await startKubeletServer({
      address: o.address,
      port: o.kubeletPort,
      certFile: o.kubeletTls.certFile,
      keyFile: o.kubeletTls.keyFile,
      clientCaFile: o.kubeletTls.clientCaFile,
      backend: nodeletKubeletBackend(() => workers.values(), o.address),
      log,
    });
  }
  const pods = new Informer<Pod>(client, '/api/v1/pods', log, { fieldSelector: `spec.nodeName=${o.nodeName}` }, RESYNCING);
  pods.onEvent(({ type, object: pod }) => {
    const uid = pod.metadata.uid ?? '';
    if (type === 'DELETED') return remove(uid);
    let w = workers.get(uid);
    if (!w) {
      w = new PodWorker(ctx, pod);
      workers.set(uid, w);
      log(`pod ${pod.metadata.namespace}/${pod.metadata.name} bound here`);
    }
    w.update(pod);
  });
  pods.onSync(() => void removeOrphans(ctx.podsDir, ctx.runc, podNetwork, new Set(workers.values()), log));
  pods.start();
  await knownPods(pods, workers, log);
  const agent = await registerNode(o, client, ctx.node, log);
  const binder = new Binder(scheduler, o.nodeName, new EventRecorder(scheduler, 'nodelet-scheduler', o.nodeName, log), log, images);
  binder.start();
  log(
    `nodelet ${o.nodeName} running (cluster ${o.clusterName}, address ${o.address}` +
      `${kubelet ? `, kubelet API :${kubelet.port}` : ''}${o.podNetwork ? `, pods in ${o.podNetwork.podCidr}` : ''})`,
  );

  return {
    pids: () => Object.fromEntries([...workers.values()].map((w) => [w.key, w.pids()])),
    stop: async () => {
      // An API call in flight may hang when the API server is already gone (down stops it too): don't wait long for it.
      const loops = Promise.all([binder.stop(), pods.stop(), agent.stop(), serviceProxy?.stop(), kubelet?.close()]);
      await Promise.all([...workers.values()].map((w) => w.shutdown(5_000)));
      await Promise.race([Promise.all([loops, ...removing]), sleep(1_000)]);
      client.close();
      scheduler.close();
      proxyClient?.close();
    },
  };
}

/**
 * Waits, for at most KNOWN_PODS_WAIT_MS, until the pods bound here are listed and their workers have adopted
 * what an earlier nodelet left running. Past that (an API server still starting), the node registers anyway.
 */
async function knownPods(pods: Informer<Pod>, workers: Map<string, PodWorker>, log: (line: string) => void): Promise<void> {
  const timer = new AbortController();
  const known = pods.waitForSync().then(() => Promise.all([...workers.values()].map((w) => w.adoptionDone)));
  const waited = await Promise.race([known.then(() => true), sleep(KNOWN_PODS_WAIT_MS, timer.signal).then(() => false)]).finally(() => timer.abort());
  if (!waited) log(`pods bound here not listed and adopted within ${KNOWN_PODS_WAIT_MS / 1000} s; registering the node anyway`);
}

/** Containers and pod directories of pods that no longer exist (deleted while no nodelet ran): stop, remove. */
async function removeOrphans(
  podsDir: string,
  runc: Runc,
  network: PodNetwork | undefined,
  workers: Set<PodWorker>,
  log: (line: string) => void,
): Promise<void> {
  const uids = [...workers].map((w) => w.uid);
  const stale = await cleanupContainers(runc, (id) => !uids.some((uid) => id.startsWith(`${uid}-`))).catch((err: Error) => {
    log(`looking for containers of pods that no longer exist: ${err.message}`);
    return [] as string[];
  });
  if (stale.length) log(`removed containers ${stale.join(', ')} of pods that no longer exist`);
  const staleNetworks = await network?.cleanupOrphans(new Set(uids)).catch((err: Error) => {
    log(`looking for network namespaces of pods that no longer exist: ${err.message}`);
    return [] as string[];
  });
  if (staleNetworks?.length) log(`removed network namespaces ${staleNetworks.join(', ')} of pods that no longer exist`);
  const known = new Set([...workers].map((w) => path.basename(w.dir)));
  for (const entry of await fs.readdir(podsDir).catch(() => [] as string[])) {
    if (known.has(entry)) continue;
    const dir = path.join(podsDir, entry);
    await fs.rm(dir, { recursive: true, force: true });
    log(`removed ${dir} of a pod that no longer exists`);
  }
}
