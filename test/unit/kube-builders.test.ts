import { describe, expect, it } from 'vitest';
import { clusterRole, clusterRoleBinding, deployment, namespace, role, roleBinding, serviceAccount, serviceAccountSubject } from '../../src/kube/builders.js';

describe('object builders', () => {
  it('write exactly the metadata they are given', () => {
    expect(namespace('ns1')).toEqual({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns1' } });
    expect(namespace({ name: 'ns1', labels: { a: 'b' } })).toEqual({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns1', labels: { a: 'b' } } });
    expect(serviceAccount({ name: 'sa', namespace: 'ns1' })).toEqual({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'sa', namespace: 'ns1' } });
  });

  it('bind roles by name, the binding’s own by default', () => {
    const rules = [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }];
    const subjects = [serviceAccountSubject('sa', 'ns1')];
    expect(clusterRole('r', rules)).toEqual({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'r' }, rules });
    expect(clusterRoleBinding('r', subjects)).toEqual({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'r' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'r' },
      subjects: [{ kind: 'ServiceAccount', name: 'sa', namespace: 'ns1' }],
    });
    expect(clusterRoleBinding('b', subjects, 'cluster-admin').roleRef).toEqual({
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole',
      name: 'cluster-admin',
    });
    expect(role({ name: 'r', namespace: 'ns1' }, rules).metadata).toEqual({ name: 'r', namespace: 'ns1' });
    expect(roleBinding({ name: 'r', namespace: 'ns1' }, subjects).roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' });
    expect(roleBinding({ name: 'x', namespace: 'kube-system' }, subjects, { kind: 'Role', name: 'reader' }).roleRef).toEqual({
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'Role',
      name: 'reader',
    });
  });

  it('build a Deployment whose labels select its pods, with only the options given', () => {
    const labels = { app: 'web' };
    const containers = [{ name: 'web', image: 'img' }];
    expect(deployment({ name: 'web', namespace: 'ns1', labels, serviceAccount: 'sa', containers, podSpec: { volumes: [] } })).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'ns1', labels },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: { metadata: { labels }, spec: { serviceAccountName: 'sa', containers, volumes: [] } },
      },
    });
    const d = deployment({
      name: 'web',
      namespace: 'ns1',
      labels: { app: 'web', tier: 'x' },
      selector: labels,
      replicas: 2,
      strategy: { type: 'Recreate' },
      podAnnotations: { digest: 'abc' },
      containers,
    }) as unknown as { spec: Record<string, unknown> & { template: { metadata: unknown; spec: unknown } } };
    expect(d.spec.replicas).toBe(2);
    expect(d.spec.strategy).toEqual({ type: 'Recreate' });
    expect(d.spec.selector).toEqual({ matchLabels: labels });
    expect(d.spec.template.metadata).toEqual({ labels: { app: 'web', tier: 'x' }, annotations: { digest: 'abc' } });
    expect(d.spec.template.spec).toEqual({ containers });
  });
});
