import { describe, expect, it } from 'vitest';
import {
  agentDialAddress,
  defaultProxyConfiguration,
  entrypointSpec,
  loadBalancerAddress,
  type ManagedProxyConfiguration,
} from '../../src/addons/cluster-proxy/configuration.js';
import { loadBalancerService, portForwardRbac, proxyAgentManifests } from '../../src/addons/cluster-proxy/manifests.js';
import { managerObjects } from '../../src/addons/install.js';
import { parseLabConfig, renderLabConfig } from '../../src/config/index.js';
import type { KubeObject } from '../../src/kube/objects.js';
import { addonVocabulary } from '../../src/addons/registry.js';

type Entrypoint = NonNullable<ManagedProxyConfiguration['spec']['proxyServer']['entrypoint']>;

function withEntrypoint(entrypoint: Entrypoint | undefined): ManagedProxyConfiguration {
  const mpc = defaultProxyConfiguration('10.0.1.2');
  return { ...mpc, spec: { ...mpc.spec, proxyServer: { ...mpc.spec.proxyServer, entrypoint } } };
}

interface PodSpec {
  containers: { name: string; args: string[]; volumeMounts?: { name: string }[] }[];
  volumes: { name: string }[];
}
const podSpec = (objects: KubeObject[]) =>
  (objects.find((o) => o.kind === 'Deployment') as unknown as { spec: { template: { spec: PodSpec } } }).spec.template.spec;
const agentArgs = (objects: KubeObject[]) => podSpec(objects).containers.find((c) => c.name === 'proxy-agent')!.args;

describe("cluster-proxy's entrypoint (spec.proxyServer.entrypoint)", () => {
  it('reads the three types of the API, with their defaults', () => {
    expect(entrypointSpec(defaultProxyConfiguration('hub.example'))).toEqual({ type: 'Hostname', host: 'hub.example', port: 8091 });
    expect(entrypointSpec(withEntrypoint({ type: 'PortForward' }))).toEqual({ type: 'PortForward', port: 8091 });
    expect(entrypointSpec(withEntrypoint({ type: 'LoadBalancerService', port: 443 }))).toEqual({
      type: 'LoadBalancerService',
      serviceName: 'proxy-agent-entrypoint',
      annotations: {},
      port: 443,
    });
    expect(
      entrypointSpec(
        withEntrypoint({
          type: 'LoadBalancerService',
          loadBalancerService: { name: 'lb', annotations: [{ key: 'service.beta.kubernetes.io/azure-load-balancer-internal', value: 'true' }] },
        }),
      ),
    ).toMatchObject({ serviceName: 'lb', annotations: { 'service.beta.kubernetes.io/azure-load-balancer-internal': 'true' } });
  });

  it('refuses an unknown type, an empty hostname or a bad port, naming the field and what it accepts', () => {
    expect(() => entrypointSpec(withEntrypoint({ type: 'NodePort' }))).toThrow(
      'ManagedProxyConfiguration cluster-proxy: spec.proxyServer.entrypoint.type "NodePort" is not one of Hostname, PortForward, LoadBalancerService',
    );
    expect(() => entrypointSpec(withEntrypoint({ type: 'Hostname', hostname: { value: ' ' } }))).toThrow(
      'spec.proxyServer.entrypoint.hostname.value is empty; type Hostname needs the address the agents dial',
    );
    expect(() => entrypointSpec(withEntrypoint({ type: 'PortForward', port: 70000 }))).toThrow(
      'spec.proxyServer.entrypoint.port 70000 is not a port (1-65535)',
    );
    expect(() => entrypointSpec(withEntrypoint({ type: 'LoadBalancerService', loadBalancerService: { annotations: [{ value: 'x' }] } }))).toThrow(
      'loadBalancerService.annotations[0].key is empty',
    );
  });

  it("takes a load balancer's first ingress address, ip before hostname, and none while it has none", () => {
    const svc = (ingress: unknown[] | undefined) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'lb' }, status: { loadBalancer: { ingress } } });
    expect(loadBalancerAddress(svc([{ ip: '192.0.2.10', hostname: 'lb.example' }]))).toBe('192.0.2.10');
    expect(loadBalancerAddress(svc([{ hostname: 'abc.elb.example' }]))).toBe('abc.elb.example');
    expect(loadBalancerAddress(svc([]))).toBeNull();
    expect(loadBalancerAddress(svc(undefined))).toBeNull();
    expect(loadBalancerAddress(null)).toBeNull();
  });

  it('tells agents where to dial: the host, their own loopback for PortForward, the LB address once there is one', () => {
    expect(agentDialAddress({ type: 'Hostname', host: 'h', port: 8091 }, null)).toEqual({ host: 'h', port: 8091 });
    expect(agentDialAddress({ type: 'PortForward', port: 9000 }, null)).toEqual({ host: '127.0.0.1', port: 9000 });
    const lb = { type: 'LoadBalancerService' as const, serviceName: 'lb', annotations: {}, port: 8091 };
    expect(agentDialAddress(lb, null)).toBeNull();
    expect(agentDialAddress(lb, '192.0.2.10')).toEqual({ host: '192.0.2.10', port: 8091 });
  });

  it('writes the type the lab file asks for into the default ManagedProxyConfiguration', () => {
    expect(defaultProxyConfiguration('10.0.1.2').spec.proxyServer.entrypoint).toEqual({ type: 'Hostname', hostname: { value: '10.0.1.2' }, port: 8091 });
    expect(defaultProxyConfiguration('10.0.1.2', 'PortForward').spec.proxyServer.entrypoint).toEqual({ type: 'PortForward', port: 8091 });
    expect(defaultProxyConfiguration('10.0.1.2', 'LoadBalancerService').spec.proxyServer.entrypoint).toEqual({
      type: 'LoadBalancerService',
      loadBalancerService: { name: 'proxy-agent-entrypoint' },
      port: 8091,
    });
  });
});

describe("cluster-proxy's entrypoint objects", () => {
  it('PortForward: the agent dials 127.0.0.1, where its port-forward-proxy container forwards to the proxy-server pods with the hub kubeconfig', () => {
    for (const serviceProxy of [false, true]) {
      const objects = proxyAgentManifests(
        'cluster1',
        withEntrypoint({ type: 'PortForward', port: 9091 }),
        { certPem: 'C', keyPem: 'K' },
        'CA',
        serviceProxy ? { cert: { certPem: 'S', keyPem: 'SK' }, tlsArgs: [], agentNamespace: 'open-cluster-management-cluster-proxy' } : undefined,
      );
      expect(agentArgs(objects)).toEqual(expect.arrayContaining(['--proxy-server-host=127.0.0.1', '--proxy-server-port=9091']));
      const spec = podSpec(objects);
      const forward = spec.containers.find((c) => c.name === 'port-forward-proxy')!;
      expect(forward.args).toEqual([
        'internal',
        'port-forward-proxy',
        '--hub-kubeconfig=/etc/kubeconfig/kubeconfig',
        '--proxy-server-namespace=open-cluster-management-cluster-proxy',
        '--pod-selector=open-cluster-management.io/addon=cluster-proxy,proxy.open-cluster-management.io/component-name=proxy-server',
        '--listen-port=9091',
        '--target-port=8091',
      ]);
      expect(forward.volumeMounts).toEqual([expect.objectContaining({ name: 'hub-kubeconfig' })]);
      // One hub kubeconfig volume, whether the service proxy (which mounts it too) runs or not.
      expect(spec.volumes.filter((v) => v.name === 'hub-kubeconfig')).toHaveLength(1);
    }
  });

  it('Hostname and LoadBalancerService agents have no port-forward proxy; an LB agent dials the ingress address, and none is made without one', () => {
    const hostname = proxyAgentManifests('cluster1', defaultProxyConfiguration('10.0.1.2'), { certPem: 'C', keyPem: 'K' }, 'CA');
    expect(podSpec(hostname).containers.map((c) => c.name)).toEqual(['proxy-agent']);
    expect(agentArgs(hostname)).toContain('--proxy-server-host=10.0.1.2');
    const lb = withEntrypoint({ type: 'LoadBalancerService' });
    expect(agentArgs(proxyAgentManifests('cluster1', lb, { certPem: 'C', keyPem: 'K' }, 'CA', undefined, '192.0.2.10'))).toContain(
      '--proxy-server-host=192.0.2.10',
    );
    expect(() => proxyAgentManifests('cluster1', lb, { certPem: 'C', keyPem: 'K' }, 'CA')).toThrow(
      'the LoadBalancer Service open-cluster-management-cluster-proxy/proxy-agent-entrypoint has no address yet',
    );
  });

  it('LoadBalancerService: a Service of type LoadBalancer in front of the proxy-servers, with upstream ports and the annotations', () => {
    const svc = loadBalancerService({ type: 'LoadBalancerService', serviceName: 'lb', annotations: { a: 'b' }, port: 443 }) as KubeObject & {
      spec: Record<string, unknown>;
    };
    expect(svc.metadata).toMatchObject({ name: 'lb', namespace: 'open-cluster-management-cluster-proxy', annotations: { a: 'b' } });
    expect(svc.spec).toEqual({
      type: 'LoadBalancer',
      selector: { 'open-cluster-management.io/addon': 'cluster-proxy', 'proxy.open-cluster-management.io/component-name': 'proxy-server' },
      ports: [
        { name: 'proxy-server', port: 8090, targetPort: 8090 },
        { name: 'agent-server', port: 443, targetPort: 8091 },
      ],
    });
  });

  it("PortForward's hub permission: find the proxy-server pods and port-forward to them, for the addon's agents only", () => {
    const [role, binding] = portForwardRbac() as (KubeObject & { rules?: unknown; subjects?: unknown; roleRef?: unknown })[];
    expect(role!.metadata).toMatchObject({ name: 'cluster-proxy-addon-agent:portforward', namespace: 'open-cluster-management-cluster-proxy' });
    expect(role!.rules).toEqual([
      { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] },
      { apiGroups: [''], resources: ['pods/portforward'], verbs: ['create'] },
    ]);
    expect(binding!.roleRef).toMatchObject({ kind: 'Role', name: 'cluster-proxy-addon-agent:portforward' });
    expect(binding!.subjects).toEqual([{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'system:open-cluster-management:addon:cluster-proxy' }]);
  });

  it("the manager is told the lab's choice", () => {
    const args = (objects: KubeObject[]) =>
      (objects.find((o) => o.kind === 'Deployment') as unknown as { spec: { template: { spec: PodSpec } } }).spec.template.spec.containers[0]!.args;
    expect(args(managerObjects('cluster-proxy', '10.0.0.1'))).toEqual([
      'internal',
      'addon-manager',
      '--addon=cluster-proxy',
      '--proxy-entrypoint-host=10.0.0.1',
    ]);
    expect(args(managerObjects('cluster-proxy', '10.0.0.1', undefined, 'port-forward'))).toContain('--proxy-entrypoint=port-forward');
  });
});

describe('the lab file: clusterProxy.entrypoint', () => {
  const lab = (extra: string[]) =>
    parseLabConfig(
      ['apiVersion: ocm-lab/v1alpha1', 'kind: Lab', 'vpcs: [{name: v}]', 'clusters: [{name: hub, vpc: v, hub: true}, {name: c1, vpc: v}]', ...extra].join('\n'),
      '/labs/lab.yaml',
      addonVocabulary(),
    );

  it('is absent by default (Hostname), takes the three names and survives rendering', () => {
    expect(lab([]).clusterProxy).toBeUndefined();
    for (const entrypoint of ['hostname', 'port-forward', 'load-balancer'] as const) {
      const config = lab([`clusterProxy: {entrypoint: ${entrypoint}}`]);
      expect(config.clusterProxy).toEqual({ entrypoint });
      expect(parseLabConfig(renderLabConfig(config), '/labs/lab.yaml', addonVocabulary()).clusterProxy).toEqual({ entrypoint });
    }
  });

  it('refuses other values and a lab that does not run our cluster-proxy', () => {
    expect(() => lab(['clusterProxy: {entrypoint: nodeport}'])).toThrow(
      /clusterProxy\.entrypoint = "nodeport": is not a way cluster-proxy's agents reach the proxy-server; use one of: hostname, port-forward, load-balancer/,
    );
    expect(() => lab(['clusterProxy: {entrypoint: port-forward}', 'addons: [managed-serviceaccount]'])).toThrow(
      /the lab does not run cluster-proxy; add it to addons or remove clusterProxy/,
    );
    expect(() => lab(['clusterProxy: {entrypoint: port-forward}', 'addons: [{name: cluster-proxy, implementation: upstream}]'])).toThrow(
      /applies to ocm-lab's cluster-proxy only/,
    );
    expect(() => lab(['clusterProxy: {entrypoin: port-forward}'])).toThrow(/entrypoin/);
  });
});
