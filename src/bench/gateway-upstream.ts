import type { KubeClient } from '../kube/client.js';
import { applyObject, deleteIfPresent, fromBase64, objectPath, type KubeObject } from '../kube/objects.js';
import { ensureCertificateSecret } from '../addons/cluster-proxy/certificates.js';
import { ENTRYPOINT_SERVICE, PROXY_NAMESPACE, PROXY_PORTS, SECRETS } from '../addons/cluster-proxy/constants.js';
import { apiServiceAvailable } from '../addons/cluster-gateway/hub-install.js';
import { APISERVICE_NAME, CREDENTIALS_NAMESPACE, GATEWAY_NAMESPACE, GATEWAY_SERVICE } from '../addons/cluster-gateway/constants.js';
import { UPSTREAM_CLUSTER_GATEWAY_IMAGE } from '../images/catalogue.js';
import { sleep } from '../kube/wait.js';
import { clusterRole, clusterRoleBinding, deployment, role, roleBinding, serviceAccount, serviceAccountSubject } from '../kube/builders.js';

/**
 * Upstream's cluster-gateway as a pod on the bench lab's hub, next to ours, laid out as its chart
 * (charts/cluster-gateway of oam-dev/cluster-gateway) lays it out with OCM integration and
 * cluster-proxy egress — but under names of its own, so the two never touch each other's objects.
 * The APIService is switched between the two Services; ours is restored at the end.
 */
const UPSTREAM_GATEWAY = 'cluster-gateway-upstream';
const UPSTREAM_PORT = 9443;
const LABELS = { app: UPSTREAM_GATEWAY };
const SERVING_SECRET = `${UPSTREAM_GATEWAY}-serving`;
const PROXY_CLIENT_SECRET = `${UPSTREAM_GATEWAY}-proxy-client`;
const PROXY_CA_SECRET = `${UPSTREAM_GATEWAY}-proxy-server-ca`;
const SIGNER_SECRET = 'cluster-gateway-signer';
const ROLE_NAME = `open-cluster-management:${UPSTREAM_GATEWAY}`;

type Secret = KubeObject & { data?: Record<string, string> };

/** Its hub permissions as the chart grants them (managedcluster-reader, authentication-reader, the credential Secrets). */
function rbacObjects(): KubeObject[] {
  const subjects = [serviceAccountSubject(UPSTREAM_GATEWAY, GATEWAY_NAMESPACE)];
  const read = ['get', 'list', 'watch'];
  return [
    serviceAccount({ name: UPSTREAM_GATEWAY, namespace: GATEWAY_NAMESPACE }),
    clusterRole(ROLE_NAME, [
      { apiGroups: ['cluster.open-cluster-management.io'], resources: ['managedclusters'], verbs: read },
      { apiGroups: [''], resources: ['namespaces'], verbs: read },
      { apiGroups: ['admissionregistration.k8s.io'], resources: ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations'], verbs: read },
      { apiGroups: ['flowcontrol.apiserver.k8s.io'], resources: ['prioritylevelconfigurations', 'flowschemas'], verbs: read },
      { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
    ]),
    clusterRoleBinding(ROLE_NAME, subjects),
    roleBinding({ name: `${ROLE_NAME}:authentication-reader`, namespace: 'kube-system' }, subjects, {
      kind: 'Role',
      name: 'extension-apiserver-authentication-reader',
    }),
    role({ name: ROLE_NAME, namespace: CREDENTIALS_NAMESPACE }, [{ apiGroups: [''], resources: ['secrets'], verbs: ['*'] }]),
    roleBinding({ name: ROLE_NAME, namespace: CREDENTIALS_NAMESPACE }, subjects),
  ];
}

/** Deployment and Service; the chart's args, plus a serving certificate so the APIService's caBundle (ours) verifies it too. */
function servingObjects(): KubeObject[] {
  const args = [
    `--secure-port=${UPSTREAM_PORT}`,
    `--secret-namespace=${CREDENTIALS_NAMESPACE}`,
    '--ocm-integration=true',
    `--proxy-host=${ENTRYPOINT_SERVICE}.${PROXY_NAMESPACE}`,
    `--proxy-port=${PROXY_PORTS.frontend}`,
    '--proxy-ca-cert=/etc/ca/ca.crt',
    '--proxy-cert=/etc/tls/tls.crt',
    '--proxy-key=/etc/tls/tls.key',
    '--feature-gates=',
    '--tls-cert-file=/etc/serving/tls.crt',
    '--tls-private-key-file=/etc/serving/tls.key',
  ];
  return [
    deployment({
      name: UPSTREAM_GATEWAY,
      namespace: GATEWAY_NAMESPACE,
      labels: LABELS,
      serviceAccount: UPSTREAM_GATEWAY,
      containers: [
        {
          name: 'gateway',
          image: UPSTREAM_CLUSTER_GATEWAY_IMAGE.ref,
          args,
          ports: [{ containerPort: UPSTREAM_PORT }],
          volumeMounts: [
            { name: 'proxy-client', mountPath: '/etc/tls/', readOnly: true },
            { name: 'proxy-server-ca', mountPath: '/etc/ca/', readOnly: true },
            { name: 'serving', mountPath: '/etc/serving/', readOnly: true },
          ],
        },
      ],
      podSpec: {
        volumes: [
          { name: 'proxy-client', secret: { secretName: PROXY_CLIENT_SECRET } },
          { name: 'proxy-server-ca', secret: { secretName: PROXY_CA_SECRET } },
          { name: 'serving', secret: { secretName: SERVING_SECRET } },
        ],
      },
    }),
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: UPSTREAM_GATEWAY, namespace: GATEWAY_NAMESPACE, labels: LABELS },
      spec: { selector: LABELS, ports: [{ name: 'https', port: 443, targetPort: UPSTREAM_PORT, protocol: 'TCP' }] },
    },
  ];
}

async function secretData(hub: KubeClient, namespace: string, name: string): Promise<Record<string, string>> {
  return (await hub.get<Secret>(`/api/v1/namespaces/${namespace}/secrets/${name}`)).data ?? {};
}

function secret(name: string, data: Record<string, string>): Secret {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: GATEWAY_NAMESPACE, labels: LABELS }, type: 'Opaque', data };
}

/** Creates upstream's gateway on the hub (its Secrets, RBAC, Deployment, Service) and waits until its pod is ready. */
export async function deployUpstreamGateway(hub: KubeClient, timeoutMs = 120_000): Promise<void> {
  const signer = await secretData(hub, GATEWAY_NAMESPACE, SIGNER_SECRET);
  const ca = { certPem: fromBase64(signer['tls.crt']), keyPem: fromBase64(signer['tls.key']) };
  const names = [UPSTREAM_GATEWAY, `${UPSTREAM_GATEWAY}.${GATEWAY_NAMESPACE}`, `${UPSTREAM_GATEWAY}.${GATEWAY_NAMESPACE}.svc`];
  await ensureCertificateSecret(
    hub,
    ca,
    GATEWAY_NAMESPACE,
    SERVING_SECRET,
    { commonName: names[2]!, usages: ['server'], dnsNames: names, ipAddresses: [] },
    LABELS,
  );
  const client = await secretData(hub, PROXY_NAMESPACE, SECRETS.proxyClient);
  const proxyCa = await secretData(hub, PROXY_NAMESPACE, SECRETS.ca).catch(() => ({}) as Record<string, string>);
  const caCrt = proxyCa['ca.crt'] ?? client['ca.crt'];
  if (!client['tls.crt'] || !client['tls.key'] || !caCrt)
    throw new Error(`upstream gateway: Secret ${PROXY_NAMESPACE}/${SECRETS.proxyClient} lacks tls.crt/tls.key, or no proxy-server ca.crt was found`);
  for (const obj of [
    secret(PROXY_CLIENT_SECRET, { 'tls.crt': client['tls.crt'], 'tls.key': client['tls.key'] }),
    secret(PROXY_CA_SECRET, { 'ca.crt': caCrt }),
    ...rbacObjects(),
    ...servingObjects(),
  ])
    await applyObject(hub, obj);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pods = await hub.get<{
      items: {
        metadata: { name: string };
        status?: { phase?: string; conditions?: { type: string; status: string }[]; containerStatuses?: { state?: unknown }[] };
      }[];
    }>(`/api/v1/namespaces/${GATEWAY_NAMESPACE}/pods`, { labelSelector: `app=${UPSTREAM_GATEWAY}` });
    if (pods.items.some((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))) return;
    if (Date.now() > deadline)
      throw new Error(
        `upstream gateway: no ready pod of Deployment ${GATEWAY_NAMESPACE}/${UPSTREAM_GATEWAY} within ${timeoutMs / 1000} s; ` +
          `pods: ${JSON.stringify(pods.items.map((p) => ({ name: p.metadata.name, status: p.status })))}`,
      );
    await sleep(1000);
  }
}

/** Points APIService v1alpha1.cluster.core.oam.dev at upstream's Service or at ours, and waits until the hub reports it Available. */
export async function switchApiService(hub: KubeClient, to: 'ours' | 'upstream', timeoutMs = 90_000): Promise<void> {
  await hub.mergePatch(`/apis/apiregistration.k8s.io/v1/apiservices/${APISERVICE_NAME}`, {
    spec: { service: { name: to === 'upstream' ? UPSTREAM_GATEWAY : GATEWAY_SERVICE, namespace: GATEWAY_NAMESPACE, port: 443 } },
  });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const svc = await hub.get<{ spec: { service?: { name?: string } } }>(`/apis/apiregistration.k8s.io/v1/apiservices/${APISERVICE_NAME}`);
    const state = await apiServiceAvailable(hub);
    if (state.available && svc.spec.service?.name === (to === 'upstream' ? UPSTREAM_GATEWAY : GATEWAY_SERVICE)) return;
    if (Date.now() > deadline)
      throw new Error(
        `APIService ${APISERVICE_NAME} pointed at ${to === 'upstream' ? 'upstream' : "ocm-lab's"} gateway ` +
          `is not Available within ${timeoutMs / 1000} s: ${state.message}`,
      );
    await sleep(500);
  }
}

/** Deletes every object deployUpstreamGateway made (a missing one is fine). */
export async function removeUpstreamGateway(hub: KubeClient): Promise<void> {
  const objs = [...servingObjects(), ...rbacObjects(), secret(PROXY_CLIENT_SECRET, {}), secret(PROXY_CA_SECRET, {}), secret(SERVING_SECRET, {})];
  for (const obj of objs) await deleteIfPresent(hub, objectPath(obj as Parameters<typeof objectPath>[0]));
}
