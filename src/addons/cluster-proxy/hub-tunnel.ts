import { LabError, NotReadyError } from '../../errors.js';
import { fromBase64 } from '../../kube/objects.js';
import { asHubUser } from '../hub-access.js';
import { isStatus, type KubeClient } from '../../kube/client.js';
// The client alone, not the tunnel barrel, and loaded in hubTunnel (below): `proxy kubectl` starts without it.
import type { TunnelClient } from '../../tunnel/client.js';
import { allInOrder } from '../../util/all-in-order.js';
import { ENTRYPOINT_SERVICE, PROXY_NAMESPACE, PROXY_PORTS, PROXY_SERVER_LABELS, SECRETS } from './constants.js';

export interface Pod {
  metadata: { name: string };
  spec?: { hostNetwork?: boolean };
  status?: { podIP?: string; phase?: string; conditions?: { type: string; status: string }[] };
}

/** Opens a local forward to a pod's port through the hub API server (`kubectl port-forward`); see hubPortForwarder. */
export type PodPortForwarder = (namespace: string, pod: string, port: number) => Promise<{ address: string; stop: () => Promise<void> }>;

export interface HubTunnelOptions {
  /**
   * For callers outside the hub's pod network (the operator's machine): a
   * proxy-server pod with an address of its own (upstream's; ours uses the
   * node's network) is reached through this forward, as clusteradm does, not
   * dialled by pod IP — on kind no route leads there and the packet would
   * follow the default route off the machine.
   */
  portForward?: PodPortForwarder;
  /**
   * A proxy-server pod on the hub node's network (ours) is dialled at the node's address unless this is set:
   * then it too goes through `portForward` (the host has no route to the node: kind on Docker Desktop).
   */
  forwardHostNetwork?: boolean;
  /** How long a dial waits for the agent's answer (default 10 s). */
  dialTimeoutMs?: number;
}

const PROXY_COMPONENT_LABEL = 'proxy.open-cluster-management.io/component-name';

/** The proxy-server CA from its own Secret: upstream's `proxy-client` Secret holds only tls.crt/tls.key. */
async function proxyServerCa(hub: KubeClient): Promise<string> {
  const ca = await asHubUser(`read Secret ${PROXY_NAMESPACE}/${SECRETS.ca}`, `get on secrets (resourceNames: ${SECRETS.ca}) in ${PROXY_NAMESPACE}`, () =>
    hub.get<{ data?: Record<string, string> }>(`/api/v1/namespaces/${PROXY_NAMESPACE}/secrets/${SECRETS.ca}`),
  );
  return fromBase64(ca.data?.['ca.crt']);
}

/** A port-forward to the proxy-server pod's frontend port; a refusal says which permissions it takes. */
async function forwardTo(portForward: PodPortForwarder, pod: string): Promise<{ address: string; stop: () => Promise<void> }> {
  try {
    return await portForward(PROXY_NAMESPACE, pod, PROXY_PORTS.frontend);
  } catch (err) {
    const message = (err as Error).message;
    if (/Forbidden/.test(message)) {
      throw new LabError('failure', `Forbidden: your hub identity may not port-forward to the proxy-server pod ${PROXY_NAMESPACE}/${pod}`, {
        hint: `it needs get on pods and create on pods/portforward in ${PROXY_NAMESPACE}; see scenarios/deployment-only-role.md for the whole minimal role`,
        cause: err,
      });
    }
    throw new NotReadyError(`port-forward to the proxy-server pod ${PROXY_NAMESPACE}/${pod} failed: ${message}`, { cause: err });
  }
}

/** Whether the proxy-server pod is reached through the port-forward rather than dialled at its address. */
export function reachedByForward(pod: Pod, options: HubTunnelOptions): boolean {
  return Boolean(options.portForward) && (!pod.spec?.hostNetwork || Boolean(options.forwardHostNetwork));
}

/**
 * A tunnel client for the hub's proxy-server, as a hub user reaches it: the
 * `proxy-client` certificate from the hub and the address of a ready
 * proxy-server pod — its own when it uses the node's network (ours: the hub
 * node is reachable from the operator's machine on every runtime), else
 * through `options.portForward` when given.
 */
export async function hubTunnel(hub: KubeClient, options: HubTunnelOptions = {}): Promise<{ client: TunnelClient; address: string }> {
  // Upstream's proxy-server pods carry only the component label (ours carry the addon label too).
  const selector = `${PROXY_COMPONENT_LABEL}=${PROXY_SERVER_LABELS[PROXY_COMPONENT_LABEL]}`;
  // Both reads side by side: this is on every `proxy kubectl`'s path.
  const reads = allInOrder<[{ data?: Record<string, string> }, { items: Pod[] }]>([
    asHubUser(`read Secret ${PROXY_NAMESPACE}/${SECRETS.proxyClient}`, `get on secrets (resourceNames: ${SECRETS.proxyClient}) in ${PROXY_NAMESPACE}`, () =>
      hub.get<{ data?: Record<string, string> }>(`/api/v1/namespaces/${PROXY_NAMESPACE}/secrets/${SECRETS.proxyClient}`),
    ).catch((err: unknown) => {
      if (isStatus(err, 404))
        throw new NotReadyError(`cluster-proxy is not installed on the hub (no Secret ${PROXY_NAMESPACE}/${SECRETS.proxyClient})`, {
          hint: "run 'ocm-lab up' (it installs cluster-proxy by default)",
        });
      throw err;
    }),
    asHubUser(`list pods in ${PROXY_NAMESPACE}`, `list on pods in ${PROXY_NAMESPACE}`, () =>
      hub.get<{ items: Pod[] }>(`/api/v1/namespaces/${PROXY_NAMESPACE}/pods`, { labelSelector: selector }),
    ),
  ]);
  // The tunnel client (gRPC, about a tenth of `proxy kubectl`'s CPU to load) loads while the hub answers.
  const clientModule = import('../../tunnel/client.js');
  const [secret, pods] = await reads;
  const ready = pods.items.find((p) => p.status?.podIP && p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
  if (!ready?.status?.podIP)
    throw new NotReadyError(`no proxy-server pod is ready in ${PROXY_NAMESPACE} on the hub`, {
      hint: "see 'kubectl --context hub -n open-cluster-management-cluster-proxy get pods'",
    });
  const caPem = fromBase64(secret.data?.['ca.crt']) || (await proxyServerCa(hub));
  const forward = reachedByForward(ready, options) ? await forwardTo(options.portForward!, ready.metadata.name) : null;
  const address = forward?.address ?? `${ready.status.podIP}:${PROXY_PORTS.frontend}`;
  const { createTunnelClient } = await clientModule;
  const client = createTunnelClient({
    address,
    tls: {
      certPem: fromBase64(secret.data?.['tls.crt']),
      keyPem: fromBase64(secret.data?.['tls.key']),
      caPem,
      // Dialled by pod IP, verified as the in-cluster Service name the certificate carries.
      servername: `${ENTRYPOINT_SERVICE}.${PROXY_NAMESPACE}.svc`,
    },
    dialTimeoutMs: options.dialTimeoutMs ?? 10_000,
  });
  if (forward) {
    const close = client.close.bind(client);
    client.close = () => {
      close();
      void forward.stop();
    };
  }
  return { client, address };
}
