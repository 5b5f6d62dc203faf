import { NotReadyError } from '../../errors.js';
import { fromBase64 } from '../../kube/objects.js';
import { asHubUser } from '../hub-access.js';
import { isStatus, type KubeClient } from '../../kube/client.js';
import { createTunnelClient, type TunnelClient } from '../../tunnel/index.js';
import { ENTRYPOINT_SERVICE, PROXY_NAMESPACE, PROXY_PORTS, PROXY_SERVER_LABELS, SECRETS } from './constants.js';

interface Pod {
  metadata: { name: string };
  status?: { podIP?: string; phase?: string; conditions?: { type: string; status: string }[] };
}


const PROXY_COMPONENT_LABEL = 'proxy.open-cluster-management.io/component-name';

/** The proxy-server CA from its own Secret: upstream's `proxy-client` Secret holds only tls.crt/tls.key. */
async function proxyServerCa(hub: KubeClient): Promise<string> {
  const ca = await asHubUser(`read Secret ${PROXY_NAMESPACE}/${SECRETS.ca}`, `get on secrets (resourceNames: ${SECRETS.ca}) in ${PROXY_NAMESPACE}`, () =>
    hub.get<{ data?: Record<string, string> }>(`/api/v1/namespaces/${PROXY_NAMESPACE}/secrets/${SECRETS.ca}`),
  );
  return fromBase64(ca.data?.['ca.crt']);
}

/**
 * A tunnel client for the hub's proxy-server, as a hub user reaches it: the
 * `proxy-client` certificate from the hub and the address of a ready
 * proxy-server pod (on the local runtime the operator's machine reaches the hub
 * VPC directly, where upstream's clusteradm port-forwards to that pod).
 */
export async function hubTunnel(hub: KubeClient): Promise<{ client: TunnelClient; address: string }> {
  const secret = await asHubUser(`read Secret ${PROXY_NAMESPACE}/${SECRETS.proxyClient}`, `get on secrets (resourceNames: ${SECRETS.proxyClient}) in ${PROXY_NAMESPACE}`, () =>
    hub.get<{ data?: Record<string, string> }>(`/api/v1/namespaces/${PROXY_NAMESPACE}/secrets/${SECRETS.proxyClient}`),
  ).catch((err: unknown) => {
    if (isStatus(err, 404)) throw new NotReadyError(`cluster-proxy is not installed on the hub (no Secret ${PROXY_NAMESPACE}/${SECRETS.proxyClient})`, { hint: "run 'ocm-lab up' (it installs cluster-proxy by default)" });
    throw err;
  });
  // Upstream's proxy-server pods carry only the component label (ours carry the addon label too).
  const selector = `${PROXY_COMPONENT_LABEL}=${PROXY_SERVER_LABELS[PROXY_COMPONENT_LABEL]}`;
  const pods = await asHubUser(`list pods in ${PROXY_NAMESPACE}`, `list on pods in ${PROXY_NAMESPACE}`, () =>
    hub.get<{ items: Pod[] }>(`/api/v1/namespaces/${PROXY_NAMESPACE}/pods`, { labelSelector: selector }),
  );
  const ready = pods.items.find((p) => p.status?.podIP && p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
  if (!ready?.status?.podIP) throw new NotReadyError(`no proxy-server pod is ready in ${PROXY_NAMESPACE} on the hub`, { hint: "see 'kubectl --context hub -n open-cluster-management-cluster-proxy get pods'" });
  const address = `${ready.status.podIP}:${PROXY_PORTS.frontend}`;
  const client = createTunnelClient({
    address,
    tls: {
      certPem: fromBase64(secret.data?.['tls.crt']),
      keyPem: fromBase64(secret.data?.['tls.key']),
      caPem: fromBase64(secret.data?.['ca.crt']) || (await proxyServerCa(hub)),
      // Dialled by pod IP, verified as the in-cluster Service name the certificate carries.
      servername: `${ENTRYPOINT_SERVICE}.${PROXY_NAMESPACE}.svc`,
    },
    dialTimeoutMs: 10_000,
  });
  return { client, address };
}
