import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OCM_LAB_IMAGE } from '../../src/images/catalogue.js';
import { kubectl } from '../support/lab.js';
import { useSharedLab } from '../support/test-lab.js';
import { waitUntil } from '../support/wait.js';

const PROXY_NS = 'open-cluster-management-cluster-proxy';
const MSA_NS = 'open-cluster-management-managed-serviceaccount';
const CONFIG_NS = 'open-cluster-management';
const HASH_ANNOTATION = 'addon.ocm-lab.io/deployment-config-hash';
// The API server fills spec.agentInstallNamespace with this when a config leaves it out. As upstream's,
// cluster-proxy's agent moves there and managed-serviceaccount's stays where it was (it ignores the field).
const DEFAULT_AGENT_NS = 'open-cluster-management-agent-addon';
// kubectl's default for these is v1beta1, where supportedConfigs is spelled defaultConfigs.
const CMA = 'clustermanagementaddons.v1alpha1.addon.open-cluster-management.io';
const MCA = 'managedclusteraddons.v1alpha1.addon.open-cluster-management.io';
// `ocm-lab:<version>` through this mirror is `docker.io/library/ocm-lab:<version>`: another spelling the nodelet runs.
const MIRROR = { source: 'ocm-lab', mirror: 'docker.io/library/ocm-lab' };
const MIRRORED_IMAGE = `docker.io/library/${OCM_LAB_IMAGE}`;

interface ConfigReference {
  group: string;
  resource: string;
  name: string;
  namespace?: string;
  desiredConfig?: { name: string; namespace?: string; specHash: string };
  lastAppliedConfig?: { name: string; namespace?: string; specHash: string };
}
interface Mca {
  status?: { namespace?: string; configReferences?: ConfigReference[]; conditions?: { type: string; status: string; reason: string; message: string }[] };
}
interface Deployment {
  metadata: { generation: number };
  spec: {
    replicas: number;
    template: {
      metadata: { annotations?: Record<string, string> };
      spec: { nodeSelector?: Record<string, string>; containers: { name: string; image: string; args?: string[]; resources?: unknown }[] };
    };
  };
  status?: { readyReplicas?: number; updatedReplicas?: number; observedGeneration?: number };
}

function adcYaml(namespace: string, name: string, variables: Record<string, string>, extra = ''): string {
  return `
apiVersion: addon.open-cluster-management.io/v1alpha1
kind: AddOnDeploymentConfig
metadata: {name: ${name}, namespace: ${namespace}}
spec:
  customizedVariables: [${Object.entries(variables)
    .map(([k, v]) => `{name: ${k}, value: "${v}"}`)
    .join(', ')}]
  registries: [{source: ${MIRROR.source}, mirror: ${MIRROR.mirror}}]
${extra}`;
}

/**
 * AddOnDeploymentConfig on a real lab: for each of our addons a default or per-cluster config
 * reaches the agent on the spoke (customized variable, image through the registries), the
 * ManagedClusterAddOn's configReferences show it, and a changed config rolls the agent.
 */
describe('AddOnDeploymentConfig for cluster-proxy, managed-serviceaccount and cluster-gateway', () => {
  let kubeconfig: string;
  const k = (context: string, args: string[], input?: string) => kubectl(kubeconfig, ['--context', context, ...args], input);
  const ok = async (context: string, args: string[], input?: string) => {
    const r = await k(context, args, input);
    if (r.exitCode !== 0) throw new Error(`kubectl --context ${context} ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const json = async <T>(context: string, args: string[]) => JSON.parse(await ok(context, [...args, '-o', 'json'])) as T;
  const mca = (cluster: string, addon: string) => json<Mca>('hub', ['-n', cluster, 'get', MCA, addon]);
  const deployment = (cluster: string, ns: string, name: string) => json<Deployment>(cluster, ['-n', ns, 'get', 'deployment', name]);
  const adcRef = (m: Mca) => m.status?.configReferences?.find((r) => r.resource === 'addondeploymentconfigs');
  /** The config's desired hash once it is applied (lastAppliedConfig equals desiredConfig, for this config). */
  const appliedHash = (cluster: string, addon: string, name: string, notHash?: string) =>
    waitUntil(
      async () => {
        const ref = adcRef(await mca(cluster, addon));
        const h = ref?.desiredConfig?.specHash;
        return ref?.desiredConfig?.name === name && h && h !== notHash && ref.lastAppliedConfig?.specHash === h ? h : undefined;
      },
      `${cluster}/${addon}: lastAppliedConfig = desiredConfig of AddOnDeploymentConfig ${name}`,
      120_000,
    );
  /** The spoke Deployment once `ready` holds for it and every replica is updated and ready. */
  const rolledOutWhen = (cluster: string, ns: string, name: string, ready: (d: Deployment) => boolean, what: string) =>
    waitUntil(
      async () => {
        const d = await deployment(cluster, ns, name);
        const s = d.status ?? {};
        const done = ready(d) && s.observedGeneration === d.metadata.generation && s.updatedReplicas === d.spec.replicas && s.readyReplicas === d.spec.replicas;
        return done ? d : undefined;
      },
      `${cluster}: Deployment ${ns}/${name} ${what}`,
      180_000,
      1_000,
    );
  /** The spoke Deployment once it runs what `hash` rendered. */
  const rolledOut = (cluster: string, ns: string, name: string, hash: string) =>
    rolledOutWhen(
      cluster,
      ns,
      name,
      (d) => d.spec.template.metadata.annotations?.[HASH_ANNOTATION] === hash,
      `rolled out with config hash ${hash.slice(0, 12)}`,
    );

  const lab = useSharedLab('default', 'test/e2e/addon-deployment-config.test.ts');
  let supportedConfigs: unknown;
  beforeAll(async () => {
    ({ kubeconfig } = lab);
    supportedConfigs = (await json<{ spec: { supportedConfigs?: unknown } }>('hub', ['get', CMA, 'managed-serviceaccount'])).spec.supportedConfigs;
  });

  // The shared lab as this file found it: no configs referenced, none left, the agents back where they were (useSharedLab waits for it).
  afterAll(async () => {
    for (const cluster of ['cluster1', 'cluster2'])
      for (const addon of ['cluster-proxy', 'managed-serviceaccount', 'cluster-gateway'])
        await ok('hub', ['-n', cluster, 'patch', MCA, addon, '--type=merge', '-p', JSON.stringify({ spec: { configs: null } })]);
    await ok('hub', ['patch', CMA, 'managed-serviceaccount', '--type=merge', '-p', JSON.stringify({ spec: { supportedConfigs } })]);
    for (const [ns, name] of [
      ['cluster1', 'proxy-agent'],
      ['cluster2', 'gateway'],
      ['cluster2', 'missing'],
      [CONFIG_NS, 'msa-default'],
      [CONFIG_NS, 'node-only'],
    ])
      await ok('hub', ['-n', ns!, 'delete', 'addondeploymentconfigs', name!, '--ignore-not-found']);
    for (const cluster of ['cluster1', 'cluster2'])
      await rolledOutWhen(cluster, PROXY_NS, 'cluster-proxy-proxy-agent', (d) => !d.spec.template.spec.nodeSelector, 'back in its namespace without a config');
  });

  it('every ClusterManagementAddOn of ours declares AddOnDeploymentConfig in supportedConfigs', async () => {
    for (const addon of ['cluster-proxy', 'managed-serviceaccount', 'cluster-gateway']) {
      const cma = await json<{ spec: { supportedConfigs?: { group: string; resource: string }[] } }>('hub', ['get', CMA, addon]);
      expect(cma.spec.supportedConfigs, addon).toContainEqual(
        expect.objectContaining({ group: 'addon.open-cluster-management.io', resource: 'addondeploymentconfigs' }),
      );
    }
  });

  it("a ManagedCluster's image-registries annotation rewrites every agent image on that cluster only; removing it restores them", async () => {
    /** The agent Deployment once every container runs `image`. */
    const runs = (cluster: string, ns: string, name: string, image: string) =>
      rolledOutWhen(cluster, ns, name, (d) => d.spec.template.spec.containers.every((c) => c.image === image), `running ${image}`);
    const agents: [string, string][] = [
      [PROXY_NS, 'cluster-proxy-proxy-agent'],
      [MSA_NS, 'managed-serviceaccount-addon-agent'],
    ];
    const annotation = 'open-cluster-management.io/image-registries';
    await ok('hub', ['annotate', 'managedcluster', 'cluster1', `${annotation}=${JSON.stringify({ registries: [MIRROR] })}`]);
    for (const [ns, name] of agents) await runs('cluster1', ns, name, MIRRORED_IMAGE);
    for (const [ns, name] of agents) {
      const other = await deployment('cluster2', ns, name);
      expect(
        other.spec.template.spec.containers.map((c) => c.image),
        `cluster2 ${name}`,
      ).toEqual(other.spec.template.spec.containers.map(() => OCM_LAB_IMAGE));
    }
    await ok('hub', ['annotate', 'managedcluster', 'cluster1', `${annotation}-`]);
    for (const [ns, name] of agents) await runs('cluster1', ns, name, OCM_LAB_IMAGE);
  });

  it('cluster-proxy: a per-cluster config sets the agent replicas, image, resources and namespace, on that cluster only; a change rolls the agent', async () => {
    await ok(
      'hub',
      ['apply', '-f', '-'],
      adcYaml(
        'cluster1',
        'proxy-agent',
        { replicas: '2' },
        "  resourceRequirements: [{containerID: 'deployments:*:proxy-agent', resources: {requests: {cpu: 5m}}}]\n",
      ),
    );
    await ok('hub', [
      '-n',
      'cluster1',
      'patch',
      MCA,
      'cluster-proxy',
      '--type=merge',
      '-p',
      JSON.stringify({
        spec: { configs: [{ group: 'addon.open-cluster-management.io', resource: 'addondeploymentconfigs', namespace: 'cluster1', name: 'proxy-agent' }] },
      }),
    ]);
    const hash = await appliedHash('cluster1', 'cluster-proxy', 'proxy-agent');
    const d = await rolledOut('cluster1', DEFAULT_AGENT_NS, 'cluster-proxy-proxy-agent', hash);
    expect(d.spec.replicas).toBe(2);
    await waitUntil(
      async () => ((await k('cluster1', ['get', 'namespace', PROXY_NS])).exitCode !== 0 ? true : undefined),
      `namespace ${PROXY_NS} removed from cluster1`,
      120_000,
    );
    expect((await mca('cluster1', 'cluster-proxy')).status?.namespace).toBe(DEFAULT_AGENT_NS);
    expect(d.spec.template.spec.containers[0]!.image).toBe(MIRRORED_IMAGE);
    expect(d.spec.template.spec.containers[0]!.resources).toEqual({ requests: { cpu: '5m' } });
    const other = await deployment('cluster2', PROXY_NS, 'cluster-proxy-proxy-agent');
    expect(other.spec.template.spec.containers[0]!.image).toBe(OCM_LAB_IMAGE);
    expect(other.spec.template.metadata.annotations?.[HASH_ANNOTATION]).toBeUndefined();
    expect((await mca('cluster1', 'cluster-proxy')).status?.conditions?.find((c) => c.type === 'Configured')?.status).toBe('True');

    await ok('hub', ['apply', '-f', '-'], adcYaml('cluster1', 'proxy-agent', { replicas: '1' }));
    const changed = await appliedHash('cluster1', 'cluster-proxy', 'proxy-agent', hash);
    const rolled = await rolledOut('cluster1', DEFAULT_AGENT_NS, 'cluster-proxy-proxy-agent', changed);
    expect(rolled.spec.replicas).toBe(1);
    expect(rolled.metadata.generation).toBeGreaterThan(d.metadata.generation);
    expect(rolled.spec.template.spec.containers[0]!.resources ?? {}).toEqual({});
  });

  /** A token Secret of a new ManagedServiceAccount on the hub: the `sub` of its token (system:serviceaccount:<namespace>:<name>). */
  const msaTokenSubject = async (cluster: string, name: string) => {
    await ok(
      'hub',
      ['apply', '-f', '-'],
      `apiVersion: authentication.open-cluster-management.io/v1beta1
kind: ManagedServiceAccount
metadata: {name: ${name}, namespace: ${cluster}}
spec: {rotation: {enabled: true}}
`,
    );
    const token = await waitUntil(
      async () => {
        const r = await k('hub', ['-n', cluster, 'get', 'secret', name, '-o', 'jsonpath={.data.token}']);
        return r.exitCode === 0 && r.stdout ? Buffer.from(r.stdout, 'base64').toString('utf8') : undefined;
      },
      `the token Secret ${cluster}/${name} on the hub`,
      60_000,
    );
    return (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as { sub?: string }).sub;
  };

  it('managed-serviceaccount: a default config on the ClusterManagementAddOn reaches every cluster, and its agent and ServiceAccounts stay in their namespace; a change rolls the agents', async () => {
    // No agentInstallNamespace: the API server fills in the default; upstream's managed-serviceaccount ignores it.
    await ok('hub', ['apply', '-f', '-'], adcYaml(CONFIG_NS, 'msa-default', { resyncInterval: '1s' }));
    await ok('hub', [
      'patch',
      CMA,
      'managed-serviceaccount',
      '--type=merge',
      '-p',
      JSON.stringify({
        spec: {
          supportedConfigs: [
            { group: 'addon.open-cluster-management.io', resource: 'addondeploymentconfigs', defaultConfig: { namespace: CONFIG_NS, name: 'msa-default' } },
          ],
        },
      }),
    ]);
    const first: Record<string, string> = {};
    for (const cluster of ['cluster1', 'cluster2']) {
      const hash = await appliedHash(cluster, 'managed-serviceaccount', 'msa-default');
      const d = await rolledOut(cluster, MSA_NS, 'managed-serviceaccount-addon-agent', hash);
      expect(d.spec.template.spec.containers[0]!.image).toBe(MIRRORED_IMAGE);
      expect(d.spec.template.spec.containers[0]!.args).toContain('--resync-interval=1s');
      expect((await mca(cluster, 'managed-serviceaccount')).status?.namespace).toBe(MSA_NS);
      first[cluster] = hash;
    }
    expect((await k('cluster1', ['-n', DEFAULT_AGENT_NS, 'get', 'deployment', 'managed-serviceaccount-addon-agent'])).exitCode).not.toBe(0);
    // A ManagedServiceAccount gets a token of a ServiceAccount in the agent's own namespace, as users' RBAC bindings name it.
    expect(await msaTokenSubject('cluster1', 'stays')).toBe(`system:serviceaccount:${MSA_NS}:stays`);
    await ok('cluster1', ['-n', MSA_NS, 'get', 'serviceaccount', 'stays']);
    // The default survives the manager's next passes (it keeps a default a user set).
    expect(JSON.stringify((await json<{ spec: unknown }>('hub', ['get', CMA, 'managed-serviceaccount'])).spec)).toContain('msa-default');

    // A namespace named outright is ignored too; the changed variable rolls the agents in place.
    await ok('hub', ['apply', '-f', '-'], adcYaml(CONFIG_NS, 'msa-default', { resyncInterval: '3s' }, '  agentInstallNamespace: somewhere-else\n'));
    for (const cluster of ['cluster1', 'cluster2']) {
      const hash = await appliedHash(cluster, 'managed-serviceaccount', 'msa-default', first[cluster]);
      const d = await rolledOut(cluster, MSA_NS, 'managed-serviceaccount-addon-agent', hash);
      expect(d.spec.template.spec.containers[0]!.args).toContain('--resync-interval=3s');
    }
    expect((await k('cluster1', ['get', 'namespace', 'somewhere-else'])).exitCode).not.toBe(0);
    await ok('hub', ['-n', 'cluster1', 'delete', 'managedserviceaccounts.authentication.open-cluster-management.io', 'stays']);
  });

  it('cluster-gateway: nothing runs on the clusters, so a config is applied at once and its variable works on the hub', async () => {
    await ok('hub', ['apply', '-f', '-'], adcYaml('cluster2', 'gateway', { probeTimeout: '3s' }));
    await ok('hub', [
      '-n',
      'cluster2',
      'patch',
      MCA,
      'cluster-gateway',
      '--type=merge',
      '-p',
      JSON.stringify({
        spec: { configs: [{ group: 'addon.open-cluster-management.io', resource: 'addondeploymentconfigs', namespace: 'cluster2', name: 'gateway' }] },
      }),
    ]);
    await appliedHash('cluster2', 'cluster-gateway', 'gateway');
    await waitUntil(
      async () => ((await mca('cluster2', 'cluster-gateway')).status?.conditions?.find((c) => c.type === 'Available')?.status === 'True' ? true : undefined),
      'cluster-gateway Available on cluster2',
      60_000,
    );
  });

  it('a config that does not exist or has a bad variable leaves the agent as it was and says why', async () => {
    const before = await deployment('cluster2', PROXY_NS, 'cluster-proxy-proxy-agent');
    await ok('hub', [
      '-n',
      'cluster2',
      'patch',
      MCA,
      'cluster-proxy',
      '--type=merge',
      '-p',
      JSON.stringify({
        spec: { configs: [{ group: 'addon.open-cluster-management.io', resource: 'addondeploymentconfigs', namespace: 'cluster2', name: 'missing' }] },
      }),
    ]);
    const configured = await waitUntil(
      async () => {
        const c = (await mca('cluster2', 'cluster-proxy')).status?.conditions?.find((x) => x.type === 'Configured');
        return c?.status === 'False' ? c : undefined;
      },
      'Configured=False for a missing config',
      60_000,
    );
    expect(configured.message).toMatch(/AddOnDeploymentConfig cluster2\/missing does not exist/);

    await ok('hub', ['apply', '-f', '-'], adcYaml('cluster2', 'missing', { replicas: 'many' }));
    await waitUntil(
      async () =>
        (await mca('cluster2', 'cluster-proxy')).status?.conditions?.find((x) => x.type === 'Configured')?.message.includes('replicas="many"')
          ? true
          : undefined,
      'Configured names the bad variable',
      60_000,
    );
    const after = await deployment('cluster2', PROXY_NS, 'cluster-proxy-proxy-agent');
    expect(after.metadata.generation).toBe(before.metadata.generation);
  });
  it("a nodeSelector-only config leaves managed-serviceaccount's agent and ServiceAccounts where they were and moves cluster-proxy's, as upstream", async () => {
    const nodeSelector = { 'kubernetes.io/os': 'linux' };
    await ok(
      'hub',
      ['apply', '-f', '-'],
      `apiVersion: addon.open-cluster-management.io/v1alpha1
kind: AddOnDeploymentConfig
metadata: {name: node-only, namespace: ${CONFIG_NS}}
spec:
  nodePlacement: {nodeSelector: ${JSON.stringify(nodeSelector)}}
`,
    );
    // What a user meets: the API server filled in the install namespace they never wrote.
    const adc = await json<{ spec: { agentInstallNamespace?: string } }>('hub', ['-n', CONFIG_NS, 'get', 'addondeploymentconfigs', 'node-only']);
    expect(adc.spec.agentInstallNamespace).toBe(DEFAULT_AGENT_NS);
    const configs = [{ group: 'addon.open-cluster-management.io', resource: 'addondeploymentconfigs', namespace: CONFIG_NS, name: 'node-only' }];
    for (const addon of ['managed-serviceaccount', 'cluster-proxy'])
      await ok('hub', ['-n', 'cluster2', 'patch', MCA, addon, '--type=merge', '-p', JSON.stringify({ spec: { configs } })]);

    const msaHash = await appliedHash('cluster2', 'managed-serviceaccount', 'node-only');
    const msa = await rolledOut('cluster2', MSA_NS, 'managed-serviceaccount-addon-agent', msaHash);
    expect(msa.spec.template.spec.nodeSelector).toEqual(nodeSelector);
    expect((await mca('cluster2', 'managed-serviceaccount')).status?.namespace).toBe(MSA_NS);
    expect((await k('cluster2', ['-n', DEFAULT_AGENT_NS, 'get', 'deployment', 'managed-serviceaccount-addon-agent'])).exitCode).not.toBe(0);
    expect(await msaTokenSubject('cluster2', 'node-only')).toBe(`system:serviceaccount:${MSA_NS}:node-only`);
    await ok('cluster2', ['-n', MSA_NS, 'get', 'serviceaccount', 'node-only']);

    const proxyHash = await appliedHash('cluster2', 'cluster-proxy', 'node-only');
    const proxy = await rolledOut('cluster2', DEFAULT_AGENT_NS, 'cluster-proxy-proxy-agent', proxyHash);
    expect(proxy.spec.template.spec.nodeSelector).toEqual(nodeSelector);
    expect((await mca('cluster2', 'cluster-proxy')).status?.namespace).toBe(DEFAULT_AGENT_NS);
    await waitUntil(
      async () => ((await k('cluster2', ['get', 'namespace', PROXY_NS])).exitCode !== 0 ? true : undefined),
      `namespace ${PROXY_NS} removed from cluster2`,
      120_000,
    );
    await ok('hub', ['-n', 'cluster2', 'delete', 'managedserviceaccounts.authentication.open-cluster-management.io', 'node-only']);
  });
});
