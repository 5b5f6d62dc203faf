import { clusterProxyImage } from '../../provision/recipes.js';
import { upstreamAddonImage } from '../../images/catalogue.js';
import type { KubeObject } from '../../kube/objects.js';
import { clusterRole, clusterRoleBinding, deployment, namespace, role, roleBinding, serviceAccount, serviceAccountSubject } from '../../kube/builders.js';
import { ADDON_API, LIFECYCLE_ANNOTATION } from '../framework/names.js';
import { addonInstall, placementObjects } from '../placements.js';
import { PROXY_API, PROXY_CONFIGURATION_NAME, PROXY_NAMESPACE, PROXY_PORTS } from '../cluster-proxy/constants.js';
import {
  CLUSTER_PROXY_MANAGER_CLUSTER_RULES,
  CLUSTER_PROXY_MANAGER_NAMESPACE_RULES,
  CLUSTER_PROXY_MANAGER_PROXY_NAMESPACE_RULES,
  MSA_MANAGER_CLUSTER_RULES,
  type Rule,
} from './rbac.js';
import {
  UPSTREAM_MANAGER_CLUSTER_ROLE,
  UPSTREAM_MANAGER_DEPLOYMENT,
  UPSTREAM_MANAGER_SERVICE_ACCOUNT,
  UPSTREAM_RELEASE_NAMESPACE,
  type UpstreamAddon,
} from './names.js';

/**
 * The hub objects upstream's Helm chart of each addon creates with its default
 * values, written as our own objects from the chart's facts (names, args, RBAC).
 * One difference, on purpose: cluster-proxy's proxy-server runs in
 * open-cluster-management-cluster-proxy (the ManagedProxyConfiguration CRD's
 * default) rather than the release namespace, so ocm-lab's hub-side tunnel
 * clients (`ocm-lab proxy`, cluster-gateway) find it where they find ours.
 */

const ns = UPSTREAM_RELEASE_NAMESPACE;

function clusterRbac(addon: UpstreamAddon, rules: Rule[]): KubeObject[] {
  const name = UPSTREAM_MANAGER_CLUSTER_ROLE[addon];
  return [clusterRole(name, rules), clusterRoleBinding(name, [serviceAccountSubject(UPSTREAM_MANAGER_SERVICE_ACCOUNT[addon], ns)])];
}

function namespacedRbac(addon: UpstreamAddon, namespaceName: string, rules: Rule[]): KubeObject[] {
  const meta = { name: UPSTREAM_MANAGER_CLUSTER_ROLE[addon], namespace: namespaceName };
  return [role(meta, rules), roleBinding(meta, [serviceAccountSubject(UPSTREAM_MANAGER_SERVICE_ACCOUNT[addon], ns)])];
}

function managerDeployment(addon: UpstreamAddon, labels: Record<string, string>, container: { command: string[]; args: string[] }): KubeObject {
  return deployment({
    name: UPSTREAM_MANAGER_DEPLOYMENT[addon],
    namespace: ns,
    labels,
    serviceAccount: UPSTREAM_MANAGER_SERVICE_ACCOUNT[addon],
    containers: [
      {
        name: 'manager',
        image: upstreamAddonImage(addon),
        imagePullPolicy: 'IfNotPresent',
        ...container,
        // cluster-proxy's chart locks its manager down; managed-serviceaccount's sets nothing (its image runs as root).
        ...(addon === 'cluster-proxy'
          ? {
              securityContext: {
                allowPrivilegeEscalation: false,
                capabilities: { drop: ['ALL'] },
                privileged: false,
                runAsNonRoot: true,
                readOnlyRootFilesystem: true,
              },
            }
          : {}),
      },
    ],
  });
}

/** cluster-proxy v0.10.0's chart, default values (PortForward entrypoint: the agents reach the proxy-server through the hub API server). */
export function clusterProxyHubObjects(): KubeObject[] {
  const addon = 'cluster-proxy';
  const labels = { 'open-cluster-management.io/addon': addon, component: 'cluster-proxy-manager' };
  const image = clusterProxyImage();
  return [
    namespace(ns),
    namespace(PROXY_NAMESPACE),
    serviceAccount({ name: UPSTREAM_MANAGER_SERVICE_ACCOUNT[addon], namespace: ns }),
    ...clusterRbac(addon, CLUSTER_PROXY_MANAGER_CLUSTER_RULES),
    ...namespacedRbac(addon, ns, CLUSTER_PROXY_MANAGER_NAMESPACE_RULES),
    ...namespacedRbac(addon, PROXY_NAMESPACE, CLUSTER_PROXY_MANAGER_PROXY_NAMESPACE_RULES),
    // The chart's defaults: the global set bound in the release namespace, Placement cluster-proxy-placement over it.
    ...placementObjects(addon),
    {
      apiVersion: ADDON_API,
      kind: 'ClusterManagementAddOn',
      metadata: { name: addon, annotations: { [LIFECYCLE_ANNOTATION]: 'addon-manager' } },
      spec: {
        addOnMeta: { displayName: addon, description: addon },
        supportedConfigs: [
          { group: 'proxy.open-cluster-management.io', resource: 'managedproxyconfigurations', defaultConfig: { name: PROXY_CONFIGURATION_NAME } },
          { group: 'addon.open-cluster-management.io', resource: 'addondeploymentconfigs' },
        ],
        installStrategy: addonInstall(addon),
      },
    },
    {
      apiVersion: PROXY_API,
      kind: 'ManagedProxyConfiguration',
      metadata: { name: PROXY_CONFIGURATION_NAME },
      spec: {
        authentication: { dump: { secrets: {} }, signer: { type: 'SelfSigned' } },
        proxyServer: { image, replicas: 1, namespace: PROXY_NAMESPACE, entrypoint: { type: 'PortForward', port: PROXY_PORTS.agent } },
        proxyAgent: { image, replicas: 1, additionalValues: { enableImpersonation: 'true' } },
      },
    },
    managerDeployment(addon, labels, {
      command: ['/manager'],
      args: [
        '--leader-elect=true',
        `--signer-secret-namespace=${ns}`,
        '--enable-kube-api-proxy=true',
        '--enable-service-proxy=false',
        '--image-pull-policy=IfNotPresent',
        '--feature-gates=ClusterProfileAccessProvider=false',
      ],
    }),
  ];
}

/**
 * Where upstream's managed-serviceaccount agent and the ServiceAccounts it manages live on a spoke: the
 * chart's installNamespace for a ManagedClusterAddOn it creates in Deployment mode, and the namespace of
 * the seed articles' `system:serviceaccount:open-cluster-management-managed-serviceaccount:<name>`.
 */
const UPSTREAM_MSA_INSTALL_NAMESPACE = 'open-cluster-management-managed-serviceaccount';

/**
 * managed-serviceaccount v0.10.0's chart in Deployment mode with one `targetCluster` per spoke
 * (`agentInstallAll: false`): a Manual install strategy and a ManagedClusterAddOn per cluster
 * with the chart's installNamespace. With `agentInstallAll` the addon-manager would create
 * them without one, and upstream's agent would land in open-cluster-management-agent-addon.
 */
export function managedServiceAccountHubObjects(spokes: readonly string[] = []): KubeObject[] {
  const addon = 'managed-serviceaccount';
  const labels = { 'open-cluster-management.io/addon': addon };
  return [
    namespace(ns),
    serviceAccount({ name: UPSTREAM_MANAGER_SERVICE_ACCOUNT[addon], namespace: ns }),
    ...clusterRbac(addon, MSA_MANAGER_CLUSTER_RULES),
    {
      apiVersion: ADDON_API,
      kind: 'ClusterManagementAddOn',
      metadata: { name: addon },
      spec: {
        addOnMeta: { displayName: addon, description: addon },
        installStrategy: { type: 'Manual' },
        supportedConfigs: [{ group: 'addon.open-cluster-management.io', resource: 'addondeploymentconfigs' }],
      },
    },
    ...spokes.map((cluster) => ({
      apiVersion: ADDON_API,
      kind: 'ManagedClusterAddOn',
      metadata: { name: addon, namespace: cluster },
      spec: { installNamespace: UPSTREAM_MSA_INSTALL_NAMESPACE },
    })),
    managerDeployment(addon, labels, {
      command: ['/msa', 'manager'],
      args: [
        '--deploy-mode=Deployment',
        `--agent-image-name=${upstreamAddonImage(addon)}`,
        '--feature-gates=EphemeralIdentity=false,ClusterProfileCredSyncer=false',
      ],
    }),
  ];
}

export function upstreamHubObjects(addon: UpstreamAddon, spokes: readonly string[] = []): KubeObject[] {
  return addon === 'cluster-proxy' ? clusterProxyHubObjects() : managedServiceAccountHubObjects(spokes);
}
