import type { KubeObject } from '../kube/objects.js';
import { namespace } from '../kube/builders.js';
import { OPERATOR_NAMESPACE } from './constants.js';

/**
 * The SIG-Multicluster cluster inventory API (kubernetes-sigs/cluster-inventory-api), which OCM's
 * registration hub publishes when its `ClusterProfile` feature gate is on: one ClusterProfile per
 * ManagedCluster in every namespace holding a bound ManagedClusterSetBinding of a set the cluster is in.
 */
const CLUSTER_PROFILE_GROUP = 'multicluster.x-k8s.io';
export const CLUSTER_PROFILE_API = `${CLUSTER_PROFILE_GROUP}/v1alpha1`;
const CLUSTER_PROFILE_CRD_NAME = `clusterprofiles.${CLUSTER_PROFILE_GROUP}`;
/** The name OCM's controllers give themselves in `spec.clusterManager.name` and label `x-k8s.io/cluster-manager`. */
export const OCM_CLUSTER_MANAGER_NAME = 'open-cluster-management';
export const CLUSTER_MANAGER_LABEL = 'x-k8s.io/cluster-manager';
/** OCM's label naming the ManagedCluster a ClusterProfile stands for. */
export const CLUSTER_NAME_LABEL = 'open-cluster-management.io/cluster-name';
/**
 * Where the lab's ClusterProfiles live: a namespace bound to the `global` ManagedClusterSet (every
 * cluster), which is what makes OCM write a profile per cluster. Its name starts with
 * `open-cluster-management`, a prefix no cluster may take, so no cluster namespace can collide.
 */
export const CLUSTER_INVENTORY_NAMESPACE = 'open-cluster-management-cluster-inventory';
const GLOBAL_CLUSTER_SET = 'global';

const str = { type: 'string' };
const condition = {
  type: 'object',
  required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'],
  properties: {
    type: { type: 'string', maxLength: 316 },
    status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
    observedGeneration: { type: 'integer', format: 'int64', minimum: 0 },
    lastTransitionTime: { type: 'string', format: 'date-time' },
    reason: { type: 'string', maxLength: 1024, minLength: 1 },
    message: { type: 'string', maxLength: 32768 },
  },
};
/** A kubeconfig `cluster` entry (clientcmd v1), as the type embeds it. */
const kubeconfigCluster = {
  type: 'object',
  properties: {
    server: str,
    'tls-server-name': str,
    'insecure-skip-tls-verify': { type: 'boolean' },
    'certificate-authority': str,
    'certificate-authority-data': { type: 'string', format: 'byte' },
    'proxy-url': str,
    'disable-compression': { type: 'boolean' },
    extensions: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'extension'],
        properties: { name: str, extension: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    },
  },
};
const accessProvider = { type: 'object', required: ['name'], properties: { name: str, cluster: kubeconfigCluster } };

/**
 * ocm-lab's own CRD for ClusterProfile, written from the Go types of cluster-inventory-api (the
 * revision OCM v1.2.1 builds with): namespaced, status subresource, `spec.clusterManager` required and
 * immutable, `status.accessProviders` and its deprecated twin `credentialProviders`.
 */
/**
 * Says the lab installed the ClusterProfile CRD (none was there): OCM's operator replaces the CRD whole
 * (labels and annotations too), so the mark lives beside it, in the operator's namespace, and `down`
 * removes the CRD only where it finds it.
 */
export function clusterProfileCrdMark(): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'ocm-lab-installed-clusterprofile-crd', namespace: OPERATOR_NAMESPACE, labels: { 'app.kubernetes.io/managed-by': 'ocm-lab' } },
    data: { crd: CLUSTER_PROFILE_CRD_NAME },
  };
}

export function clusterProfileCrd(): KubeObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: CLUSTER_PROFILE_CRD_NAME, labels: { 'app.kubernetes.io/managed-by': 'ocm-lab' } },
    spec: {
      group: CLUSTER_PROFILE_GROUP,
      scope: 'Namespaced',
      names: { kind: 'ClusterProfile', listKind: 'ClusterProfileList', plural: 'clusterprofiles', singular: 'clusterprofile' },
      versions: [
        {
          name: 'v1alpha1',
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: {
              type: 'object',
              required: ['spec'],
              properties: {
                apiVersion: str,
                kind: str,
                metadata: { type: 'object' },
                spec: {
                  type: 'object',
                  required: ['clusterManager'],
                  properties: {
                    displayName: str,
                    clusterManager: {
                      type: 'object',
                      required: ['name'],
                      properties: { name: str },
                      'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'ClusterManager is immutable' }],
                    },
                  },
                },
                status: {
                  type: 'object',
                  properties: {
                    conditions: { type: 'array', items: condition },
                    version: { type: 'object', properties: { kubernetes: str } },
                    properties: {
                      type: 'array',
                      items: {
                        type: 'object',
                        required: ['name', 'value'],
                        properties: {
                          name: { type: 'string', minLength: 1, maxLength: 253 },
                          value: { type: 'string', minLength: 1, maxLength: 1024 },
                          lastObservedTime: { type: 'string', format: 'date-time' },
                        },
                      },
                    },
                    accessProviders: { type: 'array', items: accessProvider },
                    credentialProviders: { type: 'array', items: accessProvider },
                  },
                },
              },
            },
          },
        },
      ],
    },
  };
}

/** The namespace the lab's consumers list ClusterProfiles in, bound to the `global` cluster set. */
export function clusterInventoryObjects(): KubeObject[] {
  return [
    namespace(CLUSTER_INVENTORY_NAMESPACE),
    {
      apiVersion: 'cluster.open-cluster-management.io/v1beta2',
      kind: 'ManagedClusterSetBinding',
      metadata: { name: GLOBAL_CLUSTER_SET, namespace: CLUSTER_INVENTORY_NAMESPACE },
      spec: { clusterSet: GLOBAL_CLUSTER_SET },
    },
  ];
}
