import type { KubeClient } from '../../kube/client.js';
import { collectionPath, type KubeObject } from '../../kube/objects.js';
import { deleteAndWait, labelledObjects, waitGone, type RemovalOptions } from '../../ocm/removal.js';
import { ADDON_API, ADDON_MANAGER_NAMESPACE, ADDON_NAME_LABEL, deployWorkName, WORK_API } from '../framework/names.js';
import { DEV_ADDON_LABEL, managerDeploymentName } from './names.js';
import { managerRoleName } from './hub-objects.js';

/** True when the hub runs a dev addon (`addon dev`) of this name: what `addon disable` can check first. */
export async function isDevAddon(hub: KubeClient, addon: string): Promise<boolean> {
  const found = await labelledObjects(
    hub,
    'apps/v1',
    'Deployment',
    `/apis/apps/v1/namespaces/${ADDON_MANAGER_NAMESPACE}/deployments`,
    `${DEV_ADDON_LABEL}=${addon}`,
  ).catch(() => []);
  return found.length > 0;
}

/**
 * Takes a dev addon off the lab, the reverse of `addon dev`: the manager stops (so nothing
 * recreates what follows), every ManagedClusterAddOn goes and with it (owner reference) its
 * ManifestWork, so each cluster's work agent removes the agent; then the ClusterManagementAddOn,
 * the hub RBAC granted to the agents, the addon's CSRs and the manager's objects. Idempotent;
 * returns what it deleted.
 */
export async function removeDevAddon(hub: KubeClient, addon: string, options: RemovalOptions): Promise<string[]> {
  const deleted: string[] = [];
  const ns = ADDON_MANAGER_NAMESPACE;
  const manager = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: managerDeploymentName(addon), namespace: ns } };
  deleted.push(...(await deleteAndWait(hub, [manager], `stopping the ${addon} manager`, options)));
  const pods = await labelledObjects(hub, 'v1', 'Pod', `/api/v1/namespaces/${ns}/pods`, `${DEV_ADDON_LABEL}=${addon}`).catch(() => []);
  await waitGone(hub, pods, `the ${addon} manager pods`, options);

  const mcas = (
    await hub.get<{ items: KubeObject[] }>(collectionPath(ADDON_API, 'ManagedClusterAddOn'), { fieldSelector: `metadata.name=${addon}` })
  ).items.map((m) => ({
    apiVersion: ADDON_API,
    kind: 'ManagedClusterAddOn',
    metadata: { name: addon, namespace: m.metadata.namespace ?? '' },
  }));
  deleted.push(...(await deleteAndWait(hub, mcas, `removing ${addon} from the clusters`, options)));
  const works = mcas.map((m) => ({ apiVersion: WORK_API, kind: 'ManifestWork', metadata: { name: deployWorkName(addon), namespace: m.metadata.namespace } }));
  await waitGone(hub, works, `the ${addon} agents leaving the clusters (their ManifestWorks)`, options);

  const clusters = mcas.map((m) => m.metadata.namespace);
  const hubRbac = (
    await Promise.all(
      clusters.flatMap((c) => [
        labelledObjects(
          hub,
          'rbac.authorization.k8s.io/v1',
          'Role',
          `/apis/rbac.authorization.k8s.io/v1/namespaces/${c}/roles`,
          `${ADDON_NAME_LABEL}=${addon}`,
        ).catch(() => []),
        labelledObjects(
          hub,
          'rbac.authorization.k8s.io/v1',
          'RoleBinding',
          `/apis/rbac.authorization.k8s.io/v1/namespaces/${c}/rolebindings`,
          `${ADDON_NAME_LABEL}=${addon}`,
        ).catch(() => []),
      ]),
    )
  ).flat();
  const csrs = await labelledObjects(
    hub,
    'certificates.k8s.io/v1',
    'CertificateSigningRequest',
    '/apis/certificates.k8s.io/v1/certificatesigningrequests',
    `${ADDON_NAME_LABEL}=${addon}`,
  ).catch(() => []);
  const configMaps = await labelledObjects(hub, 'v1', 'ConfigMap', `/api/v1/namespaces/${ns}/configmaps`, `${DEV_ADDON_LABEL}=${addon}`).catch(() => []);
  const hubSide = [
    { apiVersion: ADDON_API, kind: 'ClusterManagementAddOn', metadata: { name: addon } },
    ...hubRbac,
    ...csrs,
    ...configMaps,
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: managerDeploymentName(addon), namespace: ns } },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: managerRoleName(addon) } },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: managerRoleName(addon) } },
  ];
  deleted.push(...(await deleteAndWait(hub, hubSide, `removing ${addon}'s hub objects`, options)));
  return deleted;
}
