import { OCM_LAB_IMAGE } from '../../image.js';
import type { KubeClient } from '../../kube/client.js';
import { hubKubeconfigSecretName } from '../framework/names.js';
import { collectionPath, deleteIfPresent, objectPath, setCondition, type Condition, type KubeObject } from '../../kube/objects.js';
import { ttlExpired } from './ttl.js';
import type { AddonDefinition } from '../framework/types.js';
import { CONDITIONS, MANAGED_SERVICEACCOUNT, MSA_AGENT_DEPLOYMENT, MSA_AGENT_SERVICE_ACCOUNT, MSA_API, MSA_GROUP, MSA_NAMESPACE } from './constants.js';
import type { ManagedServiceAccount } from './types.js';

const HUB_KUBECONFIG_DIR = '/etc/hub';

/** The agent for one cluster: namespace, its ServiceAccount and spoke RBAC, and the Deployment. */
export function msaAgentManifests(cluster: string): KubeObject[] {
  const labels = { 'open-cluster-management.io/addon': MANAGED_SERVICEACCOUNT };
  const name = 'open-cluster-management:managed-serviceaccount:addon-agent';
  const subjects = [{ kind: 'ServiceAccount', name: MSA_AGENT_SERVICE_ACCOUNT, namespace: MSA_NAMESPACE }];
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: MSA_NAMESPACE } },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: MSA_AGENT_SERVICE_ACCOUNT, namespace: MSA_NAMESPACE } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name, namespace: MSA_NAMESPACE },
      rules: [
        { apiGroups: [''], resources: ['serviceaccounts'], verbs: ['get', 'list', 'watch', 'create', 'delete'] },
        { apiGroups: [''], resources: ['serviceaccounts/token'], verbs: ['create'] },
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name, namespace: MSA_NAMESPACE },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects,
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name },
      rules: [{ apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects,
    },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: MSA_AGENT_DEPLOYMENT, namespace: MSA_NAMESPACE, labels },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            serviceAccountName: MSA_AGENT_SERVICE_ACCOUNT,
            containers: [
              {
                name: 'addon-agent',
                image: OCM_LAB_IMAGE,
                args: ['internal', 'managed-serviceaccount-agent', `--cluster-name=${cluster}`, `--hub-kubeconfig=${HUB_KUBECONFIG_DIR}/kubeconfig`],
                volumeMounts: [{ name: 'hub-kubeconfig', mountPath: HUB_KUBECONFIG_DIR, readOnly: true }],
              },
            ],
            // Written by the cluster's registration agent once the manager approved the CSR.
            volumes: [{ name: 'hub-kubeconfig', secret: { secretName: hubKubeconfigSecretName(MANAGED_SERVICEACCOUNT) } }],
          },
        },
      },
    },
  ];
}

/**
 * The manager's pass over every ManagedServiceAccount on the hub: one whose
 * `spec.ttlSecondsAfterCreation` has run out is deleted (its Secret follows by garbage
 * collection, its ServiceAccount by the agent); one outside any cluster namespace has no
 * agent to serve it, so its status says so instead of staying silent.
 */
async function reconcileManagedServiceAccounts(hub: KubeClient, log: (line: string) => void): Promise<void> {
  const clusters = new Set(
    (await hub.get<{ items: KubeObject[] }>('/apis/cluster.open-cluster-management.io/v1/managedclusters')).items.map((c) => c.metadata.name),
  );
  const msas = (await hub.get<{ items: ManagedServiceAccount[] }>(collectionPath(MSA_API, 'ManagedServiceAccount'))).items;
  for (const raw of msas) {
    const msa = { ...raw, apiVersion: MSA_API, kind: 'ManagedServiceAccount' };
    if (ttlExpired(msa)) {
      if (await deleteIfPresent(hub, objectPath(msa))) log(`deleted ManagedServiceAccount ${msa.metadata.namespace}/${msa.metadata.name}: its ttlSecondsAfterCreation (${msa.spec?.ttlSecondsAfterCreation}) ran out`);
      continue;
    }
    if (clusters.has(msa.metadata.namespace ?? '')) continue;
    const conditions: Condition[] = [...(msa.status?.conditions ?? [])];
    const message = `namespace ${msa.metadata.namespace} is not the namespace of a managed cluster, so no agent serves this ManagedServiceAccount; create it in a cluster's namespace (one of: ${[...clusters].sort().join(', ') || 'none yet'})`;
    let changed = setCondition(conditions, { type: CONDITIONS.secretCreated, status: 'False', reason: 'NotAManagedCluster', message });
    changed = setCondition(conditions, { type: CONDITIONS.tokenReported, status: 'False', reason: 'TokenReportFailed', message }) || changed;
    if (changed) await hub.put(`${objectPath(msa)}/status`, { ...msa, status: { ...msa.status, conditions } });
  }
}

export function managedServiceAccountAddon(log: (line: string) => void = () => undefined): AddonDefinition {
  return {
    name: MANAGED_SERVICEACCOUNT,
    displayName: 'managed-serviceaccount',
    description: 'ServiceAccount tokens of the managed clusters, projected to the hub',
    installNamespace: MSA_NAMESPACE,
    healthCheck: 'DeploymentAvailability',
    hubPermissions: [
      { apiGroups: [MSA_GROUP], resources: ['managedserviceaccounts'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [MSA_GROUP], resources: ['managedserviceaccounts/status'], verbs: ['get', 'update', 'patch'] },
      { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] },
      { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] },
    ],
    reconcileHub: (hub) => reconcileManagedServiceAccounts(hub, log),
    async agentManifests(cluster) {
      return msaAgentManifests(cluster);
    },
  };
}
