import type { KubeClient } from '../../kube/client.js';
import type { ProxyEntrypoint } from '../../config/types.js';
import { OCM_LAB_IMAGE } from '../../images/catalogue.js';
import { getOrNull, objectPath, type KubeObject } from '../../kube/objects.js';
import { ENTRYPOINT_SERVICE, PROXY_API, PROXY_CONFIGURATION_NAME, PROXY_NAMESPACE, PROXY_PORTS } from './constants.js';

export interface ManagedProxyConfiguration extends KubeObject {
  spec: {
    authentication?: { signer?: { type?: string; selfSigned?: { additionalSANs?: string[] } } };
    proxyServer: {
      image?: string;
      replicas?: number;
      namespace?: string;
      inClusterServiceName?: string;
      entrypoint?: {
        type?: string;
        hostname?: { value?: string };
        loadBalancerService?: { name?: string; annotations?: { key?: string; value?: string }[] };
        port?: number;
      };
      additionalArgs?: string[];
    };
    proxyAgent: { image?: string; replicas?: number; additionalArgs?: string[] };
    /** Upstream's switch for the user server's certificate; here it turns on the user server and the agents' service proxies too. */
    userServer?: { additionalSANs?: string[] };
  };
  status?: { conditions?: import('../../kube/objects.js').Condition[] };
}

/** The entrypoint types of upstream's API (`spec.proxyServer.entrypoint.type`). */
const ENTRYPOINT_TYPES = ['Hostname', 'PortForward', 'LoadBalancerService'] as const;
export type EntrypointType = (typeof ENTRYPOINT_TYPES)[number];

/** The lab file's names (`clusterProxy.entrypoint`, `--proxy-entrypoint`) for upstream's entrypoint types. */
export const ENTRYPOINT_TYPE_OF: Readonly<Record<ProxyEntrypoint, EntrypointType>> = {
  hostname: 'Hostname',
  'port-forward': 'PortForward',
  'load-balancer': 'LoadBalancerService',
};

/** Upstream's default name of the LoadBalancer Service (`entrypoint.loadBalancerService.name`). */
const DEFAULT_LOAD_BALANCER_SERVICE = 'proxy-agent-entrypoint';

/**
 * The lab's ManagedProxyConfiguration: by default a Hostname entrypoint at the hub address the
 * spokes can reach; PortForward or LoadBalancerService when the lab file asks for it.
 */
export function defaultProxyConfiguration(entrypointHost: string, type: EntrypointType = 'Hostname'): ManagedProxyConfiguration {
  const entrypoint =
    type === 'Hostname'
      ? { type, hostname: { value: entrypointHost }, port: PROXY_PORTS.agent }
      : type === 'LoadBalancerService'
        ? { type, loadBalancerService: { name: DEFAULT_LOAD_BALANCER_SERVICE }, port: PROXY_PORTS.agent }
        : { type, port: PROXY_PORTS.agent };
  return {
    apiVersion: PROXY_API,
    kind: 'ManagedProxyConfiguration',
    metadata: { name: PROXY_CONFIGURATION_NAME },
    spec: {
      authentication: { signer: { type: 'SelfSigned' } },
      proxyServer: {
        image: OCM_LAB_IMAGE,
        replicas: 1,
        namespace: PROXY_NAMESPACE,
        inClusterServiceName: ENTRYPOINT_SERVICE,
        entrypoint,
      },
      proxyAgent: { image: OCM_LAB_IMAGE, replicas: 1 },
      // On in the lab (upstream's chart has it off): tutorials reach Services without setup.
      userServer: {},
    },
  };
}

/** `spec.authentication.signer.selfSigned.additionalSANs`: extra names for the proxy-server's certificates. */
export function additionalSANs(mpc: ManagedProxyConfiguration): string[] {
  return mpc.spec.authentication?.signer?.selfSigned?.additionalSANs ?? [];
}

export const proxyConfigurationPath = () =>
  objectPath({ apiVersion: PROXY_API, kind: 'ManagedProxyConfiguration', metadata: { name: PROXY_CONFIGURATION_NAME } });

export async function readProxyConfiguration(hub: KubeClient): Promise<ManagedProxyConfiguration | null> {
  return getOrNull<ManagedProxyConfiguration>(hub, proxyConfigurationPath());
}

/** What `spec.proxyServer.entrypoint` asks for, checked. */
export type EntrypointSpec =
  | { type: 'Hostname'; host: string; port: number }
  | { type: 'PortForward'; port: number }
  | { type: 'LoadBalancerService'; serviceName: string; annotations: Record<string, string>; port: number };

const where = `ManagedProxyConfiguration ${PROXY_CONFIGURATION_NAME}: spec.proxyServer.entrypoint`;

/** `spec.proxyServer.entrypoint`, checked: an unknown type or a missing field throws, naming the field and what it accepts. */
export function entrypointSpec(mpc: ManagedProxyConfiguration): EntrypointSpec {
  const ep = mpc.spec.proxyServer.entrypoint;
  const port = ep?.port ?? PROXY_PORTS.agent;
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`${where}.port ${JSON.stringify(ep?.port)} is not a port (1-65535)`);
  // Upstream's CRD requires the type; a missing one is read as Hostname, the lab's default.
  const type = ep?.type ?? 'Hostname';
  switch (type) {
    case 'Hostname': {
      const host = ep?.hostname?.value?.trim();
      if (!host) throw new Error(`${where}.hostname.value is empty; type Hostname needs the address the agents dial`);
      return { type, host, port };
    }
    case 'PortForward':
      return { type, port };
    case 'LoadBalancerService': {
      const annotations: Record<string, string> = {};
      for (const [i, a] of (ep?.loadBalancerService?.annotations ?? []).entries()) {
        if (!a.key) throw new Error(`${where}.loadBalancerService.annotations[${i}].key is empty`);
        annotations[a.key] = a.value ?? '';
      }
      return { type, serviceName: ep?.loadBalancerService?.name || DEFAULT_LOAD_BALANCER_SERVICE, annotations, port };
    }
    default:
      throw new Error(`${where}.type ${JSON.stringify(type)} is not one of ${ENTRYPOINT_TYPES.join(', ')}`);
  }
}

/** A LoadBalancer Service's first `status.loadBalancer.ingress` address (ip, else hostname), or null while it has none. */
export function loadBalancerAddress(service: KubeObject | null): string | null {
  const ingress = (service as { status?: { loadBalancer?: { ingress?: { ip?: string; hostname?: string }[] } } } | null)?.status?.loadBalancer?.ingress;
  for (const entry of ingress ?? []) {
    const address = entry.ip || entry.hostname;
    if (address) return address;
  }
  return null;
}

/** Where an agent's proxy-agent dials: the host, the LB's address, or its own pod's port-forward proxy on loopback. */
export function agentDialAddress(ep: EntrypointSpec, loadBalancer: string | null): { host: string; port: number } | null {
  switch (ep.type) {
    case 'Hostname':
      return { host: ep.host, port: ep.port };
    case 'PortForward':
      return { host: '127.0.0.1', port: ep.port };
    case 'LoadBalancerService':
      return loadBalancer ? { host: loadBalancer, port: ep.port } : null;
  }
}

/** Whether the user server and the service proxies run: `spec.userServer` is present. */
export function userServerEnabled(mpc: ManagedProxyConfiguration): boolean {
  return !!mpc.spec.userServer;
}

/** `spec.userServer.additionalSANs`: extra names for the user server's certificate. */
export function userServerAdditionalSANs(mpc: ManagedProxyConfiguration): string[] {
  return mpc.spec.userServer?.additionalSANs ?? [];
}
