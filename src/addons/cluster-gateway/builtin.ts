import type { BuiltinAddon } from '../builtin.js';
import { APISERVICE_NAME, CLUSTER_GATEWAY, CREDENTIALS_NAMESPACE, GATEWAY_DEPLOYMENT, GATEWAY_NAMESPACE } from './constants.js';

/** cluster-gateway as the lab installs it (its line in addons/registry.ts): no CRD (its API is aggregated, not stored). */
export const clusterGatewayBuiltin: BuiltinAddon = {
  name: CLUSTER_GATEWAY,
  // Its addon mode: credentials from managed-serviceaccount, egress through cluster-proxy.
  requires: {
    addons: ['cluster-proxy', 'managed-serviceaccount'],
    why: 'it takes its credentials from managed-serviceaccount and reaches the clusters through cluster-proxy',
  },
  // cluster-gateway's manager probes clusters through the tunnel: it finds the proxy-server pods.
  managerRules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }],
  definition: (_flags, log) => import('./addon.js').then((m) => m.clusterGatewayAddon(log)),
  // Its own manager installs everywhere (its framework's InstallAllStrategy).
  install: 'AllClusters',
  agentNamespaces: [GATEWAY_NAMESPACE],
  hubNamespaces: [GATEWAY_NAMESPACE, CREDENTIALS_NAMESPACE],
  // The gateway itself: an aggregated API server on the hub beside the manager.
  hub: {
    plan: [`Deployment ${GATEWAY_NAMESPACE}/${GATEWAY_DEPLOYMENT}`, `APIService ${APISERVICE_NAME}`],
    install: (hub, { image }) => import('./hub-install.js').then((m) => m.installGatewayServer(hub, image ? { image } : {})),
    ready: (hub, timeoutMs, progress) => import('./hub-install.js').then((m) => m.waitForApiService(hub, timeoutMs, progress)),
    workloads: () => import('./hub-install.js').then((m) => m.gatewayServingObjects('').filter((o) => o.kind === 'Deployment')),
    objects: async () => {
      const { gatewayRbacObjects, gatewayServingObjects } = await import('./hub-install.js');
      return [...gatewayRbacObjects(), ...gatewayServingObjects('').filter((o) => o.kind !== 'Deployment')];
    },
  },
};
