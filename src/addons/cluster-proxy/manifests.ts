import { OCM_LAB_IMAGE } from '../../images/catalogue.js';
import { ADDON_NAME_LABEL } from '../framework/names.js';
import { toBase64, type KubeObject } from '../../kube/objects.js';
import {
  clusterRole,
  clusterRoleBinding,
  deployment,
  namespace,
  RBAC_GROUP,
  role,
  roleBinding,
  serviceAccount,
  serviceAccountSubject,
} from '../../kube/builders.js';
import type { KeyPairPem } from '../../pki/index.js';
import {
  AGENT_SERVICE_ACCOUNT,
  CLUSTER_PROXY,
  CONFIGURATION_GENERATION,
  ENTRYPOINT_SERVICE,
  PROXY_AGENT_DEPLOYMENT,
  PROXY_AGENT_HEALTH_PORT,
  PROXY_NAMESPACE,
  PROXY_PORTS,
  PROXY_SERVER_DEPLOYMENT,
  PROXY_SERVER_LABELS,
  SECRETS,
} from './constants.js';
import { agentDialAddress, entrypointSpec, type EntrypointSpec, type ManagedProxyConfiguration } from './configuration.js';
import { hubKubeconfigSecretName } from '../framework/names.js';
import { serviceProxyHost, SERVICE_PROXY_PORT } from './service-routing.js';

function secretVolume(name: string, secretName: string, mountPath: string) {
  return { volume: { name, secret: { secretName } }, mount: { name, mountPath, readOnly: true } };
}

/** What the proxy-server Deployment carries besides the ManagedProxyConfiguration. */
export interface ProxyServerRollout {
  /** `--tls-min-version` / `--cipher-suites` from the `ocm-tls-profile` ConfigMap. */
  tlsArgs?: string[];
  /** A digest of the serving certificates: a reissued certificate (new SANs, renewal) rolls the pods, which read them at start. */
  certificatesDigest?: string;
}

const CERTIFICATES_DIGEST_ANNOTATION = 'proxy.ocm-lab.io/serving-certificates';

/** `{ configuration-generation: "<metadata.generation>" }` of the ManagedProxyConfiguration, or nothing before the API server gave it one. */
function generationStamp(mpc: ManagedProxyConfiguration): Record<string, string> | undefined {
  const generation = mpc.metadata.generation;
  return typeof generation === 'number' ? { [CONFIGURATION_GENERATION]: String(generation) } : undefined;
}

/** The proxy-server Deployment on the hub (hostNetwork: its ports are the hub's). */
export function proxyServerDeployment(mpc: ManagedProxyConfiguration, rollout: ProxyServerRollout = {}): KubeObject {
  const server = secretVolume('proxy-server', SECRETS.proxyServer, '/etc/server');
  const agent = secretVolume('agent-server', SECRETS.agentServer, '/etc/agent-server');
  const ca = secretVolume('proxy-server-ca', SECRETS.ca, '/etc/server-ca');
  const replicas = mpc.spec.proxyServer.replicas ?? 1;
  const generation = generationStamp(mpc);
  const d = deployment({
    name: PROXY_SERVER_DEPLOYMENT,
    namespace: PROXY_NAMESPACE,
    labels: PROXY_SERVER_LABELS,
    ...(generation ? { annotations: generation } : {}),
    replicas,
    // hostNetwork: a surge pod could not bind the ports the old one holds.
    strategy: { type: 'Recreate' },
    ...(rollout.certificatesDigest ? { podAnnotations: { [CERTIFICATES_DIGEST_ANNOTATION]: rollout.certificatesDigest } } : {}),
    containers: [
      {
        name: 'proxy-server',
        image: mpc.spec.proxyServer.image ?? OCM_LAB_IMAGE,
        args: [
          'internal',
          'proxy-server',
          `--server-port=${PROXY_PORTS.frontend}`,
          `--agent-port=${PROXY_PORTS.agent}`,
          `--health-port=${PROXY_PORTS.health}`,
          '--server-cert=/etc/server/tls.crt',
          '--server-key=/etc/server/tls.key',
          '--server-ca-cert=/etc/server-ca/ca.crt',
          '--cluster-cert=/etc/agent-server/tls.crt',
          '--cluster-key=/etc/agent-server/tls.key',
          '--cluster-ca-cert=/etc/server-ca/ca.crt',
          '--proxy-strategies=destHost',
          `--server-count=${replicas}`,
          ...(rollout.tlsArgs ?? []),
          ...(mpc.spec.proxyServer.additionalArgs ?? []),
        ],
        ports: [
          { name: 'proxy-server', containerPort: PROXY_PORTS.frontend },
          { name: 'agent-server', containerPort: PROXY_PORTS.agent },
          { name: 'healthz', containerPort: PROXY_PORTS.health },
        ],
        volumeMounts: [server.mount, agent.mount, ca.mount],
      },
    ],
    podSpec: { hostNetwork: true, volumes: [server.volume, agent.volume, ca.volume] },
  });
  // Upstream also labels the Deployment (not its pods or selector) with the generation.
  return generation ? { ...d, metadata: { ...d.metadata, labels: { ...d.metadata.labels, ...generation } } } : d;
}

/** Service `proxy-entrypoint` in front of the proxy-servers (upstream's in-cluster name). */
export function entrypointService(): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: ENTRYPOINT_SERVICE, namespace: PROXY_NAMESPACE, labels: { [ADDON_NAME_LABEL]: CLUSTER_PROXY } },
    spec: {
      selector: PROXY_SERVER_LABELS,
      ports: [
        { name: 'proxy-server', port: PROXY_PORTS.frontend, targetPort: PROXY_PORTS.frontend },
        { name: 'agent-server', port: PROXY_PORTS.agent, targetPort: PROXY_PORTS.agent },
      ],
    },
  };
}

/** Entrypoint LoadBalancerService: the Service of type LoadBalancer in front of the proxy-servers (ports as upstream's). */
export function loadBalancerService(ep: Extract<EntrypointSpec, { type: 'LoadBalancerService' }>): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: ep.serviceName,
      namespace: PROXY_NAMESPACE,
      labels: { [ADDON_NAME_LABEL]: CLUSTER_PROXY, [ENTRYPOINT_LABEL]: 'LoadBalancerService' },
      ...(Object.keys(ep.annotations).length ? { annotations: ep.annotations } : {}),
    },
    spec: {
      type: 'LoadBalancer',
      selector: PROXY_SERVER_LABELS,
      ports: [
        { name: 'proxy-server', port: PROXY_PORTS.frontend, targetPort: PROXY_PORTS.frontend },
        { name: 'agent-server', port: ep.port, targetPort: PROXY_PORTS.agent },
      ],
    },
  };
}

/** Marks the objects the manager makes for one entrypoint type, so it finds and removes them when the type changes. */
export const ENTRYPOINT_LABEL = 'proxy.ocm-lab.io/entrypoint';

const PORT_FORWARD_ROLE = 'cluster-proxy-addon-agent:portforward';

/**
 * Entrypoint PortForward, on the hub: every cluster's agent (group of the addon's agents, as upstream binds it)
 * may find the proxy-server pods and port-forward to them.
 */
export function portForwardRbac(): KubeObject[] {
  const meta = { name: PORT_FORWARD_ROLE, namespace: PROXY_NAMESPACE, labels: { [ADDON_NAME_LABEL]: CLUSTER_PROXY, [ENTRYPOINT_LABEL]: 'PortForward' } };
  return [
    role(meta, [
      { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] },
      { apiGroups: [''], resources: ['pods/portforward'], verbs: ['create'] },
    ]),
    roleBinding(meta, [{ kind: 'Group', apiGroup: RBAC_GROUP, name: `system:open-cluster-management:addon:${CLUSTER_PROXY}` }]),
  ];
}

/** What the agent pod needs to run the service proxy (present when `spec.userServer` is set). */
export interface ServiceProxyPart {
  /** Its serving certificate (`cluster-proxy-service-proxy-server-cert` on the hub). */
  cert: KeyPairPem;
  /** `--tls-min-version` / `--cipher-suites` from `ocm-tls-profile`. */
  tlsArgs: string[];
  /** Where the agent ends up (an AddOnDeploymentConfig may move it): the RoleBinding's subject. */
  agentNamespace: string;
}

const IMPERSONATOR_ROLE = 'cluster-proxy-addon-agent-impersonator';

/** The service proxy's cluster RBAC on the spoke (upstream's role): check tokens, impersonate hub users. */
function serviceProxyRbac(agentNamespace: string): KubeObject[] {
  return [
    clusterRole(IMPERSONATOR_ROLE, [
      { apiGroups: [''], resources: ['users', 'groups'], verbs: ['impersonate'] },
      { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
    ]),
    clusterRoleBinding(IMPERSONATOR_ROLE, [serviceAccountSubject(AGENT_SERVICE_ACCOUNT, agentNamespace)]),
  ];
}

/** The agent's hub kubeconfig (optional: the pod starts before the addon's CSR is approved; readers retry until it is there). */
function hubKubeconfigVolume() {
  return {
    volume: { name: 'hub-kubeconfig', secret: { secretName: hubKubeconfigSecretName(CLUSTER_PROXY), optional: true } },
    mount: { name: 'hub-kubeconfig', mountPath: '/etc/kubeconfig', readOnly: true },
  };
}

const image = (mpc: ManagedProxyConfiguration) => mpc.spec.proxyAgent.image ?? OCM_LAB_IMAGE;

/**
 * Entrypoint PortForward: container `port-forward-proxy` listens on the pod's loopback at the entrypoint's
 * port, where the proxy-agent dials, and carries each connection to a running proxy-server pod's agent
 * port by a port-forward through the hub's API server, with the agent's hub kubeconfig.
 */
function portForwardContainer(img: string, port: number) {
  return {
    name: 'port-forward-proxy',
    image: img,
    args: [
      'internal',
      'port-forward-proxy',
      '--hub-kubeconfig=/etc/kubeconfig/kubeconfig',
      `--proxy-server-namespace=${PROXY_NAMESPACE}`,
      `--pod-selector=${Object.entries(PROXY_SERVER_LABELS)
        .map(([k, v]) => `${k}=${v}`)
        .join(',')}`,
      `--listen-port=${port}`,
      `--target-port=${PROXY_PORTS.agent}`,
    ],
    volumeMounts: [hubKubeconfigVolume().mount],
  };
}

/**
 * Container `service-proxy` of the agent pod (upstream's): HTTPS on 127.0.0.1:7443, reached
 * by the agent through the tunnel as `<service-proxy host>:7443`. The hub kubeconfig Secret is
 * optional so the tunnel does not wait for the addon's CSR; the service proxy reads it per review.
 */
function serviceProxyContainer(image: string, part: ServiceProxyPart) {
  const serving = secretVolume('service-proxy-server-cert', SECRETS.serviceProxyAgent, '/server-cert');
  const hub = hubKubeconfigVolume();
  return {
    container: {
      name: 'service-proxy',
      image,
      args: [
        'internal',
        'service-proxy',
        '--cert=/server-cert/tls.crt',
        '--key=/server-cert/tls.key',
        '--hub-kubeconfig=/etc/kubeconfig/kubeconfig',
        '--enable-impersonation=true',
        `--port=${SERVICE_PROXY_PORT}`,
        ...part.tlsArgs,
      ],
      volumeMounts: [serving.mount, hub.mount],
    },
    volumes: [serving.volume, hub.volume],
  };
}

/**
 * The agent side for one cluster: namespace, ServiceAccount (the agent needs no API access on
 * its cluster: the manager judges health from the Deployment's status), the agent's client certificate and the proxy-server CA, and Deployment
 * `cluster-proxy-proxy-agent`, which serves `host=<cluster>` and maps `<cluster>:443`
 * to the cluster's own kube-apiserver; with `serviceProxy`, also the service proxy (its
 * host as an identifier, mapped to its loopback port) and its certificate and RBAC.
 */
export function proxyAgentManifests(
  cluster: string,
  mpc: ManagedProxyConfiguration,
  agentCert: KeyPairPem,
  caPem: string,
  serviceProxy?: ServiceProxyPart,
  loadBalancer: string | null = null,
): KubeObject[] {
  const ep = entrypointSpec(mpc);
  const entry = agentDialAddress(ep, loadBalancer);
  if (!entry) throw new Error(`the LoadBalancer Service ${PROXY_NAMESPACE}/${ep.type === 'LoadBalancerService' ? ep.serviceName : ''} has no address yet`);
  const forward = ep.type === 'PortForward' ? portForwardContainer(image(mpc), ep.port) : null;
  const labels = { 'open-cluster-management.io/addon': CLUSTER_PROXY, 'proxy.open-cluster-management.io/component-name': 'proxy-agent' };
  const cert = secretVolume('agent-client', SECRETS.agentClient, '/etc/agent');
  const ca = secretVolume('proxy-server-ca', SECRETS.agentCa, '/etc/ca');
  const sp = serviceProxy ? serviceProxyContainer(image(mpc), serviceProxy) : null;
  const spHost = serviceProxyHost(cluster);
  return [
    namespace(PROXY_NAMESPACE),
    serviceAccount({ name: AGENT_SERVICE_ACCOUNT, namespace: PROXY_NAMESPACE }),
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: SECRETS.agentClient, namespace: PROXY_NAMESPACE },
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': toBase64(agentCert.certPem), 'tls.key': toBase64(agentCert.keyPem) },
    },
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: SECRETS.agentCa, namespace: PROXY_NAMESPACE }, type: 'Opaque', data: { 'ca.crt': toBase64(caPem) } },
    ...(serviceProxy
      ? [
          {
            apiVersion: 'v1',
            kind: 'Secret',
            metadata: { name: SECRETS.serviceProxyAgent, namespace: PROXY_NAMESPACE },
            type: 'kubernetes.io/tls',
            data: { 'tls.crt': toBase64(serviceProxy.cert.certPem), 'tls.key': toBase64(serviceProxy.cert.keyPem) },
          },
          ...serviceProxyRbac(serviceProxy.agentNamespace),
        ]
      : []),
    deployment({
      name: PROXY_AGENT_DEPLOYMENT,
      namespace: PROXY_NAMESPACE,
      labels,
      // As upstream's agent chart: on the Deployment and its pods, so a new configuration generation rolls the agents.
      ...(generationStamp(mpc) ? { annotations: generationStamp(mpc), podAnnotations: generationStamp(mpc) } : {}),
      replicas: mpc.spec.proxyAgent.replicas ?? 1,
      serviceAccount: AGENT_SERVICE_ACCOUNT,
      containers: [
        {
          name: 'proxy-agent',
          image: image(mpc),
          env: [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
          args: [
            'internal',
            'proxy-agent',
            `--proxy-server-host=${entry.host}`,
            `--proxy-server-port=${entry.port}`,
            '--agent-id=$(POD_NAME)',
            `--agent-identifiers=host=${cluster}&host=${cluster}.${PROXY_NAMESPACE}${sp ? `&host=${spHost}` : ''}`,
            '--ca-cert=/etc/ca/ca.crt',
            '--agent-cert=/etc/agent/tls.crt',
            '--agent-key=/etc/agent/tls.key',
            `--host-mapping=${cluster}:443=$(KUBERNETES_SERVICE_HOST):$(KUBERNETES_SERVICE_PORT)`,
            ...(sp ? [`--host-mapping=${spHost}:${SERVICE_PROXY_PORT}=127.0.0.1:${SERVICE_PROXY_PORT}`] : []),
            '--health-server-host=0.0.0.0',
            `--health-server-port=${PROXY_AGENT_HEALTH_PORT}`,
            ...(mpc.spec.proxyAgent.additionalArgs ?? []),
          ],
          // Ready once a proxy-server holds its tunnel: the addon's Available follows this. Unready only after ~6 s without
          // one, so a proxy-server restarted at once (1-4 s here) does not flip Available, which takes ~2.5 s to come back.
          readinessProbe: { httpGet: { path: '/readyz', port: PROXY_AGENT_HEALTH_PORT }, periodSeconds: 1, failureThreshold: 6 },
          livenessProbe: { httpGet: { path: '/healthz', port: PROXY_AGENT_HEALTH_PORT }, periodSeconds: 10, failureThreshold: 3 },
          volumeMounts: [cert.mount, ca.mount],
        },
        ...(sp ? [sp.container] : []),
        ...(forward ? [forward] : []),
      ],
      // The hub kubeconfig volume serves the service proxy and the port-forward proxy alike.
      podSpec: { volumes: [cert.volume, ca.volume, ...(sp?.volumes ?? []), ...(forward && !sp ? [hubKubeconfigVolume().volume] : [])] },
    }),
  ];
}
