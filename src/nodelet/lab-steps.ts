import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { MissingPrerequisiteError, NotReadyError } from '../errors.js';
import { writeKubeconfig } from '../kube/kubeconfig.js';
import type { ClusterPlan } from '../lab/plan.js';
import { certificateInfo, issueCertificate, loadCA, type ClusterPkiPaths } from '../pki/index.js';
import { adminKubeconfigPath } from '../runtime/local/kubeconfigs.js';
import { logTail, processState, startProcess, type ProcessSpec } from '../runtime/local/process.js';
import type { LocalContext } from '../runtime/local/runtime.js';
import type { Step } from '../runtime/types.js';
import { KubeClient } from './kube-client.js';
import { sleep } from './reflector.js';

/** The built CLI: the nodelet runs from it and runs containers with it. */
export const CLI_MAIN = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

export function nodeName(cluster: Pick<ClusterPlan, 'name'>): string {
  return `${cluster.name}-nodelet`;
}

/** `<cluster.dir>/nodelet`: credentials, and a directory per pod (logs, volumes, kubeconfig). */
export function nodeletWorkDir(cluster: Pick<ClusterPlan, 'dir'>): string {
  return path.join(cluster.dir, 'nodelet');
}

export function nodeletCredentials(cluster: Pick<ClusterPlan, 'dir'>): { node: string; scheduler: string } {
  const dir = path.join(nodeletWorkDir(cluster), 'credentials');
  return { node: path.join(dir, 'node.kubeconfig'), scheduler: path.join(dir, 'scheduler.kubeconfig') };
}

const RENEW_BEFORE_MS = 30 * 24 * 3600 * 1000;

/** Keeps a kubeconfig whose client certificate is still ours and current; issues a new one otherwise. */
async function ensureClientKubeconfig(file: string, cluster: ClusterPlan, pki: ClusterPkiPaths, commonName: string, organizations: string[]): Promise<void> {
  const ca = await loadCA(pki.caCert, pki.caKey);
  try {
    const doc = YAML.parse(await fs.readFile(file, 'utf8')) as { users: { user: Record<string, string> }[]; clusters: { cluster: Record<string, string> }[] };
    const certPem = Buffer.from(doc.users[0]?.user['client-certificate-data'] ?? '', 'base64').toString('utf8');
    const info = certificateInfo(certPem);
    const current =
      info.commonName === commonName &&
      info.issuer === certificateInfo(ca.certPem).subject &&
      info.notAfter.getTime() - Date.now() > RENEW_BEFORE_MS &&
      doc.clusters[0]?.cluster.server === cluster.apiServerUrl;
    if (current) return;
  } catch {
    // missing or unreadable: issue
  }
  const pair = await issueCertificate(ca, { commonName, organizations, usages: ['client'] });
  await writeKubeconfig(file, [{ name: cluster.name, server: cluster.apiServerUrl, caPem: ca.certPem, clientCertPem: pair.certPem, clientKeyPem: pair.keyPem }]);
}

/**
 * The nodelet's two identities: the node (the Node authorizer lets it read
 * exactly what its pods reference) and the scheduler (bindings).
 */
export async function ensureNodeletCredentials(cluster: ClusterPlan, pki: ClusterPkiPaths): Promise<{ node: string; scheduler: string }> {
  const files = nodeletCredentials(cluster);
  await fs.mkdir(path.dirname(files.node), { recursive: true, mode: 0o700 });
  await ensureClientKubeconfig(files.node, cluster, pki, `system:node:${nodeName(cluster)}`, ['system:nodes']);
  await ensureClientKubeconfig(files.scheduler, cluster, pki, 'system:kube-scheduler', []);
  return files;
}

export function nodeletSpec(cluster: ClusterPlan, credentials: { node: string; scheduler: string }, kubernetesVersion: string): ProcessSpec {
  return {
    name: 'nodelet',
    binary: process.execPath,
    prefix: cluster.netnsPrefix,
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
      '--node-name',
      nodeName(cluster),
      '--work-dir',
      nodeletWorkDir(cluster),
      '--address',
      cluster.address,
      '--kubernetes-version',
      kubernetesVersion,
    ],
  };
}

interface NodeJson {
  status?: { conditions?: { type: string; status: string }[] };
}

/** How a process we started ended, in words: its exit status or the signal that ended it. */
async function howItEnded(exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }> | undefined): Promise<string> {
  if (!exited) return 'exited';
  const end = await Promise.race([exited, new Promise<null>((r) => setTimeout(() => r(null), 1_000))]);
  if (!end) return 'is not running';
  return end.signal ? `was killed by ${end.signal}` : `exited with status ${String(end.code)}`;
}

/**
 * Waits until the node reports Ready (as seen by the cluster admin), or the nodelet exits;
 * `exited` (when this run started it) says how it ended.
 */
export async function waitForNodeReady(
  cluster: ClusterPlan,
  adminKubeconfig: string,
  spec: ProcessSpec,
  timeoutMs: number,
  exited?: Promise<{ code: number | null; signal: NodeJS.Signals | null }>,
): Promise<void> {
  const client = await KubeClient.fromKubeconfig(adminKubeconfig);
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer yet';
  try {
    while (Date.now() < deadline) {
      const state = await processState(spec);
      if (!state.running) {
        throw new NotReadyError(`${cluster.name}/nodelet ${await howItEnded(exited)} (pid ${String(state.pid)})\n--- ${spec.logFile} (last lines) ---\n${await logTail(spec.logFile)}`, {
          hint: `see ${spec.logFile}`,
        });
      }
      try {
        const node = await client.get<NodeJson>(`/api/v1/nodes/${nodeName(cluster)}`);
        const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
        if (ready?.status === 'True') return;
        last = `Ready is ${ready?.status ?? 'not reported'}`;
      } catch (err) {
        last = (err as Error).message;
      }
      await sleep(300);
    }
  } finally {
    client.close();
  }
  throw new NotReadyError(`node ${nodeName(cluster)} did not become Ready within ${timeoutMs / 1000} s (${last})\n--- ${spec.logFile} (last lines) ---\n${await logTail(spec.logFile)}`, {
    hint: `see ${spec.logFile}`,
  });
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
            const credentials = await ensureNodeletCredentials(cluster, pki);
            const spec = nodeletSpec(cluster, credentials, c.config.kubernetesVersion);
            const state = await processState(spec);
            let outcome = `already running (pid ${state.pid})`;
            let proc: Awaited<ReturnType<typeof startProcess>> | undefined;
            if (!state.running) {
              progress('starting nodelet');
              proc = await startProcess(spec);
              outcome = `started (pid ${proc.pid})`;
            }
            try {
              progress('waiting for the node to be Ready');
              await waitForNodeReady(cluster, adminKubeconfigPath(cluster), spec, c.options.readyTimeoutMs ?? 120_000, proc?.exited);
            } finally {
              proc?.release();
            }
            return `${outcome}, node Ready`;
          },
        })),
    },
  ];
}

/** `['nodelet']` when every cluster of the lab has its nodelet running (Deployments of our image can run), else `[]`. */
export async function nodeletCapabilities(labDirectory: string, clusterNames: readonly string[]): Promise<string[]> {
  const states = await Promise.all(
    clusterNames.map((name) => processState({ pidFile: path.join(labDirectory, 'clusters', name, 'run', 'nodelet.pid'), binary: process.execPath })),
  );
  return states.length > 0 && states.every((s) => s.running) ? ['nodelet'] : [];
}
