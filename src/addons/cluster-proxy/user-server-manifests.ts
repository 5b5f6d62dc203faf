import { OCM_LAB_IMAGE } from '../../images/catalogue.js';
import { canonicalIp } from '../../pki/names.js';
import type { KubeObject } from '../../kube/objects.js';
import { ADDON_NAME_LABEL } from '../framework/names.js';
import type { ManagedProxyConfiguration } from './configuration.js';
import { CLUSTER_PROXY, ENTRYPOINT_SERVICE, PROXY_NAMESPACE, PROXY_PORTS, SECRETS, USER_SERVER_LABELS, USER_SERVER_NAME } from './constants.js';
import { USER_SERVER_PORT } from './service-routing.js';
import { deployment } from '../../kube/builders.js';

const USER_SERVER_DIGEST_ANNOTATION = 'proxy.ocm-lab.io/user-serving-certificate';

/**
 * The names the user server's certificate carries (upstream's list): 127.0.0.1, localhost
 * (for `kubectl port-forward`), the Service's in-cluster names and `spec.userServer.additionalSANs`.
 */
export function userServerNames(additionalSANs: string[] = []): { dnsNames: string[]; ipAddresses: string[] } {
  const svc = `${USER_SERVER_NAME}.${PROXY_NAMESPACE}`;
  const dnsNames = ['localhost', USER_SERVER_NAME, svc, `${svc}.svc`, `${svc}.svc.cluster.local`];
  const ipAddresses = ['127.0.0.1'];
  for (const name of additionalSANs) {
    const ip = canonicalIp(name);
    const [list, value] = ip ? [ipAddresses, ip] : [dnsNames, name];
    if (!list.includes(value)) list.push(value);
  }
  return { dnsNames, ipAddresses };
}

/** The names of the service proxies' certificate (upstream's): any cluster's service-proxy host, and loopback. */
export const SERVICE_PROXY_NAMES = { dnsNames: ['localhost', '*.open-cluster-management.proxy'], ipAddresses: ['127.0.0.1'] };

/**
 * Deployment `cluster-proxy-addon-user` on the hub: the user server in a pod of its own
 * network (as upstream's), reaching the proxy-server through Service proxy-entrypoint with
 * the `proxy-client` certificate; users reach it through Service `cluster-proxy-addon-user`
 * (port 9092), e.g. by `kubectl port-forward`.
 */
export function userServerDeployment(mpc: ManagedProxyConfiguration, rollout: { tlsArgs: string[]; certificateDigest: string }): KubeObject {
  const mount = (name: string, secretName: string, mountPath: string) => ({
    volume: { name, secret: { secretName } },
    mount: { name, mountPath, readOnly: true },
  });
  const serving = mount('user-tls', SECRETS.userServing, '/user-tls');
  const ca = mount('proxy-server-ca', SECRETS.ca, '/proxy-ca');
  const client = mount('proxy-client-cert', SECRETS.proxyClient, '/proxy-client-tls');
  const entrypoint = `${ENTRYPOINT_SERVICE}.${PROXY_NAMESPACE}.svc`;
  return deployment({
    name: USER_SERVER_NAME,
    namespace: PROXY_NAMESPACE,
    labels: USER_SERVER_LABELS,
    podAnnotations: { [USER_SERVER_DIGEST_ANNOTATION]: rollout.certificateDigest },
    containers: [
      {
        name: 'user-server',
        image: mpc.spec.proxyServer.image ?? OCM_LAB_IMAGE,
        args: [
          'internal',
          'user-server',
          `--host=${entrypoint}`,
          `--port=${PROXY_PORTS.frontend}`,
          '--proxy-ca-cert=/proxy-ca/ca.crt',
          '--proxy-cert=/proxy-client-tls/tls.crt',
          '--proxy-key=/proxy-client-tls/tls.key',
          `--server-port=${USER_SERVER_PORT}`,
          '--server-cert=/user-tls/tls.crt',
          '--server-key=/user-tls/tls.key',
          '--service-proxy-ca-cert=/proxy-ca/ca.crt',
          ...rollout.tlsArgs,
        ],
        ports: [{ name: 'https', containerPort: USER_SERVER_PORT }],
        readinessProbe: { tcpSocket: { port: USER_SERVER_PORT }, periodSeconds: 2 },
        volumeMounts: [serving.mount, ca.mount, client.mount],
      },
    ],
    podSpec: { volumes: [serving.volume, ca.volume, client.volume] },
  });
}

/** Service `cluster-proxy-addon-user` (port 9092, upstream's). */
export function userServerService(): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: USER_SERVER_NAME, namespace: PROXY_NAMESPACE, labels: { ...USER_SERVER_LABELS, [ADDON_NAME_LABEL]: CLUSTER_PROXY } },
    spec: { selector: USER_SERVER_LABELS, ports: [{ name: 'https', protocol: 'TCP', port: USER_SERVER_PORT, targetPort: USER_SERVER_PORT }] },
  };
}
