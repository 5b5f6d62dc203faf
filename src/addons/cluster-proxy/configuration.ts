import type { KubeClient } from '../../kube/client.js';
import { OCM_LAB_IMAGE } from '../../image.js';
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
      entrypoint?: { type?: string; hostname?: { value?: string }; port?: number };
      additionalArgs?: string[];
    };
    proxyAgent: { image?: string; replicas?: number; additionalArgs?: string[] };
    /** Upstream's switch for the user server's certificate; here it turns on the user server and the agents' service proxies too. */
    userServer?: { additionalSANs?: string[] };
  };
  status?: { conditions?: import('../../kube/objects.js').Condition[] };
}

/** The lab's ManagedProxyConfiguration: a Hostname entrypoint at the hub address the spokes can reach. */
export function defaultProxyConfiguration(entrypointHost: string): ManagedProxyConfiguration {
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
        entrypoint: { type: 'Hostname', hostname: { value: entrypointHost }, port: PROXY_PORTS.agent },
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

/** Where agents dial the proxy-server: the Hostname entrypoint (the only type the local runtime can offer). */
export function agentEntrypoint(mpc: ManagedProxyConfiguration): { host: string; port: number } {
  const ep = mpc.spec.proxyServer.entrypoint;
  if (ep?.type && ep.type !== 'Hostname') {
    throw new Error(
      `ManagedProxyConfiguration ${PROXY_CONFIGURATION_NAME}: spec.proxyServer.entrypoint.type ${ep.type} is not supported in this lab; use Hostname`,
    );
  }
  const host = ep?.hostname?.value;
  if (!host) throw new Error(`ManagedProxyConfiguration ${PROXY_CONFIGURATION_NAME}: spec.proxyServer.entrypoint.hostname.value is empty`);
  return { host, port: ep?.port ?? PROXY_PORTS.agent };
}

/** Whether the user server and the service proxies run: `spec.userServer` is present. */
export function userServerEnabled(mpc: ManagedProxyConfiguration): boolean {
  return !!mpc.spec.userServer;
}

/** `spec.userServer.additionalSANs`: extra names for the user server's certificate. */
export function userServerAdditionalSANs(mpc: ManagedProxyConfiguration): string[] {
  return mpc.spec.userServer?.additionalSANs ?? [];
}
