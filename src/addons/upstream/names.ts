import type { UpstreamAddon } from '../../config/upstream-addons.js';
import { ADDON_MANAGER_NAMESPACE } from '../framework/names.js';

export { isUpstreamAddon, UPSTREAM_ADDONS, type UpstreamAddon } from '../../config/upstream-addons.js';

/** Where upstream's charts are installed (`helm install -n open-cluster-management-addon`, their READMEs): the release namespace. */
export const UPSTREAM_RELEASE_NAMESPACE = ADDON_MANAGER_NAMESPACE;

/** The manager Deployment each upstream chart creates in the release namespace (same names as ours, so `addon list`/logs work alike). */
export const UPSTREAM_MANAGER_DEPLOYMENT: Record<UpstreamAddon, string> = {
  'cluster-proxy': 'cluster-proxy-addon-manager',
  'managed-serviceaccount': 'managed-serviceaccount-addon-manager',
};

/** The agent Deployment upstream's manager puts on every spoke (namespace, name). */
export const UPSTREAM_AGENT_DEPLOYMENT: Record<UpstreamAddon, { namespace: string; name: string }> = {
  'cluster-proxy': { namespace: 'open-cluster-management-cluster-proxy', name: 'cluster-proxy-proxy-agent' },
  'managed-serviceaccount': { namespace: 'open-cluster-management-managed-serviceaccount', name: 'managed-serviceaccount-addon-agent' },
};

/** The ServiceAccount each chart's manager runs as. */
export const UPSTREAM_MANAGER_SERVICE_ACCOUNT: Record<UpstreamAddon, string> = {
  'cluster-proxy': 'cluster-proxy',
  'managed-serviceaccount': 'managed-serviceaccount',
};

/** The cluster-scoped RBAC each chart's manager is bound to. */
export const UPSTREAM_MANAGER_CLUSTER_ROLE: Record<UpstreamAddon, string> = {
  'cluster-proxy': 'open-cluster-management:cluster-proxy:addon-manager',
  'managed-serviceaccount': 'open-cluster-management:managed-serviceaccount:addon-manager',
};
