import type { KubeObject } from './objects.js';

/**
 * Builders of the objects every install writes: Namespaces, ServiceAccounts,
 * RBAC and single-pod-template Deployments. Each produces exactly the fields it
 * is given (no defaults beyond the ones named below), so what an install applies
 * does not change by going through here.
 */

/** The name, namespace, labels and annotations of an object; keys absent stay absent. */
export interface ObjectMeta {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export const RBAC_GROUP = 'rbac.authorization.k8s.io';
const RBAC_API = `${RBAC_GROUP}/v1`;

/** A PolicyRule of a Role or ClusterRole (the lab grants no non-resource URLs). */
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

export interface Subject {
  kind: string;
  name: string;
  namespace?: string;
  apiGroup?: string;
}

function metadata(meta: ObjectMeta | string): KubeObject['metadata'] {
  if (typeof meta === 'string') return { name: meta };
  const { name, namespace: ns, labels, annotations } = meta;
  return { name, ...(ns !== undefined ? { namespace: ns } : {}), ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}) };
}

export function namespace(meta: ObjectMeta | string): KubeObject {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: metadata(meta) };
}

export function serviceAccount(meta: ObjectMeta & { namespace: string }): KubeObject {
  return { apiVersion: 'v1', kind: 'ServiceAccount', metadata: metadata(meta) };
}

/** The subject that names a ServiceAccount in a binding. */
export function serviceAccountSubject(name: string, ns: string): Subject {
  return { kind: 'ServiceAccount', name, namespace: ns };
}

export function clusterRole(meta: ObjectMeta | string, rules: readonly PolicyRule[]): KubeObject {
  return { apiVersion: RBAC_API, kind: 'ClusterRole', metadata: metadata(meta), rules };
}

export function role(meta: ObjectMeta & { namespace: string }, rules: readonly PolicyRule[]): KubeObject {
  return { apiVersion: RBAC_API, kind: 'Role', metadata: metadata(meta), rules };
}

/** A ClusterRoleBinding of the ClusterRole `roleName` (default: the binding's own name). */
export function clusterRoleBinding(
  meta: ObjectMeta | string,
  subjects: readonly Subject[],
  roleName = typeof meta === 'string' ? meta : meta.name,
): KubeObject {
  return {
    apiVersion: RBAC_API,
    kind: 'ClusterRoleBinding',
    metadata: metadata(meta),
    roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: roleName },
    subjects,
  };
}

/** A RoleBinding of a Role (default: the Role of the binding's own name) or of a ClusterRole. */
export function roleBinding(
  meta: ObjectMeta & { namespace: string },
  subjects: readonly Subject[],
  roleRef: { kind: 'Role' | 'ClusterRole'; name: string } = { kind: 'Role', name: meta.name },
): KubeObject {
  return { apiVersion: RBAC_API, kind: 'RoleBinding', metadata: metadata(meta), roleRef: { apiGroup: RBAC_GROUP, ...roleRef }, subjects };
}

export interface DeploymentOptions {
  name: string;
  namespace: string;
  /** The Deployment's labels and its pods' labels. */
  labels: Record<string, string>;
  /** The selector's labels (default: all of `labels`). */
  selector?: Record<string, string>;
  /** e.g. `{ type: 'Recreate' }`; absent: the API server's default (RollingUpdate). */
  strategy?: Record<string, unknown>;
  /** Annotations of the pod template (e.g. a digest whose change rolls the pods). */
  podAnnotations?: Record<string, string>;
  /** Annotations of the Deployment itself. */
  annotations?: Record<string, string>;
  /** Default 1. */
  replicas?: number;
  serviceAccount?: string;
  containers: readonly Record<string, unknown>[];
  /** The rest of the pod spec, after the ServiceAccount and the containers (volumes, tolerations, …). */
  podSpec?: Record<string, unknown>;
}

/** A Deployment of one pod template whose labels are also the Deployment's (and by default its selector's). */
export function deployment(o: DeploymentOptions): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: o.name, namespace: o.namespace, labels: o.labels, ...(o.annotations ? { annotations: o.annotations } : {}) },
    spec: {
      replicas: o.replicas ?? 1,
      ...(o.strategy ? { strategy: o.strategy } : {}),
      selector: { matchLabels: o.selector ?? o.labels },
      template: {
        metadata: { labels: o.labels, ...(o.podAnnotations ? { annotations: o.podAnnotations } : {}) },
        spec: { ...(o.serviceAccount !== undefined ? { serviceAccountName: o.serviceAccount } : {}), containers: o.containers, ...o.podSpec },
      },
    },
  };
}
