import fs from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { NotReadyError } from '../errors.js';
import type { KubeClient } from '../kube/client.js';
import { OCM_LAB_IMAGE, OCM_LAB_POD_IMAGE_ENV } from '../image.js';
import { ADDON_API, ADDON_MANAGER_NAMESPACE } from './framework/names.js';
import { applyObject, conditionOf, getOrNull, objectPath, type KubeObject, type ObservedCondition } from '../kube/objects.js';
import { CLUSTER_PROXY } from './cluster-proxy/constants.js';
import { MANAGED_SERVICEACCOUNT } from './managed-serviceaccount/constants.js';
import { CLUSTER_GATEWAY } from './cluster-gateway/constants.js';
import { HELLOWORLD } from './helloworld/constants.js';
import { FRAMEWORK_MANAGER_RULES } from './framework/manager-rules.js';
import { sleep } from '../kube/wait.js';
import type { ProxyEntrypoint } from '../config/types.js';
import { clusterRole, clusterRoleBinding, deployment, namespace, RBAC_GROUP, serviceAccount, serviceAccountSubject } from '../kube/builders.js';

export type LabAddon = typeof CLUSTER_PROXY | typeof MANAGED_SERVICEACCOUNT | typeof CLUSTER_GATEWAY | typeof HELLOWORLD;
export const LAB_ADDONS: readonly LabAddon[] = [CLUSTER_PROXY, MANAGED_SERVICEACCOUNT, CLUSTER_GATEWAY, HELLOWORLD];

/** The CRD each addon brings (cluster-gateway has none: its API is aggregated, not stored). */
const CRD_FILES: Record<LabAddon, string | null> = {
  [CLUSTER_PROXY]: 'managedproxyconfigurations.yaml',
  [MANAGED_SERVICEACCOUNT]: 'managedserviceaccounts.yaml',
  [CLUSTER_GATEWAY]: null,
  [HELLOWORLD]: null,
};

/** `manifests/crds/` of the package (next to dist/ and src/). */
const CRD_DIR = fileURLToPath(new URL('../../manifests/crds/', import.meta.url));

export async function addonCrd(addon: LabAddon): Promise<KubeObject | null> {
  const file = CRD_FILES[addon];
  return file ? (YAML.parse(await fs.readFile(`${CRD_DIR}${file}`, 'utf8')) as KubeObject) : null;
}

/** Applies the addon's CRD (if it has one) and waits until the API server serves it. */
export async function installAddonCrd(hub: KubeClient, addon: LabAddon, timeoutMs = 30_000): Promise<'created' | 'updated' | 'unchanged'> {
  const crd = await addonCrd(addon);
  if (!crd) return 'unchanged';
  const result = await applyObject(hub, crd);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const current = await getOrNull<KubeObject>(hub, objectPath(crd));
    if (conditionOf(current, 'Established')?.status === 'True') return result;
    if (Date.now() > deadline) throw new NotReadyError(`CRD ${crd.metadata.name} was not Established within ${timeoutMs / 1000} s`);
    await sleep(100);
  }
}

export function managerName(addon: LabAddon): string {
  return `${addon}-addon-manager`;
}

/** What the managers of our addons may do on the hub: the framework's rules, and what each addon's own hub work needs. */
const MANAGER_RULES = [
  ...FRAMEWORK_MANAGER_RULES,
  { apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list', 'watch', 'create'] },
  { apiGroups: [''], resources: ['secrets', 'services', 'events'], verbs: ['*'] },
  // OCM's ocm-tls-profile ConfigMap, which cluster-proxy's manager turns into the proxy-server's TLS flags.
  { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] },
  // cluster-gateway's manager probes clusters through the tunnel: it finds the proxy-server pods.
  { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] },
  { apiGroups: ['apps'], resources: ['deployments'], verbs: ['*'] },
  { apiGroups: ['proxy.open-cluster-management.io'], resources: ['managedproxyconfigurations', 'managedproxyconfigurations/status'], verbs: ['*'] },
  { apiGroups: ['authentication.open-cluster-management.io'], resources: ['managedserviceaccounts', 'managedserviceaccounts/status'], verbs: ['*'] },
  // managed-serviceaccount's ClusterProfile credential sync and the access providers the lab writes.
  { apiGroups: ['multicluster.x-k8s.io'], resources: ['clusterprofiles'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: ['multicluster.x-k8s.io'], resources: ['clusterprofiles/status'], verbs: ['get', 'update', 'patch'] },
];

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

/** Our image as a container of `image` runs it: with its reference in the environment when not the default, so what it deploys runs the same. */
function ourImageContainer(image: string): { image: string; env?: { name: string; value: string }[] } {
  return image === OCM_LAB_IMAGE ? { image } : { image, env: [{ name: OCM_LAB_POD_IMAGE_ENV, value: image }] };
}

/**
 * The manager's Deployment and identity on the hub; it runs as a pod of our image (`image`: the runtime's
 * LabCluster.ocmLabImage when it has one), and its agents run the same image.
 */
export function managerObjects(addon: LabAddon, hubAddress: string, image: string = OCM_LAB_IMAGE, proxyEntrypoint?: ProxyEntrypoint): KubeObject[] {
  const name = managerName(addon);
  const roleName = `open-cluster-management:${name}`;
  const labels = { app: name };
  const proxyArgs = [`--proxy-entrypoint-host=${hubAddress}`, ...(proxyEntrypoint ? [`--proxy-entrypoint=${proxyEntrypoint}`] : [])];
  const args = ['internal', 'addon-manager', `--addon=${addon}`, ...(addon === CLUSTER_PROXY ? proxyArgs : [])];
  return [
    namespace(ADDON_MANAGER_NAMESPACE),
    serviceAccount({ name, namespace: ADDON_MANAGER_NAMESPACE }),
    clusterRole(roleName, MANAGER_RULES),
    clusterRoleBinding(roleName, [serviceAccountSubject(name, ADDON_MANAGER_NAMESPACE)]),
    ...(addon === CLUSTER_PROXY ? tokenReviewObjects() : []),
    deployment({
      name,
      namespace: ADDON_MANAGER_NAMESPACE,
      labels,
      serviceAccount: name,
      containers: [{ name: 'manager', ...ourImageContainer(image), args }],
    }),
  ];
}

export async function installAddonManager(
  hub: KubeClient,
  addon: LabAddon,
  hubAddress: string,
  image: string = OCM_LAB_IMAGE,
  proxyEntrypoint?: ProxyEntrypoint,
): Promise<string[]> {
  const changed: string[] = [];
  for (const obj of managerObjects(addon, hubAddress, image, proxyEntrypoint)) {
    const result = await applyObject(hub, obj);
    if (result !== 'unchanged') changed.push(`${obj.kind}/${obj.metadata.name} ${result}`);
  }
  return changed;
}

export interface AddonClusterState {
  cluster: string;
  addon: string;
  installed: boolean;
  available: boolean;
  conditions: ObservedCondition[];
}

/** INSTALLED / AVAILABLE of an addon on each cluster, from its ManagedClusterAddOn (like `clusteradm get addon`). */
export async function addonStates(hub: KubeClient, addon: string, clusters: string[]): Promise<AddonClusterState[]> {
  return Promise.all(
    clusters.map(async (cluster) => {
      const mca = await getOrNull<KubeObject & { status?: { conditions?: AddonClusterState['conditions'] } }>(
        hub,
        objectPath({ apiVersion: ADDON_API, kind: 'ManagedClusterAddOn', metadata: { name: addon, namespace: cluster } }),
      );
      const conditions = mca?.status?.conditions ?? [];
      return {
        cluster,
        addon,
        installed: !!mca && conditions.some((c) => c.type === 'ManifestApplied' && c.status === 'True'),
        available: conditions.some((c) => c.type === 'Available' && c.status === 'True'),
        conditions,
      };
    }),
  );
}

/** Waits until the addon is Available on every cluster; on timeout the error names what is missing where. */
export async function waitForAddonAvailable(
  hub: KubeClient,
  addon: string,
  clusters: string[],
  options: { timeoutMs: number; progress?: (line: string) => void; diagnostics?: () => Promise<string> },
): Promise<AddonClusterState[]> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    const states = await addonStates(hub, addon, clusters);
    const waiting = states.filter((s) => !s.available);
    if (!waiting.length) return states;
    options.progress?.(`waiting for ${addon} to be Available on ${waiting.map((s) => s.cluster).join(', ')}`);
    if (Date.now() > deadline) {
      const detail = waiting
        .map(
          (s) =>
            `${s.cluster}: ` +
            (s.conditions.length
              ? s.conditions.map((c) => `${c.type}=${c.status}${c.reason ? ` (${c.reason}${c.message ? `: ${c.message}` : ''})` : ''}`).join('; ')
              : 'no ManagedClusterAddOn status yet'),
        )
        .join('\n');
      throw new NotReadyError(
        `addon ${addon} is not Available within ${Math.round(options.timeoutMs / 1000)} s on ${waiting.map((s) => s.cluster).join(', ')}\n` +
          `${detail}${options.diagnostics ? `\n${await options.diagnostics()}` : ''}`,
        {
          hint: `see 'ocm-lab addon list' and the manager's log: ocm-lab logs hub ${ADDON_MANAGER_NAMESPACE}/<pod>`,
        },
      );
    }
    await sleep(500);
  }
}
