import { fromBase64 } from '../../kube/objects.js';
import {
  CREDENTIAL_TYPE_LABEL,
  CREDENTIAL_TYPES,
  ENDPOINT_TYPE_LABEL,
  ENDPOINT_TYPES,
  GATEWAY_API,
  GATEWAY_KIND,
  HEALTHY_ANNOTATION,
  HEALTHY_REASON_ANNOTATION,
  type CredentialType,
  type EndpointType,
} from './constants.js';

export interface SecretLike {
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    creationTimestamp?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  data?: Record<string, string>;
}

export interface ManagedClusterLike {
  metadata: { name: string };
  spec?: { managedClusterClientConfigs?: { url?: string; caBundle?: string }[] };
}

/**
 * The ClusterGateway as the API shows it. Unlike upstream, the credential's secret
 * material (token, key) is never part of the object: it stays in the gateway's cache
 * and goes only to the managed cluster.
 */
export interface ClusterGateway {
  apiVersion: string;
  kind: string;
  metadata: { name: string; uid?: string; resourceVersion?: string; creationTimestamp?: string };
  spec: {
    provider: string;
    access: {
      endpoint: { type: EndpointType; const?: { address: string; caBundle?: string; insecure?: boolean } };
      credential: { type: CredentialType };
    };
  };
  status: { healthy: boolean; healthyReason?: string };
}

/** What the proxy needs to reach a cluster: where, how to trust it, and who to be there. */
export interface GatewayTarget {
  name: string;
  endpointType: EndpointType;
  /** Const: the cluster's API server URL (its path prefix is kept). ClusterProxy: https://<name>. */
  endpoint: string;
  caPem?: string;
  insecure: boolean;
  credentialType: CredentialType;
  token?: string;
  certPem?: string;
  keyPem?: string;
}

export type Conversion = { ok: true; gateway: ClusterGateway; target: GatewayTarget } | { ok: false; reason: string };

/**
 * A credentials Secret (and, with OCM, its ManagedCluster) as a ClusterGateway. A Secret
 * without the credential-type label is not a gateway at all (404, as upstream); one with
 * a label we do not know, or missing data, is reported with the reason.
 */
export function gatewayFromSecret(secret: SecretLike, cluster?: ManagedClusterLike): Conversion {
  const name = secret.metadata.name;
  const labels = secret.metadata.labels ?? {};
  const credentialType = labels[CREDENTIAL_TYPE_LABEL];
  if (!credentialType) return { ok: false, reason: `Secret ${name} has no ${CREDENTIAL_TYPE_LABEL} label` };
  if (!(CREDENTIAL_TYPES as readonly string[]).includes(credentialType)) {
    return { ok: false, reason: `Secret ${name}: ${CREDENTIAL_TYPE_LABEL} ${JSON.stringify(credentialType)} is not one of ${CREDENTIAL_TYPES.join(', ')}` };
  }
  const endpointType = (labels[ENDPOINT_TYPE_LABEL] ?? 'Const') as EndpointType;
  if (!(ENDPOINT_TYPES as readonly string[]).includes(endpointType)) {
    return { ok: false, reason: `Secret ${name}: ${ENDPOINT_TYPE_LABEL} ${JSON.stringify(endpointType)} is not one of ${ENDPOINT_TYPES.join(', ')}` };
  }
  const data = secret.data ?? {};
  // With OCM the endpoint and its CA come from the ManagedCluster; only the credential from the Secret.
  const clientConfig = cluster?.spec?.managedClusterClientConfigs?.[0];
  let address = fromBase64(data.endpoint).trim();
  let caPem = fromBase64(data['ca.crt'] ?? data.ca) || undefined;
  if (clientConfig?.url) {
    address = clientConfig.url;
    caPem = clientConfig.caBundle ? fromBase64(clientConfig.caBundle) : caPem;
  }
  if (endpointType === 'ClusterProxy') address = `https://${name}`;
  else if (!address) return { ok: false, reason: `Secret ${name}: endpoint type Const needs data.endpoint (the cluster's API server URL)` };

  const target: GatewayTarget = {
    name,
    endpointType,
    endpoint: address,
    insecure: !caPem,
    credentialType: credentialType as CredentialType,
    ...(caPem ? { caPem } : {}),
  };
  if (credentialType === 'ServiceAccountToken') {
    const token = fromBase64(data.token).trim();
    if (!token) return { ok: false, reason: `Secret ${name}: credential type ServiceAccountToken needs data.token` };
    target.token = token;
  } else {
    const certPem = fromBase64(data['tls.crt']);
    const keyPem = fromBase64(data['tls.key']);
    if (!certPem || !keyPem) return { ok: false, reason: `Secret ${name}: credential type X509Certificate needs data tls.crt and tls.key` };
    target.certPem = certPem;
    target.keyPem = keyPem;
  }

  const annotations = secret.metadata.annotations ?? {};
  const gateway: ClusterGateway = {
    apiVersion: GATEWAY_API,
    kind: GATEWAY_KIND,
    metadata: {
      name,
      ...(secret.metadata.uid ? { uid: secret.metadata.uid } : {}),
      ...(secret.metadata.resourceVersion ? { resourceVersion: secret.metadata.resourceVersion } : {}),
      ...(secret.metadata.creationTimestamp ? { creationTimestamp: secret.metadata.creationTimestamp } : {}),
    },
    spec: {
      provider: '',
      access: {
        endpoint:
          endpointType === 'Const'
            ? { type: 'Const', const: { address, ...(caPem ? { caBundle: Buffer.from(caPem).toString('base64') } : { insecure: true }) } }
            : { type: 'ClusterProxy' },
        credential: { type: credentialType as CredentialType },
      },
    },
    status: {
      healthy: annotations[HEALTHY_ANNOTATION] === 'true',
      ...(annotations[HEALTHY_REASON_ANNOTATION] ? { healthyReason: annotations[HEALTHY_REASON_ANNOTATION] } : {}),
    },
  };
  return { ok: true, gateway, target };
}
