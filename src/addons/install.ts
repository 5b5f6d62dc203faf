import fs from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { NotReadyError } from '../errors.js';
import type { KubeClient } from '../kube/client.js';
import { OCM_LAB_IMAGE, OCM_LAB_POD_IMAGE_ENV } from '../images/catalogue.js';
import { ADDON_API, ADDON_MANAGER_NAMESPACE } from './framework/names.js';
import { applyObject, conditionOf, getOrNull, objectPath, type KubeObject, type ObservedCondition } from '../kube/objects.js';
import { FRAMEWORK_MANAGER_RULES } from './framework/manager-rules.js';
import type { PolicyRule } from './framework/types.js';
import { sleep } from '../kube/wait.js';
import type { AddonName, ProxyEntrypoint } from '../config/types.js';
import { clusterRole, clusterRoleBinding, deployment, namespace, serviceAccount, serviceAccountSubject } from '../kube/builders.js';
import { builtinAddon, builtinAddons } from './registry.js';

/** `manifests/crds/` of the package (next to dist/ and src/). */
const CRD_DIR = fileURLToPath(new URL('../../manifests/crds/', import.meta.url));

/** The CRDs the addon brings (its definition's `crds`; cluster-gateway has none: its API is aggregated, not stored). */
export async function addonCrds(addon: AddonName): Promise<KubeObject[]> {
  return Promise.all((builtinAddon(addon).crds ?? []).map(async (file) => YAML.parse(await fs.readFile(`${CRD_DIR}${file}`, 'utf8')) as KubeObject));
}

/** Applies the addon's CRDs (if it has any) and waits until the API server serves them; the first change it made ('created' before 'updated'). */
export async function installAddonCrds(hub: KubeClient, addon: AddonName, timeoutMs = 30_000): Promise<'created' | 'updated' | 'unchanged'> {
  const results: string[] = [];
  for (const crd of await addonCrds(addon)) results.push(await installCrd(hub, crd, timeoutMs));
  return results.includes('created') ? 'created' : results.includes('updated') ? 'updated' : 'unchanged';
}

async function installCrd(hub: KubeClient, crd: KubeObject, timeoutMs: number): Promise<'created' | 'updated' | 'unchanged'> {
  const result = await applyObject(hub, crd);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const current = await getOrNull<KubeObject>(hub, objectPath(crd));
    if (conditionOf(current, 'Established')?.status === 'True') return result;
    if (Date.now() > deadline) throw new NotReadyError(`CRD ${crd.metadata.name} was not Established within ${timeoutMs / 1000} s`);
    await sleep(100);
  }
}

export function managerName(addon: AddonName): string {
  return `${addon}-addon-manager`;
}

/**
 * What the managers of our addons may do on the hub: the framework's rules, what every manager's
 * hub work needs, then each built-in addon's own (its definition's managerRules). One list for
 * all of them: every manager is granted the rules of every addon.
 */
function managerRules(): PolicyRule[] {
  return [
    ...FRAMEWORK_MANAGER_RULES,
    { apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list', 'watch', 'create'] },
    { apiGroups: [''], resources: ['secrets', 'services', 'events'], verbs: ['*'] },
    { apiGroups: ['apps'], resources: ['deployments'], verbs: ['*'] },
    ...builtinAddons().flatMap((a) => a.managerRules ?? []),
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
export function managerObjects(addon: AddonName, hubAddress: string, image: string = OCM_LAB_IMAGE, proxyEntrypoint?: ProxyEntrypoint): KubeObject[] {
  const definition = builtinAddon(addon);
  const name = managerName(addon);
  const roleName = `open-cluster-management:${name}`;
  const labels = { app: name };
  const args = [
    'internal',
    'addon-manager',
    `--addon=${addon}`,
    ...(definition.managerArgs?.({ hubAddress, ...(proxyEntrypoint ? { proxyEntrypoint } : {}) }) ?? []),
  ];
  return [
    namespace(ADDON_MANAGER_NAMESPACE),
    serviceAccount({ name, namespace: ADDON_MANAGER_NAMESPACE }),
    clusterRole(roleName, managerRules()),
    clusterRoleBinding(roleName, [serviceAccountSubject(name, ADDON_MANAGER_NAMESPACE)]),
    ...(definition.managerObjects?.() ?? []),
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
  addon: AddonName,
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
