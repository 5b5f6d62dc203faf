import fs from 'node:fs/promises';
import net from 'node:net';
import { NotReadyError } from '../../errors.js';
import type { ClusterPlan } from './plan.js';
import { CONTROLLER_MANAGER_PORT, ETCD_CLIENT_PORT } from './plan.js';
import type { ClusterPkiPaths } from '../../pki/index.js';
import { probe, type ClientTls } from '../../kube/readiness.js';
import type { ControlPlaneComponent } from './controlplane.js';
import https from 'node:https';
import path from 'node:path';
import { sleep } from '../../kube/wait.js';

/**
 * How long the local runtime waits for each control-plane component, and then for each nodelet's Node, to be Ready
 * when `up` is given no `readyTimeoutMs`.
 */
export const DEFAULT_READY_TIMEOUT_MS = 120_000;

async function adminTls(pki: Pick<ClusterPkiPaths, 'caCert' | 'adminCert' | 'adminKey'>): Promise<ClientTls> {
  const [caPem, certPem, keyPem] = await Promise.all([fs.readFile(pki.caCert, 'utf8'), fs.readFile(pki.adminCert, 'utf8'), fs.readFile(pki.adminKey, 'utf8')]);
  return { caPem, certPem, keyPem };
}

function tcpOpen(host: string, port: number, timeoutMs = 1_000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** kube-controller-manager serves /healthz to anyone over its self-signed port. */
function controllerManagerHealthy(host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = https.get({ host, port: CONTROLLER_MANAGER_PORT, path: '/healthz', rejectUnauthorized: false, timeout: 1_000, agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
  });
}

async function componentAnswers(cluster: ClusterPlan, component: ControlPlaneComponent, tls: ClientTls): Promise<{ ok: boolean; detail: string }> {
  switch (component) {
    case 'etcd': {
      const ok = await tcpOpen(cluster.address, ETCD_CLIENT_PORT);
      return { ok, detail: ok ? 'accepting connections' : `no answer on ${cluster.address}:${ETCD_CLIENT_PORT}` };
    }
    case 'kube-apiserver': {
      const r = await probe(`${cluster.apiServerUrl}/readyz`, tls);
      return {
        ok: r.ok,
        detail: r.status
          ? `/readyz answered ${r.status}: ${
              r.body
                .trim()
                .split('\n')
                .filter((l) => l.includes('failed'))
                .join('; ') || r.body.trim().slice(0, 200)
            }`
          : r.body,
      };
    }
    case 'kube-controller-manager': {
      const ok = await controllerManagerHealthy(cluster.address);
      return { ok, detail: ok ? 'healthy' : `/healthz on ${cluster.address}:${CONTROLLER_MANAGER_PORT} not OK` };
    }
  }
}

/** Polls a component until it answers, or fails with what it last said. */
export async function waitForComponent(cluster: ClusterPlan, component: ControlPlaneComponent, pki: ClusterPkiPaths, timeoutMs: number): Promise<void> {
  const tls = await adminTls(pki);
  const deadline = Date.now() + timeoutMs;
  let last = { ok: false, detail: 'not probed yet' };
  let interval = 100;
  while (Date.now() < deadline) {
    last = await componentAnswers(cluster, component, tls);
    if (last.ok) return;
    await sleep(interval);
    interval = Math.min(interval * 2, 1_000);
  }
  throw new NotReadyError(`${cluster.name}/${component} did not become ready within ${Math.round(timeoutMs / 1000)} s (last: ${last.detail})`);
}

/** One quick readiness probe of a cluster's apiserver with the lab's admin credentials. */
export async function apiServerAnswers(cluster: ClusterPlan): Promise<boolean> {
  try {
    const p = (f: string) => path.join(cluster.pkiDir, f);
    const tls = await adminTls({ caCert: p('ca.crt'), adminCert: p('admin.crt'), adminKey: p('admin.key') });
    return (await probe(`${cluster.apiServerUrl}/readyz`, tls)).ok;
  } catch {
    return false;
  }
}
