import { isStatus, type KubeClient } from '../../kube/client.js';
import { NotReadyError } from '../../errors.js';
import { sleep } from '../../kube/wait.js';
import { OCM_LAB_IMAGE } from '../../images/catalogue.js';
import { createCA, type CertificateAuthority } from '../../pki/index.js';
import { ensureCertificateSecret } from '../cluster-proxy/certificates.js';
import { PROXY_NAMESPACE, SECRETS } from '../cluster-proxy/constants.js';
import { ADDON_MANAGER_NAMESPACE } from '../framework/names.js';
import { applyObject, fromBase64, getOrNull, toBase64, type KubeObject, type ObservedCondition } from '../../kube/objects.js';
import { clusterRole, clusterRoleBinding, deployment, namespace, role, roleBinding, serviceAccount, serviceAccountSubject } from '../../kube/builders.js';
import {
  APISERVICE_NAME,
  GATEWAY_API,
  CREDENTIALS_NAMESPACE,
  GATEWAY_DEPLOYMENT,
  GATEWAY_GROUP,
  GATEWAY_LABELS,
  GATEWAY_NAMESPACE,
  GATEWAY_PORT,
  GATEWAY_SERVICE,
  GATEWAY_SERVICE_ACCOUNT,
  GATEWAY_SERVING_SECRET,
  GATEWAY_VERSION,
} from './constants.js';

const SIGNER_SECRET = 'cluster-gateway-signer';
const CERT_DIR = '/etc/cluster-gateway';

export interface GatewayInstallOptions {
  identityPenetration?: boolean;
  /** Our image as the hub pulls it (default OCM_LAB_IMAGE). */
  image?: string;
}

/** The DNS names the hub's aggregator checks in the gateway's certificate (it verifies `<service>.<namespace>.svc`). */
function gatewayServingNames(): string[] {
  return [
    GATEWAY_SERVICE,
    `${GATEWAY_SERVICE}.${GATEWAY_NAMESPACE}`,
    `${GATEWAY_SERVICE}.${GATEWAY_NAMESPACE}.svc`,
    `${GATEWAY_SERVICE}.${GATEWAY_NAMESPACE}.svc.cluster.local`,
  ];
}

async function ensureNamespace(hub: KubeClient, name: string): Promise<void> {
  await hub.post('/api/v1/namespaces', namespace(name)).catch((err: unknown) => {
    if (!isStatus(err, 409)) throw err;
  });
}

/** The gateway's own CA (kept in the hub): signs its serving certificate, and is the APIService's caBundle. */
async function ensureGatewayCA(hub: KubeClient): Promise<CertificateAuthority> {
  const path = `/api/v1/namespaces/${GATEWAY_NAMESPACE}/secrets/${SIGNER_SECRET}`;
  const existing = await getOrNull<KubeObject & { data?: Record<string, string> }>(hub, path);
  const certPem = fromBase64(existing?.data?.['tls.crt']);
  const keyPem = fromBase64(existing?.data?.['tls.key']);
  if (certPem && keyPem) return { certPem, keyPem };
  const ca = await createCA('cluster-gateway-ca', { validityDays: 3650 });
  const body = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: SIGNER_SECRET, namespace: GATEWAY_NAMESPACE },
    type: 'kubernetes.io/tls',
    data: { 'tls.crt': toBase64(ca.certPem), 'tls.key': toBase64(ca.keyPem) },
  };
  if (existing) await hub.put(path, { ...body, metadata: { ...existing.metadata, ...body.metadata } });
  else await hub.post(`/api/v1/namespaces/${GATEWAY_NAMESPACE}/secrets`, body);
  return ca;
}

const sa = [serviceAccountSubject(GATEWAY_SERVICE_ACCOUNT, GATEWAY_NAMESPACE)];

/**
 * What the gateway may do on the hub: delegate authentication and authorization
 * (system:auth-delegator, extension-apiserver-authentication-reader), read and annotate
 * the credential Secrets, read ManagedClusters, and open tunnels (the proxy-client
 * certificate and the proxy-server pods).
 */
export function gatewayRbacObjects(): KubeObject[] {
  const name = 'open-cluster-management:cluster-gateway';
  return [
    serviceAccount({ name: GATEWAY_SERVICE_ACCOUNT, namespace: GATEWAY_NAMESPACE }),
    clusterRoleBinding(`${name}:auth-delegator`, sa, 'system:auth-delegator'),
    roleBinding({ name: `${name}:authentication-reader`, namespace: 'kube-system' }, sa, { kind: 'Role', name: 'extension-apiserver-authentication-reader' }),
    clusterRole(name, [{ apiGroups: ['cluster.open-cluster-management.io'], resources: ['managedclusters'], verbs: ['get', 'list', 'watch'] }]),
    clusterRoleBinding(name, sa),
    role({ name, namespace: CREDENTIALS_NAMESPACE }, [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch', 'patch', 'update'] }]),
    roleBinding({ name, namespace: CREDENTIALS_NAMESPACE }, sa),
    role({ name, namespace: PROXY_NAMESPACE }, [
      // proxy-server-ca too: upstream cluster-proxy keeps the CA only there.
      { apiGroups: [''], resources: ['secrets'], resourceNames: [SECRETS.proxyClient, SECRETS.ca], verbs: ['get'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['list'] },
    ]),
    roleBinding({ name, namespace: PROXY_NAMESPACE }, sa),
    // ocm-tls-profile, which the gateway serves TLS by (list/watch cannot be limited by resourceNames).
    role({ name, namespace: ADDON_MANAGER_NAMESPACE }, [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] }]),
    roleBinding({ name, namespace: ADDON_MANAGER_NAMESPACE }, sa),
  ];
}

/** The gateway Deployment (a pod with its own IP: the aggregator dials its endpoint), its Service and the APIService. */
export function gatewayServingObjects(caPem: string, options: GatewayInstallOptions = {}): KubeObject[] {
  const args = [
    'internal',
    'cluster-gateway',
    `--secure-port=${GATEWAY_PORT}`,
    `--tls-cert-file=${CERT_DIR}/tls.crt`,
    `--tls-private-key-file=${CERT_DIR}/tls.key`,
    `--secret-namespace=${CREDENTIALS_NAMESPACE}`,
    ...(options.identityPenetration ? ['--client-identity-penetration'] : []),
  ];
  return [
    deployment({
      name: GATEWAY_DEPLOYMENT,
      namespace: GATEWAY_NAMESPACE,
      labels: GATEWAY_LABELS,
      serviceAccount: GATEWAY_SERVICE_ACCOUNT,
      containers: [
        {
          name: 'gateway',
          image: options.image ?? OCM_LAB_IMAGE,
          args,
          ports: [{ name: 'https', containerPort: GATEWAY_PORT, protocol: 'TCP' }],
          // Every second: after a restart the hub's aggregator routes to the gateway only once it is Ready (was 5 s: ~5 s more outage).
          readinessProbe: { httpGet: { path: '/readyz', port: GATEWAY_PORT, scheme: 'HTTPS' }, periodSeconds: 1 },
          volumeMounts: [{ name: 'serving-cert', mountPath: CERT_DIR, readOnly: true }],
        },
      ],
      podSpec: { volumes: [{ name: 'serving-cert', secret: { secretName: GATEWAY_SERVING_SECRET } }] },
    }),
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: GATEWAY_SERVICE, namespace: GATEWAY_NAMESPACE, labels: GATEWAY_LABELS },
      spec: { selector: GATEWAY_LABELS, ports: [{ name: 'https', port: 443, targetPort: GATEWAY_PORT, protocol: 'TCP' }] },
    },
    {
      apiVersion: 'apiregistration.k8s.io/v1',
      kind: 'APIService',
      metadata: { name: APISERVICE_NAME, labels: GATEWAY_LABELS },
      spec: {
        group: GATEWAY_GROUP,
        version: GATEWAY_VERSION,
        service: { name: GATEWAY_SERVICE, namespace: GATEWAY_NAMESPACE, port: 443 },
        caBundle: toBase64(caPem),
        groupPriorityMinimum: 5000,
        versionPriority: 10,
      },
    },
  ];
}

/**
 * Installs the gateway on the hub with the admin's client (as `up` installs the addon
 * managers): namespaces, CA and serving certificate, RBAC, Deployment, Service, APIService.
 * Returns what changed.
 */
export async function installGatewayServer(hub: KubeClient, options: GatewayInstallOptions = {}): Promise<string[]> {
  const changed: string[] = [];
  for (const ns of [GATEWAY_NAMESPACE, CREDENTIALS_NAMESPACE, PROXY_NAMESPACE]) await ensureNamespace(hub, ns);
  const ca = await ensureGatewayCA(hub);
  const serving = await ensureCertificateSecret(hub, ca, GATEWAY_NAMESPACE, GATEWAY_SERVING_SECRET, {
    commonName: `${GATEWAY_SERVICE}.${GATEWAY_NAMESPACE}.svc`,
    usages: ['server'],
    dnsNames: gatewayServingNames(),
    ipAddresses: [],
  });
  if (serving.issued) changed.push(`Secret/${GATEWAY_SERVING_SECRET} issued`);
  for (const obj of [...gatewayRbacObjects(), ...gatewayServingObjects(ca.certPem, options)]) {
    const result = await applyObject(hub, obj);
    if (result !== 'unchanged') changed.push(`${obj.kind}/${obj.metadata.name} ${result}`);
  }
  return changed;
}

/** The APIService's Available condition: how the hub's aggregator sees the gateway. */
export async function apiServiceAvailable(hub: KubeClient): Promise<{ available: boolean; message: string }> {
  const svc = await getOrNull<KubeObject & { status?: { conditions?: ObservedCondition[] } }>(
    hub,
    `/apis/apiregistration.k8s.io/v1/apiservices/${APISERVICE_NAME}`,
  );
  const c = svc?.status?.conditions?.find((x) => x.type === 'Available');
  return { available: c?.status === 'True', message: c ? `${c.reason ?? ''}: ${c.message ?? ''}` : 'no status yet' };
}

/**
 * Whether the hub's OpenAPI v3 lists the gateway's group version, which `kubectl explain
 * clustergateway` reads. The aggregator merges an APIService's OpenAPI some time after it turns
 * Available, so a lab is not usable for explain until this holds.
 */
async function openApiPublished(hub: KubeClient): Promise<boolean> {
  const root = await hub.get<{ paths?: Record<string, unknown> }>('/openapi/v3').catch(() => null);
  return !!root?.paths && `apis/${GATEWAY_API}` in root.paths;
}

/**
 * Waits until the hub's aggregator reaches the gateway (APIService v1alpha1.cluster.core.oam.dev
 * Available) and has merged its OpenAPI (what `kubectl explain clustergateway` needs).
 */
export async function waitForApiService(hub: KubeClient, timeoutMs: number, progress: (line: string) => void): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const state = await apiServiceAvailable(hub);
    const missing = !state.available
      ? `APIService v1alpha1.cluster.core.oam.dev is not Available: ${state.message}`
      : !(await openApiPublished(hub))
        ? "the hub's /openapi/v3 does not list apis/cluster.core.oam.dev/v1alpha1 yet (kubectl explain clustergateway)"
        : null;
    if (!missing) return;
    progress(`waiting: ${missing}`);
    if (Date.now() > deadline) {
      throw new NotReadyError(`the gateway's API is not served within ${Math.round(timeoutMs / 1000)} s: ${missing}`, {
        hint: 'see the gateway log: ocm-lab logs hub open-cluster-management-cluster-gateway/<pod>',
      });
    }
    await sleep(500);
  }
}
