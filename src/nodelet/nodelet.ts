import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_BACKOFF, type BackoffPolicy } from './backoff.js';
import { Binder } from './binder.js';
import { killLeftovers } from './container-process.js';
import { EventRecorder } from './events.js';
import { isStatus, KubeClient } from './kube-client.js';
import { NodeAgent } from './node-agent.js';
import { PodWorker, type NodeletContext } from './pod-worker.js';
import { PodReflector, sleep } from './reflector.js';
import type { ConfigMap, ObjectSource, Pod, Secret } from './types.js';

export interface NodeletOptions {
  clusterName: string;
  nodeName: string;
  /** Node identity (CN=system:node:<node>, O=system:nodes): the Node authorizer limits it like a kubelet. */
  kubeconfig: string;
  /** Scheduler identity (CN=system:kube-scheduler): binds pods, which nodes may not. */
  schedulerKubeconfig: string;
  workDir: string;
  /** The cluster's address: node InternalIP, every pod's podIP. */
  address: string;
  version: string;
  cliMain: string;
  nodeBinary?: string;
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

/** Registers the node, then runs every pod bound to it until stopped. */
export async function runNodelet(o: NodeletOptions): Promise<RunningNodelet> {
  const log = o.log ?? ((line: string) => process.stderr.write(`${new Date().toISOString()} ${line}\n`));
  const client = await KubeClient.fromKubeconfig(o.kubeconfig);
  const scheduler = await KubeClient.fromKubeconfig(o.schedulerKubeconfig);
  const node = { nodeName: o.nodeName, address: o.address, cpuCores: os.cpus().length, memoryBytes: os.totalmem() };
  const podsDir = path.join(o.workDir, 'pods');
  await fs.mkdir(podsDir, { recursive: true, mode: 0o700 });

  const agent = new NodeAgent({ client, node, version: o.version, leaseDurationSeconds: 40, renewIntervalMs: 10_000, statusIntervalMs: 60_000, log });
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

  const ctx: NodeletContext = {
    client,
    objects: objectSource(client),
    events: new EventRecorder(client, 'nodelet', o.nodeName, log),
    node,
    clusterName: o.clusterName,
    apiServer: { url: client.endpoint.server, caPem: client.endpoint.caPem },
    podsDir,
    nodeBinary: o.nodeBinary ?? process.execPath,
    cliMain: o.cliMain,
    backoff: o.backoff ?? DEFAULT_BACKOFF,
    resyncMs: o.resyncMs ?? 60_000,
    log,
  };
  const workers = new Map<string, PodWorker>();
  const removing = new Set<Promise<void>>();
  const remove = (uid: string) => {
    const w = workers.get(uid);
    if (!w) return;
    workers.delete(uid);
    const p = w.removed().finally(() => removing.delete(p));
    removing.add(p);
  };
  const reflector = new PodReflector(
    client,
    `spec.nodeName=${o.nodeName}`,
    {
      upsert: (pod: Pod) => {
        const uid = pod.metadata.uid ?? '';
        let w = workers.get(uid);
        if (!w) {
          w = new PodWorker(ctx, pod);
          workers.set(uid, w);
          log(`pod ${pod.metadata.namespace}/${pod.metadata.name} bound here`);
        }
        w.update(pod);
      },
      remove: (pod: Pod) => remove(pod.metadata.uid ?? ''),
      synced: () => void removeOrphanDirs(podsDir, new Set(workers.values()), log),
    },
    log,
  );
  reflector.start();
  const binder = new Binder(scheduler, o.nodeName, new EventRecorder(scheduler, 'nodelet-scheduler', o.nodeName, log), log);
  binder.start();
  log(`nodelet ${o.nodeName} running (cluster ${o.clusterName}, address ${o.address})`);

  return {
    pids: () => Object.fromEntries([...workers.values()].map((w) => [w.key, w.pids()])),
    stop: async () => {
      // An API call in flight may hang when the API server is already gone (down stops it too): don't wait long for it.
      const loops = Promise.all([binder.stop(), reflector.stop(), agent.stop()]);
      await Promise.all([...workers.values()].map((w) => w.shutdown(5_000)));
      await Promise.race([Promise.all([loops, ...removing]), sleep(1_000)]);
      client.close();
      scheduler.close();
    },
  };
}

/** Pod directories of pods that no longer exist (deleted while no nodelet ran): stop leftovers, remove. */
async function removeOrphanDirs(podsDir: string, workers: Set<PodWorker>, log: (line: string) => void): Promise<void> {
  const known = new Set([...workers].map((w) => path.basename(w.dir)));
  for (const entry of await fs.readdir(podsDir).catch(() => [] as string[])) {
    if (known.has(entry)) continue;
    const uid = entry.split('_').pop() ?? '';
    const dir = path.join(podsDir, entry);
    const killed = await killLeftovers(dir, uid);
    await fs.rm(dir, { recursive: true, force: true });
    log(`removed ${dir} of a pod that no longer exists${killed.length ? ` (stopped pids ${killed.join(', ')})` : ''}`);
  }
}
