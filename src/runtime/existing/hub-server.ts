import YAML from 'yaml';
import { InvalidInputError } from '../../errors.js';
import { KubeClient, type KubeEndpoint } from '../../kube/client.js';
import { getOrNull, type KubeObject } from '../../kube/objects.js';

/**
 * The hub's API server as the spokes reach it (their bootstrap kubeconfig, the addon agents, cluster-proxy's
 * entrypoint host). In order: `--hub-server URL` (the lab file's `runtime.existing.hubServer`); for a context named as
 * kind or k3d name theirs (`kind-*`, `k3d-*`), the endpoint the cluster publishes to its own nodes, looked up as
 * clusteradm's `--force-internal-endpoint-lookup` does (the server of the kubeconfig in ConfigMap `cluster-info` of
 * `kube-public`: `https://<name>-control-plane:6443` on kind, which a laptop's `https://127.0.0.1:<port>` is not);
 * otherwise the server URL of the hub's context.
 */

/** Contexts as `kind create cluster` and `k3d cluster create` name them. */
const LOCAL_CLUSTER_CONTEXT = /^(kind|k3d)-/;

/** `--hub-server` as given: an https URL with a host, no path; refused naming the value otherwise. */
export function parseHubServer(value: string): string {
  let url: URL | null = null;
  try {
    url = new URL(value.trim());
  } catch {
    url = null;
  }
  if (!url || url.protocol !== 'https:' || !url.hostname || (url.pathname !== '/' && url.pathname !== '') || url.search || url.hash) {
    throw new InvalidInputError(`--hub-server ${JSON.stringify(value)} is not the https URL of an API server (https://HOST[:PORT], no path)`, {
      hint: 'give the address your spokes reach the hub at, e.g. --hub-server https://hub.internal:6443',
    });
  }
  return url.origin;
}

/** The API server a `cluster-info` kubeconfig names (its only cluster), or null when it names none or several. */
export function clusterInfoServer(kubeconfigText: string | undefined): string | null {
  if (!kubeconfigText) return null;
  try {
    const doc = YAML.parse(kubeconfigText) as { clusters?: { cluster?: { server?: unknown } }[] } | null;
    // Exactly one cluster, as clusteradm (sdk-go's GetAPIServer) requires.
    const server = doc?.clusters?.length === 1 ? doc.clusters[0]?.cluster?.server : undefined;
    return typeof server === 'string' && server ? server : null;
  } catch {
    return null;
  }
}

/** The address chosen and why, as `up` says it. */
export interface HubServerChoice {
  server: string;
  why: string;
}

/** Chooses the hub's server for spokes (see the module comment). */
export async function chooseHubServer(given: string | undefined, context: string, endpoint: KubeEndpoint): Promise<HubServerChoice> {
  if (given) return { server: given, why: '--hub-server' };
  if (!LOCAL_CLUSTER_CONTEXT.test(context)) return { server: endpoint.server, why: `the server of context ${context}` };
  const client = new KubeClient(endpoint);
  try {
    const info = await getOrNull<KubeObject & { data?: Record<string, string> }>(client, '/api/v1/namespaces/kube-public/configmaps/cluster-info');
    const server = clusterInfoServer(info?.data?.kubeconfig);
    if (server)
      return { server, why: `the internal endpoint of ${context} (ConfigMap kube-public/cluster-info, as clusteradm's --force-internal-endpoint-lookup)` };
    return { server: endpoint.server, why: `the server of context ${context} (it has no kube-public/cluster-info naming a server; --hub-server sets one)` };
  } finally {
    client.close();
  }
}
