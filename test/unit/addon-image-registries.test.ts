import { describe, expect, it } from 'vitest';
import { agentImage, CLUSTER_IMAGE_REGISTRIES_ANNOTATION, clusterImageRegistries, overrideAgentImages } from '../../src/addons/framework/image-registries.js';
import type { KubeObject } from '../../src/kube/objects.js';

const annotated = (value: string) => ({ [CLUSTER_IMAGE_REGISTRIES_ANNOTATION]: value });

describe('the ManagedCluster image-registries annotation', () => {
  it('reads upstream JSON; no annotation or no registries means none', () => {
    expect(clusterImageRegistries(undefined)).toEqual({ registries: [] });
    expect(clusterImageRegistries({ other: 'x' })).toEqual({ registries: [] });
    expect(clusterImageRegistries(annotated('{"other":[]}'))).toEqual({ registries: [] });
    expect(clusterImageRegistries(annotated('{"registries":[{"source":"quay.io/open-cluster-management","mirror":"mirror.lab/ocm"}]}'))).toEqual({
      registries: [{ source: 'quay.io/open-cluster-management', mirror: 'mirror.lab/ocm' }],
    });
  });

  it('names the annotation and the value when it is not JSON or not a list of mirrors', () => {
    const notJson = clusterImageRegistries(annotated('{"registries":'));
    expect('problem' in notJson && notJson.problem).toMatch(/open-cluster-management.io\/image-registries is not JSON .*\{"registries":$/);
    const notList = clusterImageRegistries(annotated('{"registries":{"mirror":"x"}}'));
    expect('problem' in notList && notList.problem).toMatch(/registries must be a list/);
    const noMirror = clusterImageRegistries(annotated('{"registries":[{"source":"quay.io"}]}'));
    expect('problem' in noMirror && noMirror.problem).toMatch(/registries must be a list/);
  });
});

describe('which rewrite an agent image gets', () => {
  const cluster = [{ source: 'quay.io/open-cluster-management', mirror: 'cluster.mirror/ocm' }];
  it("the deployment config's registries win where they change the image, else the cluster's", () => {
    const config = [{ source: 'quay.io/open-cluster-management/registration', mirror: 'config.mirror/registration' }];
    expect(agentImage('quay.io/open-cluster-management/registration:v1', config, cluster)).toBe('config.mirror/registration:v1');
    expect(agentImage('quay.io/open-cluster-management/work:v1', config, cluster)).toBe('cluster.mirror/ocm/work:v1');
    expect(agentImage('ocm-lab:dev', config, cluster)).toBe('ocm-lab:dev');
    expect(agentImage('quay.io/open-cluster-management/work:v1', undefined, [])).toBe('quay.io/open-cluster-management/work:v1');
  });

  it('rewrites containers and init containers of every workload, leaving other objects and the input alone', () => {
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'agent', namespace: 'ns' },
      spec: {
        template: {
          spec: {
            initContainers: [{ name: 'init', image: 'quay.io/open-cluster-management/init:v1' }],
            containers: [{ name: 'main', image: 'quay.io/open-cluster-management/agent:v1' }],
          },
        },
      },
    } as unknown as KubeObject;
    const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'ns' } } as KubeObject;
    const before = JSON.stringify(deployment);
    const [out, cm] = overrideAgentImages([deployment, configMap], undefined, cluster);
    expect(JSON.stringify(deployment)).toBe(before);
    expect(cm).toBe(configMap);
    const pod = (out as unknown as { spec: { template: { spec: { initContainers: { image: string }[]; containers: { image: string }[] } } } }).spec.template
      .spec;
    expect(pod.initContainers[0]!.image).toBe('cluster.mirror/ocm/init:v1');
    expect(pod.containers[0]!.image).toBe('cluster.mirror/ocm/agent:v1');
    const unchanged = [deployment];
    expect(overrideAgentImages(unchanged, [], [])).toBe(unchanged);
  });
});
