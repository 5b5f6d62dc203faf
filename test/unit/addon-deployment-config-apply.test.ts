import { describe, expect, it } from 'vitest';
import {
  agentValues,
  applyDeploymentConfig,
  CONFIG_HASH_ANNOTATION,
  containerIdProblem,
  containerResources,
  proxyEnv,
} from '../../src/addons/framework/agent-config.js';
import { overrideAgentImages, overrideImage } from '../../src/addons/framework/image-registries.js';
import type { AddOnDeploymentConfigSpec, ContainerResourceRequirements } from '../../src/addons/framework/deployment-config.js';
import { managedServiceAccountAddon } from '../../src/addons/managed-serviceaccount/addon.js';
import { AddonConfigError } from '../../src/addons/framework/deployment-config.js';
import type { KubeClient } from '../../src/kube/client.js';
import type { KubeObject } from '../../src/kube/objects.js';

describe('registries: image overrides with upstream matching', () => {
  it('replaces a matching prefix; the last entry that changes the image wins', () => {
    expect(
      overrideImage([{ source: 'quay.io/open-cluster-management', mirror: 'mirror.lab/ocm' }], 'quay.io/open-cluster-management/registration:v1.2.1'),
    ).toBe('mirror.lab/ocm/registration:v1.2.1');
    expect(overrideImage([{ source: 'quay.io/open-cluster-management/', mirror: 'mirror.lab/ocm/' }], 'quay.io/open-cluster-management/work:v1')).toBe(
      'mirror.lab/ocm/work:v1',
    );
    expect(overrideImage([{ source: 'docker.io', mirror: 'x' }], 'quay.io/a/b:1')).toBe('quay.io/a/b:1');
    expect(
      overrideImage(
        [
          { source: 'quay.io', mirror: 'first.io' },
          { source: 'quay.io/a', mirror: 'second.io/a' },
          { source: 'nomatch', mirror: 'third' },
        ],
        'quay.io/a/b:1',
      ),
    ).toBe('second.io/a/b:1');
    // plain prefix matching, as upstream: `ocm-lab` also matches `ocm-lab:dev`
    expect(overrideImage([{ source: 'ocm-lab', mirror: 'docker.io/library/ocm-lab' }], 'ocm-lab:dev')).toBe('docker.io/library/ocm-lab:dev');
  });

  it('an entry without a source moves every image (its name:tag) under the mirror', () => {
    expect(overrideImage([{ mirror: 'mirror.lab/all/' }], 'quay.io/a/b:1')).toBe('mirror.lab/all/b:1');
    expect(overrideImage([{ source: '', mirror: '' }], 'quay.io/a/b:1')).toBe('b:1');
    expect(overrideImage(undefined, 'x:1')).toBe('x:1');
  });
});

describe('resourceRequirements: containerID patterns', () => {
  const reqs: ContainerResourceRequirements[] = [
    { containerID: '*:*:*', resources: { requests: { memory: '64Mi' } } },
    { containerID: 'deployments:agent:*', resources: { limits: { cpu: '1' } } },
    { containerID: 'deployments:*:sidecar', resources: { requests: { cpu: '5m' } } },
  ];
  it('the last matching entry wins; `*` matches one whole part', () => {
    expect(containerResources(reqs, 'deployments', 'agent', 'main')).toEqual({ limits: { cpu: '1' } });
    expect(containerResources(reqs, 'deployments', 'agent', 'sidecar')).toEqual({ requests: { cpu: '5m' } });
    expect(containerResources(reqs, 'daemonsets', 'agent', 'main')).toEqual({ requests: { memory: '64Mi' } });
    expect(containerResources(reqs.slice(1), 'deployments', 'agentx', 'main')).toBeUndefined();
  });
  it('a containerID that is not three parts is reported', () => {
    expect(containerIdProblem(reqs)).toBeUndefined();
    expect(containerIdProblem([{ containerID: 'deployments:agent', resources: {} }])).toMatch(
      /resourceRequirements\[0\]\.containerID "deployments:agent" is not <resource>:<name>:<container>/,
    );
    expect(containerIdProblem([{ containerID: 'a::b', resources: {} }])).toBeDefined();
  });
});

describe('proxyConfig', () => {
  it('both spellings of the variables; NO_PROXY only with a proxy', () => {
    expect(proxyEnv({ httpProxy: 'http://p:3128', noProxy: '.svc' })).toEqual([
      ['HTTP_PROXY', 'http://p:3128'],
      ['http_proxy', 'http://p:3128'],
      ['NO_PROXY', '.svc'],
      ['no_proxy', '.svc'],
    ]);
    expect(proxyEnv({ noProxy: '.svc' })).toEqual([]);
    expect(proxyEnv(undefined)).toEqual([]);
  });
});

function agent(): KubeObject[] {
  const labels = { app: 'agent' };
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'addon-ns' } },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'agent-sa', namespace: 'addon-ns' } },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'agent' } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'agent' },
      subjects: [
        { kind: 'ServiceAccount', name: 'agent-sa', namespace: 'addon-ns' },
        { kind: 'ServiceAccount', name: 'other', namespace: 'kube-system' },
      ],
    },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'agent', namespace: 'addon-ns', labels },
      spec: {
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            initContainers: [{ name: 'init', image: 'quay.io/ocm/init:v1' }],
            containers: [
              { name: 'main', image: 'quay.io/ocm/agent:v1', env: [{ name: 'HTTP_PROXY', value: 'stale' }] },
              { name: 'sidecar', image: 'docker.io/library/busybox:1' },
            ],
            volumes: [{ name: 'hub', secret: { secretName: 'addon-hub-kubeconfig' } }],
          },
        },
      },
    } as KubeObject,
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'elsewhere', namespace: 'kube-system' } },
  ];
}

type Pod = {
  metadata: { annotations?: Record<string, string> };
  spec: {
    nodeSelector?: Record<string, string>;
    tolerations?: unknown[];
    initContainers: { image: string }[];
    containers: {
      name: string;
      image: string;
      env?: { name: string; value?: string }[];
      resources?: unknown;
      volumeMounts?: { name: string; mountPath: string }[];
    }[];
    volumes: { name: string; configMap?: { name: string } }[];
  };
};
const podOf = (objs: KubeObject[]) => (objs.find((o) => o.kind === 'Deployment') as unknown as { spec: { template: Pod } }).spec.template;

describe('applying a config to the agent manifests', () => {
  const ctx = { addonName: 'demo', defaultNamespace: 'addon-ns' };
  const spec: AddOnDeploymentConfigSpec = {
    nodePlacement: { nodeSelector: { 'kubernetes.io/os': 'linux' }, tolerations: [{ key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' }] },
    registries: [{ source: 'quay.io/ocm', mirror: 'mirror.lab/ocm' }],
    proxyConfig: {
      httpProxy: 'http://proxy:3128',
      httpsProxy: 'http://proxy:3128',
      noProxy: '10.0.0.0/8',
      caBundle: Buffer.from('-----BEGIN CERTIFICATE-----\nX\n-----END CERTIFICATE-----\n').toString('base64'),
    },
    agentInstallNamespace: 'moved-ns',
    resourceRequirements: [{ containerID: 'deployments:agent:main', resources: { requests: { cpu: '10m' } } }],
  };

  it('without a config the manifests are unchanged', () => {
    const input = agent();
    expect(applyDeploymentConfig(input, null, ctx)).toBe(input);
  });

  it('applies placement, images, proxy (with the CA bundle), resources, namespace and the rollout annotation', () => {
    const input = agent();
    const before = JSON.stringify(input);
    const out = overrideAgentImages(applyDeploymentConfig(input, { spec, specHash: 'h1' }, ctx), spec.registries, []);
    expect(JSON.stringify(input)).toBe(before);

    const pod = podOf(out);
    expect(pod.metadata.annotations?.[CONFIG_HASH_ANNOTATION]).toBe('h1');
    expect(pod.spec.nodeSelector).toEqual({ 'kubernetes.io/os': 'linux' });
    expect(pod.spec.tolerations).toEqual([{ key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' }]);
    expect(pod.spec.initContainers?.[0]?.image).toBe('mirror.lab/ocm/init:v1');
    expect(pod.spec.containers.map((c) => c.image)).toEqual(['mirror.lab/ocm/agent:v1', 'docker.io/library/busybox:1']);
    const main = pod.spec.containers[0]!;
    expect(main.env?.filter((e) => e.name === 'HTTP_PROXY')).toEqual([{ name: 'HTTP_PROXY', value: 'http://proxy:3128' }]);
    expect(Object.fromEntries((main.env ?? []).map((e) => [e.name, e.value]))).toMatchObject({
      https_proxy: 'http://proxy:3128',
      NO_PROXY: '10.0.0.0/8',
      CA_BUNDLE_FILE_PATH: '/managed/proxy-ca/ca-bundle.crt',
    });
    expect(main.volumeMounts).toContainEqual({ name: 'proxy-ca-bundle', mountPath: '/managed/proxy-ca', readOnly: true });
    expect(pod.spec.volumes).toContainEqual({ name: 'proxy-ca-bundle', configMap: { name: 'demo-proxy-ca' } });
    expect(main.resources).toEqual({ requests: { cpu: '10m' } });
    expect(pod.spec.containers[1]?.resources).toBeUndefined();

    const caMap = out.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'demo-proxy-ca') as KubeObject & { data: Record<string, string> };
    expect(caMap.metadata.namespace).toBe('moved-ns');
    expect(caMap.data['ca-bundle.crt']).toContain('BEGIN CERTIFICATE');

    expect(out.find((o) => o.kind === 'Namespace')?.metadata.name).toBe('moved-ns');
    expect(out.find((o) => o.kind === 'ServiceAccount')?.metadata.namespace).toBe('moved-ns');
    expect(out.find((o) => o.kind === 'Deployment')?.metadata.namespace).toBe('moved-ns');
    expect((out.find((o) => o.kind === 'ClusterRoleBinding') as unknown as { subjects: { namespace: string }[] }).subjects.map((s) => s.namespace)).toEqual([
      'moved-ns',
      'kube-system',
    ]);
    // objects of other namespaces stay where they are
    expect(out.find((o) => o.metadata.name === 'elsewhere')?.metadata.namespace).toBe('kube-system');
  });

  it('a changed config changes only the hash annotation when nothing else differs: the agents roll', () => {
    const a = podOf(applyDeploymentConfig(agent(), { spec: {}, specHash: 'h1' }, ctx));
    const b = podOf(applyDeploymentConfig(agent(), { spec: {}, specHash: 'h2' }, ctx));
    expect(a.metadata.annotations?.[CONFIG_HASH_ANNOTATION]).not.toBe(b.metadata.annotations?.[CONFIG_HASH_ANNOTATION]);
    expect(a.spec).toEqual(b.spec);
  });

  it('values for the addon: variables by name and the agent namespace', () => {
    expect(agentValues({ customizedVariables: [{ name: 'replicas', value: '2' }, { name: 'empty' }], agentInstallNamespace: 'x' }, 'd')).toEqual({
      variables: { replicas: '2', empty: '' },
      installNamespace: 'x',
    });
    expect(agentValues(undefined, 'd')).toEqual({ variables: {}, installNamespace: 'd' });
  });
});

describe('per-addon variables', () => {
  const hub = {} as KubeClient;
  it('managed-serviceaccount: resyncInterval becomes the agent --resync-interval; a bad value is a config error', async () => {
    const addon = managedServiceAccountAddon();
    const args = (objs: KubeObject[]) => podOf(objs).spec.containers[0] as unknown as { args: string[] };
    const ns = 'open-cluster-management-managed-serviceaccount';
    expect(args(await addon.agentManifests('cluster1', hub, { variables: { resyncInterval: '500ms' }, installNamespace: ns })).args).toContain(
      '--resync-interval=500ms',
    );
    expect(args(await addon.agentManifests('cluster1', hub)).args.some((a) => a.startsWith('--resync-interval'))).toBe(false);
    await expect(addon.agentManifests('cluster1', hub, { variables: { resyncInterval: 'soon' }, installNamespace: ns })).rejects.toBeInstanceOf(
      AddonConfigError,
    );
    // the agent finds its namespace from the pod (downward API), so it can move with agentInstallNamespace
    const env = (
      podOf(await addon.agentManifests('cluster1', hub, { variables: {}, installNamespace: 'open-cluster-management-agent-addon' })).spec
        .containers[0] as unknown as { env: unknown[] }
    ).env;
    expect(env).toContainEqual({ name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } });
  });
});
