import fs from 'node:fs/promises';
import net from 'node:net';
import type { Writable } from 'node:stream';
import { streamContainerLog } from './cri-log.js';
import { KubeletNotFound, type ExecProcess, type KubeletBackend, type LogStreamOptions } from './kubelet-api/index.js';
import type { PodWorker } from './pod-worker.js';

const DIAL_TIMEOUT_MS = 10_000;

/**
 * The kubelet API's view of this nodelet: pods are the workers, logs are the
 * containers' CRI log files, exec is `runc exec`, and a port of a pod is
 * dialled at its pod IP (the nodelet runs in the VPC namespace, which routes
 * to every pod of its clusters).
 */
export function nodeletKubeletBackend(workers: () => Iterable<PodWorker>, nodeIP: string): KubeletBackend {
  const workerOf = (ns: string, pod: string): PodWorker => {
    for (const w of workers()) if (w.key === `${ns}/${pod}`) return w;
    throw new KubeletNotFound(`pod "${pod}" in namespace "${ns}" is not running on this node`);
  };
  const containerOf = (ns: string, pod: string, container: string) => {
    const c = workerOf(ns, pod).container(container || undefined);
    if (!c) throw new KubeletNotFound(`container "${container}" in pod "${pod}" is not available`);
    return c;
  };
  return {
    pods: () => [...workers()].map((w) => w.current),

    async streamLogs(ns: string, pod: string, container: string, opts: LogStreamOptions, out: Writable, signal: AbortSignal): Promise<void> {
      const c = containerOf(ns, pod, container);
      const file = opts.previous ? c.previousLogFile : c.logFile;
      if (
        opts.previous &&
        !(await fs.stat(file).then(
          () => true,
          () => false,
        ))
      ) {
        // Not a 404: the pod and container exist (the kubelet answers 400 with this text).
        throw new Error(`previous terminated container "${c.name}" in pod "${pod}" not found`);
      }
      const stillRunning = () => !opts.previous && !!workerOf(ns, pod).container(c.name)?.running;
      await streamContainerLog(
        file,
        {
          follow: opts.follow && !opts.previous,
          ...(opts.tailLines !== undefined ? { tailLines: opts.tailLines } : {}),
          ...(opts.sinceTime ? { sinceTime: opts.sinceTime } : {}),
          timestamps: opts.timestamps,
          ...(opts.limitBytes !== undefined ? { limitBytes: opts.limitBytes } : {}),
          ...(opts.stream ? { stream: opts.stream } : {}),
        },
        out,
        { signal, stillRunning },
      );
    },

    async exec(ns: string, pod: string, container: string, command: string[], opts: { tty: boolean; stdin: boolean }): Promise<ExecProcess> {
      const c = containerOf(ns, pod, container);
      if (!c.running) throw new Error(`container "${c.name}" in pod "${pod}" is not running`);
      return c.running.exec(command, { tty: opts.tty, stdin: opts.stdin });
    },

    dialPort(ns: string, pod: string, port: number): Promise<net.Socket> {
      const host = workerOf(ns, pod).podIP ?? nodeIP;
      return new Promise((resolve, reject) => {
        const socket = net.connect({ host, port });
        socket.setTimeout(DIAL_TIMEOUT_MS, () => socket.destroy(new Error(`dial tcp ${host}:${port}: i/o timeout`)));
        socket.once('connect', () => {
          socket.setTimeout(0);
          resolve(socket);
        });
        socket.once('error', (err) => reject(new Error(`dial tcp ${host}:${port}: ${err.message}`)));
      });
    },
  };
}
