import { OCM_LAB_IMAGE } from '../../images/catalogue.js';
import type { KubeObject } from '../../kube/objects.js';
import { deployment, role, roleBinding, serviceAccount, serviceAccountSubject } from '../../kube/builders.js';
import { ADDON_API } from '../framework/names.js';
import { addonInstall } from '../placements.js';
import { hubKubeconfigSecretName } from '../framework/names.js';
import type { AddonDefinition, PolicyRule } from '../framework/types.js';
import { HELLOWORLD, HELLOWORLD_AGENT_DEPLOYMENT, HELLOWORLD_AGENT_SERVICE_ACCOUNT, HELLOWORLD_NAMESPACE } from './constants.js';

const HUB_KUBECONFIG_DIR = '/var/run/hub';

/** On the hub, in the cluster's namespace: read its ConfigMaps, and its own ManagedClusterAddOn (to stop copying while it is being deleted). */
const HELLOWORLD_HUB_PERMISSIONS: PolicyRule[] = [
  { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: [ADDON_API.split('/')[0]!], resources: ['managedclusteraddons'], verbs: ['get', 'list', 'watch'] },
];

/**
 * The agent on one cluster: its ServiceAccount, a Role to write ConfigMaps in the install
 * namespace only (upstream's example binds cluster-admin; the copies need no more than this),
 * and the Deployment running `ocm-lab internal helloworld-agent` with the hub kubeconfig the
 * cluster's registration agent writes.
 */
export function helloworldAgentManifests(cluster: string, namespace: string = HELLOWORLD_NAMESPACE): KubeObject[] {
  const labels = { app: HELLOWORLD_AGENT_DEPLOYMENT };
  const roleName = 'open-cluster-management:helloworld:agent';
  return [
    serviceAccount({ name: HELLOWORLD_AGENT_SERVICE_ACCOUNT, namespace }),
    role({ name: roleName, namespace }, [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch', 'create', 'update', 'delete'] }]),
    roleBinding({ name: roleName, namespace }, [serviceAccountSubject(HELLOWORLD_AGENT_SERVICE_ACCOUNT, namespace)]),
    deployment({
      name: HELLOWORLD_AGENT_DEPLOYMENT,
      namespace,
      labels,
      serviceAccount: HELLOWORLD_AGENT_SERVICE_ACCOUNT,
      containers: [
        {
          name: 'helloworld-agent',
          image: OCM_LAB_IMAGE,
          args: [
            'internal',
            'helloworld-agent',
            `--cluster-name=${cluster}`,
            `--hub-kubeconfig=${HUB_KUBECONFIG_DIR}/kubeconfig`,
            `--addon-namespace=${namespace}`,
          ],
          volumeMounts: [{ name: 'hub-config', mountPath: HUB_KUBECONFIG_DIR, readOnly: true }],
        },
      ],
      podSpec: { volumes: [{ name: 'hub-config', secret: { secretName: hubKubeconfigSecretName(HELLOWORLD) } }] },
    }),
  ];
}

/** helloworld on our framework: an agent per cluster with its own hub credentials; Available when the agent Deployment is. */
export function helloworldAddon(): AddonDefinition {
  return {
    name: HELLOWORLD,
    displayName: 'helloworld',
    description: 'copies the ConfigMaps of a cluster’s namespace on the hub to the cluster (the addon-framework example)',
    installNamespace: HELLOWORLD_NAMESPACE,
    // As upstream's example: by Placement `global` (open-cluster-management); `ocm-lab addon enable --cluster` installs it Manual.
    install: addonInstall(HELLOWORLD),
    // As the addon-framework example: every field, proxy variables in upper case without a CA bundle.
    deploymentConfigUse: { installNamespace: 'follow', nodePlacement: 'apply', proxyConfig: 'env', resourceRequirements: 'apply' },
    healthCheck: 'DeploymentAvailability',
    hubPermissions: HELLOWORLD_HUB_PERMISSIONS,
    async agentManifests(cluster, _hub, values) {
      // The agent's --addon-namespace names where it landed, as upstream's template passes AddonInstallNamespace.
      return helloworldAgentManifests(cluster, values?.installNamespace);
    },
  };
}
