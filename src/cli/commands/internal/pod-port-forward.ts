/**
 * The client side of `pods/portforward` (what `kubectl port-forward` speaks: SPDY/3.1,
 * protocol portforward.k8s.io) for the PortForward entrypoint of cluster-proxy: one
 * upgraded connection to the API server per forwarded connection, carrying one
 * `error` and one `data` stream for the pod's port.
 */
import type net from 'node:net';
import type { KubeClient } from '../../../kube/client.js';
import { SpdySession } from '../../../nodelet/kubelet-api/spdy-session.js';

const PORT_FORWARD_PROTOCOL = 'portforward.k8s.io';

interface PodList {
  items: { metadata: { name: string; deletionTimestamp?: string }; status?: { phase?: string } }[];
}

/** Running pods matching `selector` in `namespace` (as upstream's round robin, which takes only Running pods). */
export async function runningPods(hub: KubeClient, namespace: string, selector: string): Promise<string[]> {
  const pods = await hub.get<PodList>(`/api/v1/namespaces/${namespace}/pods`, { labelSelector: selector });
  return pods.items.filter((p) => p.status?.phase === 'Running' && !p.metadata.deletionTimestamp).map((p) => p.metadata.name);
}

/**
 * Carries `conn` to `port` of pod `namespace/pod` through the API server until either side closes.
 * Resolves once the streams are open; a refused upgrade (403, 404) rejects with the server's answer.
 */
export async function forwardToPod(
  hub: KubeClient,
  target: { namespace: string; pod: string; port: number },
  conn: net.Socket,
  log: (line: string) => void,
): Promise<void> {
  const where = `port-forward to ${target.namespace}/${target.pod}:${target.port}`;
  const { socket, head } = await hub.upgrade('POST', `/api/v1/namespaces/${target.namespace}/pods/${target.pod}/portforward`, {
    connection: 'Upgrade',
    upgrade: 'SPDY/3.1',
    'x-stream-protocol-version': PORT_FORWARD_PROTOCOL,
  });
  const session = new SpdySession(socket, { isServer: false, head, log: (line) => log(`${where}: ${line}`) });
  const headers = { port: String(target.port), requestid: '0' };
  // As kubectl: the error stream first (we only read it), then the data stream.
  const errors = session.openStream({ ...headers, streamtype: 'error' }, { fin: true });
  const data = session.openStream({ ...headers, streamtype: 'data' });
  let reported = '';
  errors.on('data', (chunk: Buffer) => (reported += chunk.toString('utf8')));
  errors.on('end', () => {
    if (!reported) return;
    log(`${where}: the kubelet reported: ${reported.trim()}`);
    conn.destroy();
  });
  conn.pipe(data);
  data.pipe(conn);
  conn.on('error', () => conn.destroy());
  conn.on('close', () => session.close());
  data.on('close', () => conn.destroy());
  session.on('close', () => conn.destroy());
}
