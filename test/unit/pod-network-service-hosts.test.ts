import { describe, expect, it } from 'vitest';
import { serviceHostAliases, type ServiceWithName } from '../../src/nodelet/pod-network/service-hosts.js';

const svc = (namespace: string, name: string, spec: ServiceWithName['spec']): ServiceWithName => ({ metadata: { namespace, name }, spec });

describe('serviceHostAliases (cluster DNS names in /etc/hosts)', () => {
  const services = [
    svc('default', 'kubernetes', { clusterIP: '10.96.0.1' }),
    svc('open-cluster-management-cluster-proxy', 'cluster1', { type: 'ExternalName', externalName: 'kubernetes.default.svc.cluster.local' }),
    svc('open-cluster-management-cluster-proxy', 'headless', { clusterIP: 'None' }),
    svc('open-cluster-management-cluster-proxy', 'outside', { type: 'ExternalName', externalName: 'example.com' }),
    svc('other', 'short', { type: 'ExternalName', externalName: 'kubernetes.default.svc.' }),
  ];

  it('names a ClusterIP Service as the search path would, the short name only in its own namespace', () => {
    const aliases = serviceHostAliases(services, 'default');
    expect(aliases).toContainEqual({
      ip: '10.96.0.1',
      hostnames: ['kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local'],
    });
    expect(serviceHostAliases(services, 'x')).toContainEqual({
      ip: '10.96.0.1',
      hostnames: ['kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local'],
    });
  });

  it("resolves an ExternalName of another Service to that Service's ClusterIP (upstream cluster-proxy's <cluster> name)", () => {
    const aliases = serviceHostAliases(services, 'open-cluster-management-cluster-proxy');
    expect(aliases).toContainEqual({
      ip: '10.96.0.1',
      hostnames: [
        'cluster1',
        'cluster1.open-cluster-management-cluster-proxy',
        'cluster1.open-cluster-management-cluster-proxy.svc',
        'cluster1.open-cluster-management-cluster-proxy.svc.cluster.local',
      ],
    });
    expect(aliases.find((a) => a.hostnames.includes('short.other'))?.ip).toBe('10.96.0.1');
  });

  it('leaves out headless Services and external names only a resolver could answer', () => {
    const names = serviceHostAliases(services, 'open-cluster-management-cluster-proxy').flatMap((a) => a.hostnames);
    expect(names).not.toContain('headless');
    expect(names).not.toContain('outside');
  });
});
