/** Upstream cluster-gateway's names (github.com/oam-dev/cluster-gateway), kept so its clients and tutorials work unchanged. */
export const CLUSTER_GATEWAY = 'cluster-gateway';
export const GATEWAY_GROUP = 'cluster.core.oam.dev';
export const GATEWAY_VERSION = 'v1alpha1';
export const GATEWAY_API = `${GATEWAY_GROUP}/${GATEWAY_VERSION}`;
export const GATEWAY_RESOURCE = 'clustergateways';
export const GATEWAY_KIND = 'ClusterGateway';
export const APISERVICE_NAME = `${GATEWAY_VERSION}.${GATEWAY_GROUP}`;

/** Where the Secrets that become ClusterGateways live (upstream's default). */
export const CREDENTIALS_NAMESPACE = 'open-cluster-management-credentials';
export const CREDENTIAL_TYPE_LABEL = `${GATEWAY_GROUP}/cluster-credential-type`;
export const ENDPOINT_TYPE_LABEL = `${GATEWAY_GROUP}/cluster-endpoint-type`;
export const HEALTHY_ANNOTATION = `status.${GATEWAY_GROUP}/healthy`;
export const HEALTHY_REASON_ANNOTATION = `status.${GATEWAY_GROUP}/healthy-reason`;

export type CredentialType = 'ServiceAccountToken' | 'X509Certificate';
export type EndpointType = 'Const' | 'ClusterProxy';
export const CREDENTIAL_TYPES: readonly CredentialType[] = ['ServiceAccountToken', 'X509Certificate'];
export const ENDPOINT_TYPES: readonly EndpointType[] = ['Const', 'ClusterProxy'];

/** Hub namespace of the gateway's Deployment, Service and serving certificate. */
export const GATEWAY_NAMESPACE = 'open-cluster-management-cluster-gateway';
export const GATEWAY_DEPLOYMENT = 'cluster-gateway';
export const GATEWAY_SERVICE = 'cluster-gateway';
export const GATEWAY_SERVICE_ACCOUNT = 'cluster-gateway';
export const GATEWAY_SERVING_SECRET = 'cluster-gateway-serving';
/** The gateway's HTTPS port (the pod's); the Service publishes it as 443, which the APIService names. */
export const GATEWAY_PORT = 9460;
export const GATEWAY_LABELS = { 'open-cluster-management.io/addon': CLUSTER_GATEWAY, app: 'cluster-gateway' };

/** The ManagedServiceAccount whose token is the gateway's credential for each cluster (addon mode). */
export const GATEWAY_MSA = 'cluster-gateway';
/** Marks credential Secrets the addon manager copies from MSA tokens (so it deletes only its own). */
export const MANAGED_BY_LABEL = 'cluster.core.oam.dev/managed-by';
