import { OCM_LAB_IMAGE } from '../../images/catalogue.js';
import { addonInstall } from '../placements.js';
import { isStatus, type KubeClient } from '../../kube/client.js';
import { hubKubeconfigSecretName } from '../framework/names.js';
import { collectionPath, objectPath, setCondition, type Condition, type KubeObject } from '../../kube/objects.js';
import { TtlDeletions } from './ttl.js';
import type { AddonDefinition } from '../framework/types.js';
import { AddonConfigError } from '../framework/deployment-config.js';
import { CONDITIONS, MANAGED_SERVICEACCOUNT, MSA_AGENT_DEPLOYMENT, MSA_AGENT_SERVICE_ACCOUNT, MSA_API, MSA_GROUP, MSA_NAMESPACE } from './constants.js';
import type { ManagedServiceAccount } from './types.js';
import { clusterRole, clusterRoleBinding, deployment, namespace, role, roleBinding, serviceAccount, serviceAccountSubject } from '../../kube/builders.js';
import { Informer, RESYNCING } from '../../kube/informer.js';
import { syncClusterProfileCredentials } from './clusterprofile-sync.js';
import { writeClusterProfileAccess } from './clusterprofile-access.js';

const HUB_KUBECONFIG_DIR = '/etc/hub';

/** The agent for one cluster: namespace, its ServiceAccount and spoke RBAC, and the Deployment. */
export function msaAgentManifests(cluster: string): KubeObject[] {
  const labels = { 'open-cluster-management.io/addon': MANAGED_SERVICEACCOUNT };
  const name = 'open-cluster-management:managed-serviceaccount:addon-agent';
  const subjects = [serviceAccountSubject(MSA_AGENT_SERVICE_ACCOUNT, MSA_NAMESPACE)];
  return [
    namespace(MSA_NAMESPACE),
    serviceAccount({ name: MSA_AGENT_SERVICE_ACCOUNT, namespace: MSA_NAMESPACE }),
    role({ name, namespace: MSA_NAMESPACE }, [
      { apiGroups: [''], resources: ['serviceaccounts'], verbs: ['get', 'list', 'watch', 'create', 'delete'] },
      { apiGroups: [''], resources: ['serviceaccounts/token'], verbs: ['create'] },
    ]),
    roleBinding({ name, namespace: MSA_NAMESPACE }, subjects),
    clusterRole(name, [{ apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] }]),
    clusterRoleBinding(name, subjects),
    deployment({
      name: MSA_AGENT_DEPLOYMENT,
      namespace: MSA_NAMESPACE,
      labels,
      serviceAccount: MSA_AGENT_SERVICE_ACCOUNT,
      containers: [
        {
          name: 'addon-agent',
          image: OCM_LAB_IMAGE,
          args: ['internal', 'managed-serviceaccount-agent', `--cluster-name=${cluster}`, `--hub-kubeconfig=${HUB_KUBECONFIG_DIR}/kubeconfig`],
          // The managed ServiceAccounts live in the agent's own namespace, wherever agentInstallNamespace puts it.
          env: [{ name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } }],
          volumeMounts: [{ name: 'hub-kubeconfig', mountPath: HUB_KUBECONFIG_DIR, readOnly: true }],
        },
      ],
      // Written by the cluster's registration agent once the manager approved the CSR.
      podSpec: { volumes: [{ name: 'hub-kubeconfig', secret: { secretName: hubKubeconfigSecretName(MANAGED_SERVICEACCOUNT) } }] },
    }),
  ];
}

/**
 * The manager's pass over every ManagedServiceAccount on the hub: each is handed to the
 * TTL timers (a TTL that ran out is deleted at once; its Secret follows by garbage
 * collection, its ServiceAccount by the agent); one outside any cluster namespace has no
 * agent to serve it, so its status says so instead of staying silent.
 */
async function reconcileManagedServiceAccounts(hub: KubeClient, ttl: TtlDeletions): Promise<void> {
  const clusters = new Set(
    (await hub.get<{ items: KubeObject[] }>('/apis/cluster.open-cluster-management.io/v1/managedclusters')).items.map((c) => c.metadata.name),
  );
  const msas = (await hub.get<{ items: ManagedServiceAccount[] }>(collectionPath(MSA_API, 'ManagedServiceAccount'))).items;
  for (const raw of msas) {
    const msa = { ...raw, apiVersion: MSA_API, kind: 'ManagedServiceAccount' };
    ttl.observe(msa);
    if (clusters.has(msa.metadata.namespace ?? '')) continue;
    const conditions: Condition[] = [...(msa.status?.conditions ?? [])];
    const message =
      `namespace ${msa.metadata.namespace} is not the namespace of a managed cluster, so no agent serves this ManagedServiceAccount; ` +
      `create it in a cluster's namespace (one of: ${[...clusters].sort().join(', ') || 'none yet'})`;
    let changed = setCondition(conditions, { type: CONDITIONS.secretCreated, status: 'False', reason: 'NotAManagedCluster', message });
    changed = setCondition(conditions, { type: CONDITIONS.tokenReported, status: 'False', reason: 'TokenReportFailed', message }) || changed;
    if (changed) await hub.put(`${objectPath(msa)}/status`, { ...msa, status: { ...msa.status, conditions } });
  }
}

/**
 * Feeds the TTL timers from an informer of every ManagedServiceAccount, so one created
 * between two passes is scheduled at once (a TTL shorter than the pass interval would
 * otherwise be missed by up to that interval).
 */
async function watchTtls(hub: KubeClient, ttl: TtlDeletions, signal: AbortSignal, log: (line: string) => void): Promise<void> {
  const msas = new Informer<ManagedServiceAccount>(
    hub,
    collectionPath(MSA_API, 'ManagedServiceAccount'),
    (line) => log(`ManagedServiceAccounts for their TTLs: ${line}`),
    {},
    RESYNCING,
  );
  msas.onEvent(({ type, object }) => {
    // Listed items carry no apiVersion and kind; the TTL deletion builds its path from them.
    const msa = { ...object, apiVersion: MSA_API, kind: 'ManagedServiceAccount' };
    if (type === 'DELETED') ttl.forget(msa);
    else ttl.observe(msa);
  });
  await msas.run(signal);
}

/** Deletes this very MSA (a uid precondition spares a namesake created since); false when it is gone. */
async function deleteMsa(hub: KubeClient, msa: ManagedServiceAccount): Promise<boolean> {
  const uid = msa.metadata.uid;
  try {
    await hub.delete(objectPath(msa), uid ? { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid } } : undefined);
    return true;
  } catch (err) {
    if (isStatus(err, 404) || isStatus(err, 409)) return false;
    throw err;
  }
}

/** A signal for the watch: the caller's, or one that the process's SIGTERM/SIGINT abort (so an open watch never holds a stopping manager). */
function stopSignal(given: AbortSignal | undefined): AbortSignal {
  if (given) return given;
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  return controller.signal;
}

export function managedServiceAccountAddon(log: (line: string) => void = () => undefined, options: { signal?: AbortSignal } = {}): AddonDefinition {
  const ttl = new TtlDeletions(async (msa) => {
    if (await deleteMsa(hubOf(), msa))
      log(
        `deleted ManagedServiceAccount ${msa.metadata.namespace}/${msa.metadata.name}: ` +
          `its ttlSecondsAfterCreation (${msa.spec?.ttlSecondsAfterCreation}) ran out`,
      );
  }, log);
  let hub: KubeClient | undefined;
  const hubOf = () => hub!;
  return {
    name: MANAGED_SERVICEACCOUNT,
    displayName: 'managed-serviceaccount',
    description: 'ServiceAccount tokens of the managed clusters, projected to the hub',
    installNamespace: MSA_NAMESPACE,
    // Upstream's chart default: by Placement (its builtin.ts; the Placement from src/addons/placements.ts).
    install: addonInstall(MANAGED_SERVICEACCOUNT),
    // As upstream's (its manager renders the agent with the addon's install namespace and reads
    // only node placement, registries and variables): users' RBAC names the managed
    // ServiceAccounts as system:serviceaccount:<namespace>:<name>, so a config never moves them.
    deploymentConfigUse: { installNamespace: 'ignore', nodePlacement: 'apply', proxyConfig: 'ignore', resourceRequirements: 'ignore' },
    healthCheck: 'DeploymentAvailability',
    hubPermissions: [
      { apiGroups: [MSA_GROUP], resources: ['managedserviceaccounts'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [MSA_GROUP], resources: ['managedserviceaccounts/status'], verbs: ['get', 'update', 'patch'] },
      { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] },
      { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] },
    ],
    reconcileHub: async (client) => {
      if (!hub) {
        hub = client;
        void watchTtls(client, ttl, stopSignal(options.signal), log);
      }
      await reconcileManagedServiceAccounts(client, ttl);
      // The ClusterProfile inventory, where the hub has it (the lab's `clusterProfile:` switch).
      for (const line of [...(await syncClusterProfileCredentials(client)), ...(await writeClusterProfileAccess(client))]) log(line);
    },
    async agentManifests(cluster, _hub, values) {
      const manifests = msaAgentManifests(cluster);
      // AddOnDeploymentConfig variable `resyncInterval`: how often the agent reconciles (its --resync-interval, default 2s).
      const interval = values?.variables.resyncInterval;
      if (interval === undefined) return manifests;
      if (!/^[0-9]+(ms|s|m)$/.test(interval))
        throw new AddonConfigError(`customizedVariables resyncInterval=${JSON.stringify(interval)} is not a duration such as 500ms, 5s or 1m`);
      for (const obj of manifests) {
        const containers =
          obj.kind === 'Deployment'
            ? (obj as unknown as { spec: { template: { spec: { containers: { args?: string[] }[] } } } }).spec.template.spec.containers
            : [];
        for (const c of containers) c.args = [...(c.args ?? []), `--resync-interval=${interval}`];
      }
      return manifests;
    },
  };
}
