import https from 'node:https';
import type { KubeClient } from '../../kube/client.js';
import type { TunnelClient } from '../../tunnel/index.js';
import { addonStates } from '../install.js';
import { CLUSTER_PROXY } from './constants.js';

export interface ProxyHealthRow {
  cluster: string;
  installed: boolean;
  available: boolean;
  probedHealth: boolean;
  latencyMs: number | null;
  error?: string;
}

/**
 * `GET https://<cluster>:443/healthz` through a fresh tunnel connection; true when it
 * answers `ok`. The API server's certificate does not name the cluster, so the probe
 * does not verify it (as upstream's probe): it checks reachability, not identity.
 */
export async function probeCluster(tunnel: TunnelClient, cluster: string, timeoutMs = 10_000): Promise<{ ok: boolean; latencyMs: number; error?: string }> {
  const started = process.hrtime.bigint();
  const elapsed = () => Number(process.hrtime.bigint() - started) / 1e6;
  try {
    const agent = tunnel.httpsAgent({ rejectUnauthorized: false, keepAlive: false });
    const body = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = https.get({ host: cluster, port: 443, path: '/healthz', agent, timeout: timeoutMs }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      req.on('error', reject);
    });
    agent.destroy();
    const ok = body.status === 200 && body.text.trim() === 'ok';
    return { ok, latencyMs: elapsed(), ...(ok ? {} : { error: `HTTP ${body.status}: ${body.text.trim().slice(0, 200)}` }) };
  } catch (err) {
    return { ok: false, latencyMs: elapsed(), error: (err as Error).message };
  }
}

/** The rows of `proxy health` (like `clusteradm proxy health`). */
export async function proxyHealth(hub: KubeClient, tunnel: TunnelClient | null, clusters: string[]): Promise<ProxyHealthRow[]> {
  const states = await addonStates(hub, CLUSTER_PROXY, clusters);
  const rows: ProxyHealthRow[] = [];
  for (const s of states) {
    const probe = tunnel ? await probeCluster(tunnel, s.cluster) : { ok: false, latencyMs: null, error: 'no tunnel client' };
    rows.push({
      cluster: s.cluster,
      installed: s.installed,
      available: s.available,
      probedHealth: probe.ok,
      latencyMs: probe.ok ? probe.latencyMs : null,
      ...(probe.error ? { error: probe.error } : {}),
    });
  }
  return rows;
}
