import { describe, expect, it } from 'vitest';
import { agentInstallNamespace, agentValues, applyDeploymentConfig, FRAMEWORK_CONFIG_USE, proxyEnv } from '../../src/addons/framework/agent-config.js';
import type { AddOnDeploymentConfigSpec } from '../../src/addons/framework/deployment-config.js';
import type { AddonDefinition } from '../../src/addons/framework/types.js';
import { managedServiceAccountAddon, msaAgentManifests } from '../../src/addons/managed-serviceaccount/addon.js';
import { MSA_NAMESPACE } from '../../src/addons/managed-serviceaccount/constants.js';
import { clusterProxyAddon } from '../../src/addons/cluster-proxy/addon.js';
import { proxyAgentManifests } from '../../src/addons/cluster-proxy/manifests.js';
import { defaultProxyConfiguration } from '../../src/addons/cluster-proxy/configuration.js';
import { PROXY_NAMESPACE } from '../../src/addons/cluster-proxy/constants.js';
import { helloworldAddon } from '../../src/addons/helloworld/addon.js';
import type { KubeClient } from '../../src/kube/client.js';
import type { KubeObject } from '../../src/kube/objects.js';

// What the API server leaves in a config that only sets a nodeSelector: it defaults agentInstallNamespace.
const DEFAULTED_NS = 'open-cluster-management-agent-addon';
const nodeSelectorOnly: AddOnDeploymentConfigSpec = { nodePlacement: { nodeSelector: { 'kubernetes.io/os': 'linux' } }, agentInstallNamespace: DEFAULTED_NS };
const everything: AddOnDeploymentConfigSpec = {
  ...nodeSelectorOnly,
  proxyConfig: { httpProxy: 'http://proxy:3128', noProxy: '.svc', caBundle: Buffer.from('-----BEGIN CERTIFICATE-----\nX\n').toString('base64') },
  resourceRequirements: [{ containerID: '*:*:*', resources: { requests: { cpu: '7m' } } }],
};

interface Container {
  name: string;
  args?: string[];
  env?: { name: string; value?: string }[];
  resources?: unknown;
  volumeMounts?: { name: string }[];
}
type Pod = { spec: { nodeSelector?: Record<string, string>; containers: Container[]; volumes?: { name: string }[] } };
const deploymentOf = (objs: KubeObject[]) => objs.find((o) => o.kind === 'Deployment') as unknown as KubeObject & { spec: { template: Pod } };
const envNames = (c: Container) => (c.env ?? []).map((e) => e.name);

function apply(addon: AddonDefinition, manifests: KubeObject[], spec: AddOnDeploymentConfigSpec): KubeObject[] {
  return applyDeploymentConfig(
    manifests,
    { spec, specHash: 'h' },
    { addonName: addon.name, defaultNamespace: addon.installNamespace, use: addon.deploymentConfigUse },
  );
}

describe('managed-serviceaccount takes a config as upstream: node placement yes, install namespace, proxy and resources no', () => {
  const addon = managedServiceAccountAddon();

  it('a nodeSelector-only config (agentInstallNamespace defaulted) leaves the agent, its ServiceAccount and its bindings where they were', () => {
    const out = apply(addon, msaAgentManifests('cluster1'), nodeSelectorOnly);
    for (const obj of out) if (obj.metadata.namespace !== undefined) expect(obj.metadata.namespace, `${obj.kind} ${obj.metadata.name}`).toBe(MSA_NAMESPACE);
    expect(out.filter((o) => o.kind === 'Namespace').map((o) => o.metadata.name)).toEqual([MSA_NAMESPACE]);
    const subjects = out.flatMap((o) => (o as { subjects?: { namespace?: string }[] }).subjects ?? []);
    expect(subjects.map((s) => s.namespace)).toEqual(subjects.map(() => MSA_NAMESPACE));
    expect(deploymentOf(out).spec.template.spec.nodeSelector).toEqual({ 'kubernetes.io/os': 'linux' });
  });

  it('the values and the status namespace stay the addon namespace too', () => {
    expect(agentValues(nodeSelectorOnly, MSA_NAMESPACE, addon.deploymentConfigUse).installNamespace).toBe(MSA_NAMESPACE);
    expect(agentInstallNamespace({ agentInstallNamespace: 'user-picked' }, MSA_NAMESPACE, addon.deploymentConfigUse)).toBe(MSA_NAMESPACE);
  });

  it('proxy and resources are not rendered (upstream’s agent template has neither)', () => {
    const c = deploymentOf(apply(addon, msaAgentManifests('cluster1'), everything)).spec.template.spec.containers[0]!;
    expect(envNames(c)).toEqual(['POD_NAMESPACE']);
    expect(c.resources).toBeUndefined();
    expect(c.volumeMounts?.map((m) => m.name)).toEqual(['hub-kubeconfig']);
  });
});

describe('cluster-proxy takes a config as upstream: it follows agentInstallNamespace, proxy variables on proxy-agent only', () => {
  const addon = clusterProxyAddon({ entrypointHost: '10.0.1.2' });
  const manifests = () =>
    proxyAgentManifests('cluster1', defaultProxyConfiguration('10.0.1.2'), { certPem: 'C', keyPem: 'K' }, 'CA', {
      cert: { certPem: 'C', keyPem: 'K' },
      tlsArgs: [],
      agentNamespace: PROXY_NAMESPACE,
    });

  it('a nodeSelector-only config moves the agent to the defaulted namespace', () => {
    const out = apply(addon, manifests(), nodeSelectorOnly);
    expect(deploymentOf(out).metadata.namespace).toBe(DEFAULTED_NS);
    expect(out.some((o) => o.metadata.namespace === PROXY_NAMESPACE)).toBe(false);
    expect(agentInstallNamespace(nodeSelectorOnly, PROXY_NAMESPACE, addon.deploymentConfigUse)).toBe(DEFAULTED_NS);
    // An empty agentInstallNamespace: cluster-proxy's own namespace, as upstream's default.
    expect(agentInstallNamespace({ agentInstallNamespace: '' }, PROXY_NAMESPACE, addon.deploymentConfigUse)).toBe(PROXY_NAMESPACE);
  });

  it('upper-case proxy variables on the proxy-agent container only, no CA bundle mount; resources on every matching container', () => {
    const pod = deploymentOf(apply(addon, manifests(), everything)).spec.template;
    const byName = new Map(pod.spec.containers.map((c) => [c.name, c]));
    expect(envNames(byName.get('proxy-agent')!)).toEqual(expect.arrayContaining(['HTTP_PROXY', 'NO_PROXY']));
    expect(envNames(byName.get('proxy-agent')!)).not.toContain('http_proxy');
    expect(envNames(byName.get('proxy-agent')!)).not.toContain('CA_BUNDLE_FILE_PATH');
    for (const [name, c] of byName) {
      if (name !== 'proxy-agent') expect(envNames(c), name).not.toContain('HTTP_PROXY');
      expect(c.resources, name).toEqual({ requests: { cpu: '7m' } });
    }
    expect((pod.spec.volumes ?? []).map((v) => v.name)).not.toContain('proxy-ca-bundle');
  });
});

describe('helloworld takes a config as the addon-framework example', () => {
  const addon = helloworldAddon();
  it('its agent follows agentInstallNamespace and is told where it landed', async () => {
    const values = agentValues(everything, addon.installNamespace, addon.deploymentConfigUse);
    const out = apply(addon, await addon.agentManifests('cluster1', {} as KubeClient, values), everything);
    const d = deploymentOf(out);
    expect(d.metadata.namespace).toBe(DEFAULTED_NS);
    const c = d.spec.template.spec.containers[0]!;
    expect(c.args).toContain(`--addon-namespace=${DEFAULTED_NS}`);
    expect(envNames(c)).toEqual(['HTTP_PROXY', 'NO_PROXY']);
    expect(c.resources).toEqual({ requests: { cpu: '7m' } });
  });
});

describe('an addon that declares nothing takes every field as OCM’s template addons do', () => {
  it('follows the namespace; both spellings of the proxy variables', () => {
    expect(FRAMEWORK_CONFIG_USE).toEqual({ installNamespace: 'follow', nodePlacement: 'apply', proxyConfig: 'template', resourceRequirements: 'apply' });
    expect(agentInstallNamespace({ agentInstallNamespace: 'x' }, 'own')).toBe('x');
    expect(proxyEnv({ httpsProxy: 'http://p' }, 'env')).toEqual([['HTTPS_PROXY', 'http://p']]);
    expect(proxyEnv({ httpsProxy: 'http://p' })).toEqual([
      ['HTTPS_PROXY', 'http://p'],
      ['https_proxy', 'http://p'],
    ]);
  });
});
