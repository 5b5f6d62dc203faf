import type { KubeObject } from '../../kube/objects.js';
import type { AddOnDeploymentConfigSpec, ContainerResourceRequirements } from './deployment-config.js';
import type { AgentValues, DeploymentConfigUse } from './types.js';

/**
 * How an AddOnDeploymentConfig changes the agent objects an addon renders, field by field as the
 * addon's DeploymentConfigUse says (upstream's addons each take a different subset): node
 * placement and resources on pod templates, proxy variables on containers, everything of the
 * install namespace moved to agentInstallNamespace, and always a pod-template annotation with the
 * config's spec hash so a changed config rolls the agents. Images go through image-registries.ts,
 * with the cluster's annotation.
 */

/** Every field, as OCM's AddOnTemplate addons take them: the rule for an addon that declares none. */
export const FRAMEWORK_CONFIG_USE: DeploymentConfigUse = {
  installNamespace: 'follow',
  nodePlacement: 'apply',
  proxyConfig: 'template',
  resourceRequirements: 'apply',
};

/** On every agent pod template: the spec hash of the AddOnDeploymentConfig it was rendered with. */
export const CONFIG_HASH_ANNOTATION = 'addon.ocm-lab.io/deployment-config-hash';

/** Where a proxy CA bundle reaches the containers (upstream's ConfigMap name, key and mount path). */
const PROXY_CA = { mountPath: '/managed/proxy-ca', key: 'ca-bundle.crt', volume: 'proxy-ca-bundle', configMap: (addon: string) => `${addon}-proxy-ca` };

/** Where the agent lands: the config's agentInstallNamespace when the addon follows it and it is not empty, else the addon's own. */
export function agentInstallNamespace(
  spec: AddOnDeploymentConfigSpec | undefined,
  defaultNamespace: string,
  use: DeploymentConfigUse = FRAMEWORK_CONFIG_USE,
): string {
  return (use.installNamespace === 'follow' && spec?.agentInstallNamespace) || defaultNamespace;
}

/** The values an addon renders its agent with: the customized variables and the namespace its agent lands in. */
export function agentValues(
  spec: AddOnDeploymentConfigSpec | undefined,
  defaultNamespace: string,
  use: DeploymentConfigUse = FRAMEWORK_CONFIG_USE,
): AgentValues {
  const variables: Record<string, string> = {};
  for (const v of spec?.customizedVariables ?? []) variables[v.name] = v.value ?? '';
  return { variables, installNamespace: agentInstallNamespace(spec, defaultNamespace, use) };
}

/** Checks every containerID is `<resource>:<name>:<container>` (each part a name or `*`); returns the first problem. */
export function containerIdProblem(requirements: ContainerResourceRequirements[] | undefined): string | undefined {
  for (const [i, r] of (requirements ?? []).entries()) {
    const parts = (r.containerID ?? '').split(':');
    if (parts.length !== 3 || parts.some((p) => p === '')) {
      return `spec.resourceRequirements[${i}].containerID ${JSON.stringify(r.containerID)} is not <resource>:<name>:<container> (e.g. deployments:*:*)`;
    }
  }
  return undefined;
}

/** The resources for one container: the last requirement whose containerID matches (`*` matches any one part). */
export function containerResources(
  requirements: ContainerResourceRequirements[] | undefined,
  resource: string,
  workload: string,
  container: string,
): ContainerResourceRequirements['resources'] | undefined {
  const id = [resource, workload, container];
  const list = requirements ?? [];
  for (const r of [...list].reverse()) {
    const parts = r.containerID.split(':');
    if (parts.length === 3 && parts.every((p, j) => p === '*' || p === id[j])) return r.resources;
  }
  return undefined;
}

interface Container {
  name: string;
  image?: string;
  env?: { name: string; value?: string; valueFrom?: unknown }[];
  resources?: unknown;
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
}

interface PodSpec {
  containers?: Container[];
  initContainers?: Container[];
  nodeSelector?: Record<string, string>;
  tolerations?: unknown[];
  volumes?: Record<string, unknown>[];
}

interface PodTemplate {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: PodSpec;
}

/** The pod template of a workload object and the resource name its containerIDs use; undefined for other kinds. */
export function podTemplateOf(obj: KubeObject): { template: PodTemplate; resource: string } | undefined {
  const spec = (obj as { spec?: Record<string, unknown> }).spec;
  if (!spec) return undefined;
  switch (obj.kind) {
    case 'Deployment':
    case 'DaemonSet':
    case 'StatefulSet':
    case 'ReplicaSet':
    case 'Job':
      return spec.template ? { template: spec.template as PodTemplate, resource: `${obj.kind.toLowerCase()}s` } : undefined;
    case 'CronJob': {
      const t = (spec.jobTemplate as { spec?: { template?: PodTemplate } } | undefined)?.spec?.template;
      return t ? { template: t, resource: 'cronjobs' } : undefined;
    }
    default:
      return undefined;
  }
}

function setEnv(container: Container, name: string, value: string): void {
  const env = (container.env ??= []);
  const i = env.findIndex((e) => e.name === name);
  if (i === -1) env.push({ name, value });
  else env[i] = { name, value };
}

/**
 * The proxy variables upstream sets: both spellings (`template`, OCM's template addons) or the
 * upper-case ones only (`env`, the addon-framework example and cluster-proxy); none unless an
 * HTTP or HTTPS proxy is given.
 */
export function proxyEnv(proxy: AddOnDeploymentConfigSpec['proxyConfig'], spelling: 'template' | 'env' = 'template'): [string, string][] {
  if (!proxy) return [];
  const both = (name: string, value: string): [string, string][] =>
    spelling === 'template'
      ? [
          [name, value],
          [name.toLowerCase(), value],
        ]
      : [[name, value]];
  const pairs: [string, string][] = [];
  if (proxy.httpProxy) pairs.push(...both('HTTP_PROXY', proxy.httpProxy));
  if (proxy.httpsProxy) pairs.push(...both('HTTPS_PROXY', proxy.httpsProxy));
  if (!pairs.length) return [];
  if (proxy.noProxy) pairs.push(...both('NO_PROXY', proxy.noProxy));
  return pairs;
}

/** The API's caBundle is base64 bytes; a PEM given as plain text is taken as it is. */
function caBundleText(caBundle: string | undefined): string {
  if (!caBundle) return '';
  if (caBundle.includes('-----BEGIN')) return caBundle;
  return Buffer.from(caBundle, 'base64').toString('utf8');
}

function moveNamespace(obj: KubeObject, from: string, to: string): KubeObject {
  if (from === to) return obj;
  const moved: KubeObject = { ...obj, metadata: { ...obj.metadata } };
  if (obj.kind === 'Namespace' && obj.metadata.name === from) moved.metadata.name = to;
  if (obj.metadata.namespace === from) moved.metadata.namespace = to;
  const subjects = (obj as { subjects?: { namespace?: string }[] }).subjects;
  if ((obj.kind === 'RoleBinding' || obj.kind === 'ClusterRoleBinding') && subjects) {
    (moved as { subjects?: unknown[] }).subjects = subjects.map((s) => (s.namespace === from ? { ...s, namespace: to } : s));
  }
  return moved;
}

export interface ApplyContext {
  addonName: string;
  /** The addon's own install namespace (what its manifests use). */
  defaultNamespace: string;
  /** Which fields the addon takes (default: every one, FRAMEWORK_CONFIG_USE). */
  use?: DeploymentConfigUse;
}

/**
 * The agent manifests with the config applied; the input is left untouched. With no config
 * (null) the manifests come back as they are.
 */
export function applyDeploymentConfig(
  manifests: KubeObject[],
  config: { spec: AddOnDeploymentConfigSpec; specHash: string } | null,
  ctx: ApplyContext,
): KubeObject[] {
  if (!config) return manifests;
  const { spec } = config;
  const use = ctx.use ?? FRAMEWORK_CONFIG_USE;
  const namespace = agentInstallNamespace(spec, ctx.defaultNamespace, use);
  const proxy = use.proxyConfig === 'ignore' ? [] : proxyEnv(spec.proxyConfig, use.proxyConfig);
  const proxied = (c: Container) => !use.proxyContainers || use.proxyContainers.includes(c.name);
  const caBundle = proxy.length && use.proxyConfig === 'template' ? caBundleText(spec.proxyConfig?.caBundle) : '';
  const placement = use.nodePlacement === 'apply' ? spec.nodePlacement : undefined;
  const requirements = use.resourceRequirements === 'apply' ? spec.resourceRequirements : undefined;
  const out: KubeObject[] = [];
  for (const original of manifests) {
    const obj = moveNamespace(structuredClone(original), ctx.defaultNamespace, namespace);
    const workload = podTemplateOf(obj);
    if (workload) {
      const { template, resource } = workload;
      template.metadata = { ...template.metadata, annotations: { ...template.metadata?.annotations, [CONFIG_HASH_ANNOTATION]: config.specHash } };
      const pod = (template.spec ??= {});
      if (placement?.nodeSelector) pod.nodeSelector = { ...placement.nodeSelector };
      if (placement?.tolerations) pod.tolerations = structuredClone(placement.tolerations);
      for (const c of pod.containers ?? []) {
        if (proxied(c)) for (const [name, value] of proxy) setEnv(c, name, value);
        if (caBundle && proxied(c)) {
          setEnv(c, 'CA_BUNDLE_FILE_PATH', `${PROXY_CA.mountPath}/${PROXY_CA.key}`);
          c.volumeMounts = [
            ...(c.volumeMounts ?? []).filter((m) => m.name !== PROXY_CA.volume),
            { name: PROXY_CA.volume, mountPath: PROXY_CA.mountPath, readOnly: true },
          ];
        }
        const resources = containerResources(requirements, resource, obj.metadata.name, c.name);
        if (resources) c.resources = structuredClone(resources);
      }
      if (caBundle)
        pod.volumes = [
          ...(pod.volumes ?? []).filter((v) => v.name !== PROXY_CA.volume),
          { name: PROXY_CA.volume, configMap: { name: PROXY_CA.configMap(ctx.addonName) } },
        ];
    }
    out.push(obj);
  }
  if (caBundle && out.some((o) => podTemplateOf(o))) {
    out.push({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: PROXY_CA.configMap(ctx.addonName), namespace },
      data: { [PROXY_CA.key]: caBundle },
    } as KubeObject);
  }
  return out;
}
