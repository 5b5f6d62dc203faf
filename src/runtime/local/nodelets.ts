import fs from 'node:fs/promises';
import path from 'node:path';
import { MissingPrerequisiteError, NotReadyError } from '../../errors.js';
import { CLI_MAIN } from '../../paths.js';
import { readKubeconfig, writeKubeconfig } from '../../kube/kubeconfig.js';
import type { ClusterPlan } from './plan.js';
import { certificateInfo, issueCertificate, loadCA, writePublicFile, writeSecretFile, type ClusterPkiPaths } from '../../pki/index.js';
import type { BinaryName } from '../../provision/index.js';
import { imageBinaryNames } from './lab-binaries.js';
import { adminKubeconfigPath } from './kubeconfigs.js';
import { logTail, processState, startProcess, type ProcessSpec } from './process.js';
import type { LocalContext } from './runtime.js';
import type { Step } from '../types.js';
import { isStatus, KubeClient } from '../../kube/client.js';
import { nodeHasNoLiveContainers } from './stale-leases.js';
import { DEFAULT_READY_TIMEOUT_MS } from './readiness.js';
import { releaseLeasesOfDeadPods } from '../../kube/leader-leases.js';
import { sleep } from '../../kube/wait.js';

/*
 * The lab's nodelets, one per cluster (its only node): their identities, how each is launched, the `Nodelets` step
 * of `up` and its wait until the Node is Ready.
 */

export function nodeName(cluster: Pick<ClusterPlan, 'name'>): string {
  return `${cluster.name}-nodelet`;
}

/** `<cluster.dir>/nodelet`: credentials, and a directory per pod (logs, volumes, kubeconfig). */
export function nodeletWorkDir(cluster: Pick<ClusterPlan, 'dir'>): string {
  return path.join(cluster.dir, 'nodelet');
}

export interface NodeletCredentials {
  /** CN=system:node:<node>, O=system:nodes. */
  node: string;
  /** CN=system:kube-scheduler: binds pods. */
  scheduler: string;
  /** CN=system:kube-proxy: watches Services and EndpointSlices for the pods' ClusterIP rules. */
  proxy: string;
  /** The kubelet API's serving certificate (IP SAN = the node's InternalIP) and key. */
  servingCert: string;
  servingKey: string;
}

export function nodeletCredentials(cluster: Pick<ClusterPlan, 'dir'>): NodeletCredentials {
  const dir = path.join(nodeletWorkDir(cluster), 'credentials');
  return {
    node: path.join(dir, 'node.kubeconfig'),
    scheduler: path.join(dir, 'scheduler.kubeconfig'),
    proxy: path.join(dir, 'proxy.kubeconfig'),
    servingCert: path.join(dir, 'kubelet.crt'),
    servingKey: path.join(dir, 'kubelet.key'),
  };
}

const RENEW_BEFORE_MS = 30 * 24 * 3600 * 1000;

/** Keeps a kubeconfig whose client certificate is still ours and current; issues a new one otherwise. */
async function ensureClientKubeconfig(file: string, cluster: ClusterPlan, pki: ClusterPkiPaths, commonName: string, organizations: string[]): Promise<void> {
  const ca = await loadCA(pki.caCert, pki.caKey);
  try {
    const kubeconfig = await readKubeconfig(file);
    const info = certificateInfo(kubeconfig.certPem ?? '');
    const current =
      info.commonName === commonName &&
      info.issuer === certificateInfo(ca.certPem).subject &&
      info.notAfter.getTime() - Date.now() > RENEW_BEFORE_MS &&
      kubeconfig.server === cluster.apiServerUrl;
    if (current) return;
  } catch {
    // missing or unreadable: issue
  }
  const pair = await issueCertificate(ca, { commonName, organizations, usages: ['client'] });
  await writeKubeconfig(file, [
    { name: cluster.name, server: cluster.apiServerUrl, caPem: ca.certPem, clientCertPem: pair.certPem, clientKeyPem: pair.keyPem },
  ]);
}

/** Keeps a serving certificate that is ours, current and names `address`; issues a new one otherwise. */
async function ensureServingCertificate(certFile: string, keyFile: string, pki: ClusterPkiPaths, commonName: string, address: string): Promise<void> {
  const ca = await loadCA(pki.caCert, pki.caKey);
  try {
    const info = certificateInfo(await fs.readFile(certFile, 'utf8'));
    await fs.access(keyFile);
    const current =
      info.commonName === commonName &&
      info.issuer === certificateInfo(ca.certPem).subject &&
      info.ipAddresses.length === 1 &&
      info.ipAddresses[0] === address &&
      info.notAfter.getTime() - Date.now() > RENEW_BEFORE_MS;
    if (current) return;
  } catch {
    // missing or unreadable: issue
  }
  const pair = await issueCertificate(ca, { commonName, ipAddresses: [address], usages: ['server'] });
  await writeSecretFile(keyFile, pair.keyPem);
  await writePublicFile(certFile, pair.certPem);
}

/**
 * The nodelet's identities: the node (the Node authorizer lets it read
 * exactly what its pods reference), the scheduler (bindings), kube-proxy
 * (Services and EndpointSlices), and the kubelet API's serving certificate.
 */
async function ensureNodeletCredentials(cluster: ClusterPlan, pki: ClusterPkiPaths): Promise<NodeletCredentials> {
  const files = nodeletCredentials(cluster);
  await fs.mkdir(path.dirname(files.node), { recursive: true, mode: 0o700 });
  await ensureClientKubeconfig(files.node, cluster, pki, `system:node:${nodeName(cluster)}`, ['system:nodes']);
  await ensureClientKubeconfig(files.scheduler, cluster, pki, 'system:kube-scheduler', []);
  await ensureClientKubeconfig(files.proxy, cluster, pki, 'system:kube-proxy', []);
  await ensureServingCertificate(files.servingCert, files.servingKey, pki, `system:node:${nodeName(cluster)}`, cluster.address);
  return files;
}

/** Programs the nodelet runs besides itself: containers (runc), network namespaces (nsenter), exec terminals (script). */
const NODE_PROGRAMS = [
  { program: 'runc', packageName: 'runc' },
  { program: 'nsenter', packageName: 'util-linux' },
  { program: 'script', packageName: 'bsdutils' },
];

async function onPath(program: string): Promise<boolean> {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    if (
      await fs.access(path.join(dir, program), fs.constants.X_OK).then(
        () => true,
        () => false,
      )
    )
      return true;
  }
  return false;
}

/** Refuses to start a nodelet that could not run a single container, naming what to install (or that root is needed). */
async function checkNodePrograms(): Promise<void> {
  if (process.getuid?.() !== 0) {
    throw new MissingPrerequisiteError('the nodelet runs pods as runc containers in network namespaces of their own, which needs root', {
      hint: 'run ocm-lab as root (sudo)',
    });
  }
  const missing = [];
  for (const p of NODE_PROGRAMS) if (!(await onPath(p.program))) missing.push(p);
  if (missing.length) {
    throw new MissingPrerequisiteError(`the nodelet needs ${missing.map((m) => m.program).join(', ')} on PATH to run pods`, {
      hint:
        `install ${missing.map((m) => m.packageName).join(' ')} ` +
        `(e.g. 'apt-get install ${missing.map((m) => m.packageName).join(' ')}'; scripts/bootstrap.sh does it)`,
    });
  }
}

/** Where the kubelet API listens on the node's InternalIP (the kubelet's default port). */
export const KUBELET_PORT = 10250;

export interface NodeletLaunch {
  cluster: ClusterPlan;
  labName: string;
  credentials: NodeletCredentials;
  clusterCaCert: string;
  kubernetesVersion: string;
  ocmVersion: string;
  /** Provisioned binaries the nodelet maps OCM's images to. */
  imageBinaries: Partial<Record<BinaryName, string>>;
}

/**
 * The nodelet runs in its cluster's VPC network namespace, entered with
 * `nsenter --net` rather than `ip netns exec`: the latter gives the process a
 * mount namespace of its own, and the pod network namespaces it creates would
 * then be invisible on the host (and to `down`).
 */
export function nodeletSpec(l: NodeletLaunch): ProcessSpec {
  const { cluster, credentials } = l;
  return {
    name: 'nodelet',
    binary: process.execPath,
    prefix: cluster.netns ? ['nsenter', `--net=/var/run/netns/${cluster.netns}`, '--'] : [],
    pidFile: path.join(cluster.runDir, 'nodelet.pid'),
    logFile: path.join(cluster.logDir, 'nodelet.log'),
    args: [
      CLI_MAIN,
      'internal',
      'nodelet',
      '--cluster',
      cluster.name,
      '--kubeconfig',
      credentials.node,
      '--scheduler-kubeconfig',
      credentials.scheduler,
      '--proxy-kubeconfig',
      credentials.proxy,
      '--node-name',
      nodeName(cluster),
      '--work-dir',
      nodeletWorkDir(cluster),
      '--address',
      cluster.address,
      ...(cluster.netns && cluster.podCidr ? ['--lab', l.labName, '--vpc-netns', cluster.netns, '--pod-cidr', cluster.podCidr] : []),
      '--kubelet-port',
      String(KUBELET_PORT),
      '--tls-cert-file',
      credentials.servingCert,
      '--tls-private-key-file',
      credentials.servingKey,
      '--client-ca-file',
      l.clusterCaCert,
      '--kubernetes-version',
      l.kubernetesVersion,
      '--ocm-version',
      l.ocmVersion,
      ...Object.entries(l.imageBinaries).flatMap(([name, file]) => ['--image-binary', `${name}=${file}`]),
    ],
  };
}

interface NodeJson {
  status?: { conditions?: { type: string; status: string }[] };
}

/** When the node's Lease (kube-node-lease/<node>, the nodelet's heartbeat) was last renewed, in ms since the epoch; 0 when it has none. */
async function leaseRenewedAt(client: KubeClient, node: string): Promise<number> {
  try {
    const lease = await client.get<{ spec?: { renewTime?: string } }>(`/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${node}`);
    return Date.parse(lease.spec?.renewTime ?? '') || 0;
  } catch (err) {
    if (isStatus(err, 404)) return 0;
    throw err;
  }
}

/** How a process we started ended, in words: its exit status or the signal that ended it. */
async function howItEnded(exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }> | undefined): Promise<string> {
  if (!exited) return 'exited';
  const end = await Promise.race([exited, sleep(1_000).then(() => null)]);
  if (!end) return 'is not running';
  return end.signal ? `was killed by ${end.signal}` : `exited with status ${String(end.code)}`;
}

/**
 * Waits until the node reports Ready (as seen by the cluster admin), or the nodelet exits. For a
 * nodelet this run started (`started`: when, and how it ended) the node's Lease must also be renewed
 * since then: a nodelet that died leaves its Node Ready until the lease runs out (40 s), and that old
 * status is not the new nodelet's.
 */
async function waitForNodeReady(
  cluster: ClusterPlan,
  adminKubeconfig: string,
  spec: ProcessSpec,
  timeoutMs: number,
  started?: { at: number; exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }> },
): Promise<void> {
  const exited = started?.exited;
  const client = await KubeClient.fromKubeconfig(adminKubeconfig);
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer yet';
  try {
    while (Date.now() < deadline) {
      const state = await processState(spec);
      if (!state.running) {
        throw new NotReadyError(
          `${cluster.name}/nodelet ${await howItEnded(exited)} (pid ${String(state.pid)})\n` +
            `--- ${spec.logFile} (last lines) ---\n${await logTail(spec.logFile)}`,
          {
            hint: `see ${spec.logFile}`,
          },
        );
      }
      try {
        const node = await client.get<NodeJson>(`/api/v1/nodes/${nodeName(cluster)}`);
        const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
        if (ready?.status === 'True' && (!started || (await leaseRenewedAt(client, nodeName(cluster))) >= started.at)) return;
        last =
          ready?.status === 'True' ? 'Ready is True, but from before this nodelet (its Lease not renewed yet)' : `Ready is ${ready?.status ?? 'not reported'}`;
      } catch (err) {
        last = (err as Error).message;
      }
      await sleep(300);
    }
  } finally {
    client.close();
  }
  throw new NotReadyError(
    `node ${nodeName(cluster)} did not become Ready within ${timeoutMs / 1000} s (${last})\n` +
      `--- ${spec.logFile} (last lines) ---\n${await logTail(spec.logFile)}`,
    {
      hint: `see ${spec.logFile}`,
    },
  );
}

/** One concurrent step per cluster (the hub too): start the nodelet unless it runs, wait for its Node to be Ready. */
export function nodeletSteps(): Step<LocalContext>[] {
  return [
    {
      title: 'Nodelets',
      concurrent: true,
      children: (ctx) =>
        ctx.clusters.map((cluster) => ({
          title: `${cluster.name}: nodelet (node ${nodeName(cluster)})`,
          run: async (c, progress) => {
            const pki = c.pki.get(cluster.name);
            if (!pki) throw new Error(`internal: ${cluster.name} has no PKI yet`);
            await fs.access(CLI_MAIN).catch(() => {
              throw new MissingPrerequisiteError(`the nodelet runs from the built CLI, and ${CLI_MAIN} is missing`, { hint: "run 'npm run build' first" });
            });
            if (!c.binaries) throw new Error('internal: binaries are not provisioned yet');
            await checkNodePrograms();
            const credentials = await ensureNodeletCredentials(cluster, pki);
            const spec = nodeletSpec({
              cluster,
              labName: c.config.name,
              credentials,
              clusterCaCert: pki.caCert,
              kubernetesVersion: c.config.kubernetesVersion,
              ocmVersion: c.config.ocmVersion,
              imageBinaries: Object.fromEntries(imageBinaryNames(c.config, c.options.extraImageBinaries).map((b) => [b, c.binaries?.[b] ?? ''])),
            });
            c.supervised.set(cluster.name, [...(c.supervised.get(cluster.name) ?? []), spec]);
            const state = await processState(spec);
            let outcome = `already running (pid ${state.pid})`;
            let proc: Awaited<ReturnType<typeof startProcess>> | undefined;
            // After a reboot (no container of the node alive) its pods' leader leases are freed: their new containers lead at once.
            let released: string[] = [];
            if (!state.running && (await nodeHasNoLiveContainers(nodeletWorkDir(cluster)))) {
              const client = await KubeClient.fromKubeconfig(adminKubeconfigPath(cluster));
              try {
                released = await releaseLeasesOfDeadPods(client, nodeName(cluster));
              } finally {
                client.close();
              }
            }
            const startedAt = Date.now();
            if (!state.running) {
              progress('starting nodelet');
              proc = await startProcess(spec);
              outcome = `started (pid ${proc.pid})`;
            }
            try {
              progress('waiting for the node to be Ready');
              await waitForNodeReady(
                cluster,
                adminKubeconfigPath(cluster),
                spec,
                c.options.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS,
                proc && { at: startedAt, exited: proc.exited },
              );
            } finally {
              proc?.release();
            }
            return `${outcome}, node Ready${released.length ? `; released ${released.length} leader leases its dead pods held (${released.join(', ')})` : ''}`;
          },
        })),
    },
  ];
}

/** `['pods']` when every cluster of the lab has its nodelet running (Deployments of our image can run), else `[]`. */
export async function nodeletCapabilities(labDirectory: string, clusterNames: readonly string[]): Promise<string[]> {
  const states = await Promise.all(
    clusterNames.map((name) => processState({ pidFile: path.join(labDirectory, 'clusters', name, 'run', 'nodelet.pid'), binary: process.execPath })),
  );
  return states.length > 0 && states.every((s) => s.running) ? ['pods'] : [];
}
