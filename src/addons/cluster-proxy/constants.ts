/** Upstream cluster-proxy's names, kept so its tutorials and clients work unchanged. */
export const CLUSTER_PROXY = 'cluster-proxy';
export const PROXY_API = 'proxy.open-cluster-management.io/v1alpha1';
export const PROXY_CONFIGURATION_NAME = 'cluster-proxy';
/** Hub namespace of the proxy-server and its secrets; on spokes, the agent's namespace. */
export const PROXY_NAMESPACE = 'open-cluster-management-cluster-proxy';
export const ENTRYPOINT_SERVICE = 'proxy-entrypoint';
export const PROXY_SERVER_DEPLOYMENT = 'cluster-proxy';
export const PROXY_AGENT_DEPLOYMENT = 'cluster-proxy-proxy-agent';
export const AGENT_SERVICE_ACCOUNT = 'cluster-proxy';
/**
 * Upstream's stamp of the ManagedProxyConfiguration's `metadata.generation` (cluster-proxy v0.10.0 `common.AnnotationKeyConfigurationGeneration`):
 * on the proxy-server Deployment's metadata (an annotation, and a label of the same key), and on the agent
 * Deployment's metadata and pod template (so a new configuration generation rolls the agents).
 */
export const CONFIGURATION_GENERATION = 'proxy.open-cluster-management.io/configuration-generation';

export const SECRETS = {
  /** The signer CA (tls.crt/tls.key), in the manager's namespace. */
  signer: 'cluster-proxy-signer',
  /** ca.crt that verifies the proxy-server and every client/agent certificate. */
  ca: 'proxy-server-ca',
  /** Frontend (ProxyService) serving certificate. */
  proxyServer: 'proxy-server',
  /** Agent-facing (AgentService) serving certificate. */
  agentServer: 'agent-server',
  /** Client certificate for hub-side tunnel clients (ocm-lab proxy …, cluster-gateway). */
  proxyClient: 'proxy-client',
  /** On a spoke: the agent's client certificate (upstream's name). */
  agentClient: 'cluster-proxy-open-cluster-management.io-proxy-agent-signer-client-cert',
  /** On a spoke: ca.crt of the proxy-server. */
  agentCa: 'cluster-proxy-ca',
  /** The user server's serving certificate, on the hub (upstream's fixed name). */
  userServing: 'cluster-proxy-user-serving-cert',
  /** The service proxies' serving certificate, issued on the hub… */
  serviceProxyServer: 'cluster-proxy-service-proxy-server-cert',
  /** …and delivered to each spoke under this name. */
  serviceProxyAgent: 'cluster-proxy-service-proxy-server-certificates',
} as const;

/** Ports by apiserver-network-proxy's convention. */
export const PROXY_PORTS = { frontend: 8090, agent: 8091, health: 8092 } as const;
/** The proxy-agent's /healthz and /readyz, in its own pod network namespace (apiserver-network-proxy's agent default). */
export const PROXY_AGENT_HEALTH_PORT = 8093;

/** The label selecting proxy-server pods (and the Service's selector). */
export const PROXY_SERVER_LABELS = { 'open-cluster-management.io/addon': CLUSTER_PROXY, 'proxy.open-cluster-management.io/component-name': 'proxy-server' };

/** The user server's hub Deployment and Service (upstream's `UserServerServiceName`). */
export const USER_SERVER_NAME = 'cluster-proxy-addon-user';
export const USER_SERVER_LABELS = { 'open-cluster-management.io/addon': CLUSTER_PROXY, component: USER_SERVER_NAME };

/** On the hub, in PROXY_NAMESPACE: a cluster's agent certificate (owned by its ManagedCluster, so it goes with the cluster). */
export function agentCertificateSecretName(cluster: string): string {
  return `cluster-proxy-agent-${cluster}`;
}
