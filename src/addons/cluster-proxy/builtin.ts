import { PROXY_ENTRYPOINTS, type ProxyEntrypoint } from '../../config/types.js';
import { InvalidInputError } from '../../errors.js';
import { clusterRole, clusterRoleBinding, RBAC_GROUP } from '../../kube/builders.js';
import type { KubeObject } from '../../kube/objects.js';
import type { BuiltinAddon } from '../builtin.js';
import { ADDON_MANAGER_NAMESPACE } from '../framework/names.js';
import { CLUSTER_PROXY, PROXY_API, PROXY_CONFIGURATION_NAME, PROXY_NAMESPACE } from './constants.js';

/**
 * cluster-proxy's agents check hub users' tokens (the service proxy): TokenReview on the hub
 * for the addon's agent group, as upstream's `cluster-proxy-addon-agent-tokenreview`.
 */
const USER_TOKEN_REVIEW_ROLE = 'cluster-proxy-addon-agent-tokenreview';
function tokenReviewObjects(): KubeObject[] {
  return [
    clusterRole(USER_TOKEN_REVIEW_ROLE, [{ apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] }]),
    clusterRoleBinding(USER_TOKEN_REVIEW_ROLE, [{ apiGroup: RBAC_GROUP, kind: 'Group', name: `system:open-cluster-management:addon:${CLUSTER_PROXY}` }]),
  ];
}

/** cluster-proxy as the lab installs it (its line in addons/registry.ts). */
export const clusterProxyBuiltin: BuiltinAddon = {
  name: CLUSTER_PROXY,
  crds: ['managedproxyconfigurations.yaml'],
  managerRules: [
    // OCM's ocm-tls-profile ConfigMap, which cluster-proxy's manager turns into the proxy-server's TLS flags.
    { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] },
    { apiGroups: ['proxy.open-cluster-management.io'], resources: ['managedproxyconfigurations', 'managedproxyconfigurations/status'], verbs: ['*'] },
  ],
  managerArgs: ({ hubAddress, proxyEntrypoint }) => [
    `--proxy-entrypoint-host=${hubAddress}`,
    ...(proxyEntrypoint ? [`--proxy-entrypoint=${proxyEntrypoint}`] : []),
  ],
  managerObjects: tokenReviewObjects,
  managerFlags: {
    'proxy-entrypoint-host': { describe: 'cluster-proxy: hub address the agents dial (the default Hostname entrypoint)' },
    'proxy-entrypoint': {
      describe: 'cluster-proxy: the entrypoint type of the ManagedProxyConfiguration it creates (default hostname)',
      choices: PROXY_ENTRYPOINTS,
    },
  },
  async definition(flags) {
    const host = flags['proxy-entrypoint-host'];
    if (!host)
      throw new InvalidInputError('--proxy-entrypoint-host is required for cluster-proxy: the agents dial it', {
        hint: 'the hub address reachable from the managed clusters',
      });
    const { ENTRYPOINT_TYPE_OF } = await import('./configuration.js');
    const type = flags['proxy-entrypoint'] ? ENTRYPOINT_TYPE_OF[flags['proxy-entrypoint'] as ProxyEntrypoint] : undefined;
    const { clusterProxyAddon } = await import('./addon.js');
    return clusterProxyAddon({ entrypointHost: host, ...(type ? { entrypointType: type } : {}) });
  },
  // cluster-proxy v0.10.0's chart: installByPlacement left empty → Placement cluster-proxy-placement in the release namespace.
  install: { type: 'Placements', placements: [{ name: 'cluster-proxy-placement', namespace: ADDON_MANAGER_NAMESPACE }] },
  agentNamespaces: [PROXY_NAMESPACE],
  // The proxy-server runs in the same namespace on the hub.
  hubNamespaces: [PROXY_NAMESPACE],
  hub: {
    // The ManagedProxyConfiguration its manager writes.
    objects: async () => [{ apiVersion: PROXY_API, kind: 'ManagedProxyConfiguration', metadata: { name: PROXY_CONFIGURATION_NAME } }],
  },
};
