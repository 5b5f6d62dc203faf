import fs from 'node:fs/promises';
import path from 'node:path';
import yargs, { type Argv } from 'yargs';
import { describe, expect, it } from 'vitest';
import type { BuiltinAddon } from '../../src/addons/builtin.js';
import { disableAddon, enableAddon, enabledPerCluster, knownAddon, listedAddons, strategyForNewInstall } from '../../src/addons/enablement.js';
import { managerObjects } from '../../src/addons/install.js';
import { addonSteps } from '../../src/addons/lab-addons.js';
import { addonInstall, placementObjects } from '../../src/addons/placements.js';
import { addonVocabulary, BUILTIN_ADDONS, builtinAddonNames } from '../../src/addons/registry.js';
import { addonRemoval, uninstallAddons } from '../../src/addons/uninstall.js';
import { addonManagerCommand } from '../../src/cli/commands/internal/addon-manager.js';
import { planInstalls, renderInstalls } from '../../src/cli/dry-run/installs.js';
import { defaultLabConfig, DEFAULT_ADDONS, parseLabConfig, validateLabFile } from '../../src/config/index.js';
import { InvalidInputError } from '../../src/errors.js';
import { parseScenario } from '../../src/scenario/parse.js';
import type { InstallContext } from '../../src/ocm/install-context.js';
import { clusterRole, deployment, namespace } from '../../src/kube/builders.js';
import { ApiError, type KubeClient } from '../../src/kube/client.js';
import { objectPath, type KubeObject } from '../../src/kube/objects.js';
import '../support/addon-vocabulary.js';
import { VALID_LAB_FILE } from '../support/lab-file.js';
import { useTempDir } from '../support/temp-dir.js';

// A throw-away fifth built-in addon, as a new addon's folder would define it (its builtin.ts), and
// its one line in the registry: generic code, lab files and scenarios must see it without any other edit.
const ECHO = 'echo';
const ECHO_HUB_NAMESPACE = 'echo-system';
const ECHO_AGENT_NAMESPACE = 'echo-agent';
const echoServer = deployment({
  name: 'echo-server',
  namespace: ECHO_HUB_NAMESPACE,
  labels: { app: 'echo-server' },
  containers: [{ name: 'echo', image: 'echo:1' }],
});
const echoLeftover: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'echoed', namespace: ECHO_AGENT_NAMESPACE, labels: { echoed: '' } } };

const echoAddon: BuiltinAddon = {
  name: ECHO,
  requires: { addons: ['cluster-proxy'], why: 'it echoes through the tunnel' },
  managerRules: [{ apiGroups: ['echo.example.io'], resources: ['echoes'], verbs: ['*'] }],
  managerArgs: ({ hubAddress }) => [`--echo-hub=${hubAddress}`],
  managerObjects: () => [clusterRole('echo-extra', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }])],
  managerFlags: { 'echo-greeting': { describe: 'echo: what its agents say' } },
  definition: async (flags) => ({
    name: ECHO,
    displayName: 'echo',
    description: flags['echo-greeting'] ?? 'says hello',
    installNamespace: ECHO_AGENT_NAMESPACE,
    hubPermissions: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }],
    agentManifests: async () => [],
  }),
  install: { type: 'Placements', placements: [{ name: 'echo-placement', namespace: ECHO_HUB_NAMESPACE }] },
  placementSpec: { predicates: [{ requiredClusterSelector: { labelSelector: { matchLabels: { echo: 'yes' } } } }] },
  agentNamespaces: [ECHO_AGENT_NAMESPACE],
  hubNamespaces: [ECHO_HUB_NAMESPACE],
  enabledPerCluster: true,
  hub: {
    plan: [`Deployment ${ECHO_HUB_NAMESPACE}/echo-server`],
    workloads: async () => [echoServer],
  },
  clusterLeftovers: { stays: 'the echoed ConfigMaps', title: 'echoed ConfigMaps', find: async () => [echoLeftover] },
};

BUILTIN_ADDONS.echo = echoAddon;

const SPOKES = ['cluster1', 'cluster2'];

/** A cluster's API in memory: objects by path; lists of a collection (with a name or label selector); writes recorded. */
function fakeCluster(objects: KubeObject[] = []) {
  const store = new Map(objects.map((o) => [objectPath(o), o]));
  const deleted: string[] = [];
  const notFound = (path: string) => new ApiError(404, 'NotFound', `GET ${path}: 404 NotFound`);
  const inCollection = (path: string, collection: string) => {
    const parent = path.slice(0, path.lastIndexOf('/'));
    return parent === collection || parent.replace(/\/namespaces\/[^/]+\//, '/') === collection;
  };
  const client = {
    get: async (path: string, query?: { labelSelector?: string; fieldSelector?: string }) => {
      const found = store.get(path);
      if (found) return found;
      const items = [...store].filter(([p]) => inCollection(p, path)).map(([, o]) => o);
      if (!query && !items.length) throw notFound(path);
      const name = query?.fieldSelector?.replace('metadata.name=', '');
      const [key, value] = (query?.labelSelector ?? '').split('=');
      return {
        items: items.filter(
          (o) => (!name || o.metadata.name === name) && (!key || (value === undefined ? key in (o.metadata.labels ?? {}) : o.metadata.labels?.[key] === value)),
        ),
      };
    },
    post: async (collection: string, body: KubeObject) => {
      const available = [
        { type: 'ManifestApplied', status: 'True' },
        { type: 'Available', status: 'True' },
      ];
      store.set(`${collection}/${body.metadata.name}`, body.kind === 'ManagedClusterAddOn' ? { ...body, status: { conditions: available } } : body);
      return body;
    },
    put: async (path: string, body: KubeObject) => store.set(path, body).get(path),
    delete: async (path: string) => {
      if (!store.delete(path)) throw notFound(path);
      deleted.push(path);
      return {};
    },
    close: () => undefined,
  } as unknown as KubeClient;
  return { client, store, deleted };
}

const mca = (cluster: string): KubeObject => ({
  apiVersion: 'addon.open-cluster-management.io/v1alpha1',
  kind: 'ManagedClusterAddOn',
  metadata: { name: ECHO, namespace: cluster },
});
const cma = (strategy: unknown): KubeObject & { spec: unknown } => ({
  apiVersion: 'addon.open-cluster-management.io/v1alpha1',
  kind: 'ClusterManagementAddOn',
  metadata: { name: ECHO },
  spec: { installStrategy: strategy },
});

describe('a fifth built-in addon, registered with one line', () => {
  it('is known by name, after the four, in registry order', () => {
    expect(builtinAddonNames()).toEqual(['cluster-proxy', 'managed-serviceaccount', 'cluster-gateway', 'helloworld', ECHO]);
    expect(knownAddon('echo')).toBe(ECHO);
    expect(() => knownAddon('nope')).toThrow('known addons: cluster-proxy, managed-serviceaccount, cluster-gateway, helloworld, echo');
  });

  it('gets its manager with its flags and objects, and every manager gets its rules', () => {
    const objects = managerObjects(ECHO, '10.0.0.9');
    const manager = objects.find((o) => o.kind === 'Deployment') as KubeObject & { spec: { template: { spec: { containers: { args: string[] }[] } } } };
    expect(manager.metadata).toMatchObject({ name: 'echo-addon-manager', namespace: 'open-cluster-management-addon' });
    expect(manager.spec.template.spec.containers[0]!.args).toEqual(['internal', 'addon-manager', '--addon=echo', '--echo-hub=10.0.0.9']);
    expect(objects.some((o) => o.kind === 'ClusterRole' && o.metadata.name === 'echo-extra')).toBe(true);
    const rulesOf = (addon: string) => managerObjects(addon, '').find((o) => o.kind === 'ClusterRole')!.rules as unknown[];
    expect(rulesOf('helloworld')).toContainEqual({ apiGroups: ['echo.example.io'], resources: ['echoes'], verbs: ['*'] });
    expect(managerObjects('cluster-proxy', '').some((o) => o.metadata.name === 'echo-extra')).toBe(false);
  });

  it('`internal addon-manager` takes its flags', async () => {
    const y = (addonManagerCommand.builder as (y: Argv) => Argv)(yargs([]));
    expect(await y.getHelp()).toContain('echo: what its agents say');
    expect(await y.parse(['--addon=echo', '--echo-greeting=hi'])).toMatchObject({ addon: 'echo', 'echo-greeting': 'hi' });
    const definition = await echoAddon.definition({ 'echo-greeting': 'hi' }, () => undefined);
    expect(definition.description).toBe('hi');
  });

  it('has its default strategy and Placement', () => {
    expect(addonInstall('echo')).toEqual(echoAddon.install);
    expect(placementObjects('echo').map((o) => `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`)).toEqual([
      `ManagedClusterSetBinding ${ECHO_HUB_NAMESPACE}/global`,
      `Placement ${ECHO_HUB_NAMESPACE}/echo-placement`,
    ]);
    expect(placementObjects('echo')[1]!.spec).toEqual({ clusterSets: ['global'], ...echoAddon.placementSpec });
    expect(strategyForNewInstall(ECHO, ['cluster1'])).toEqual({ type: 'Manual' });
    expect(strategyForNewInstall(ECHO, undefined)).toEqual(echoAddon.install);
  });

  describe('a lab file names it', () => {
    const dir = useTempDir('ocm-lab-echo-');
    const labFile = async (addons: string): Promise<string> => {
      const file = path.join(dir.path, 'lab.yaml');
      await fs.writeFile(file, `addons: [${addons}]\n${VALID_LAB_FILE}`);
      return file;
    };
    const refusal = async (file: string): Promise<InvalidInputError> => {
      const err = await validateLabFile(file).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InvalidInputError);
      return err as InvalidInputError;
    };

    it('and validateLabFile takes it, with what it requires', async () => {
      const lab = await validateLabFile(await labFile('cluster-proxy, echo'));
      expect(lab.addons).toEqual(['cluster-proxy', ECHO]);
      expect(lab.addonImplementations).toEqual({});
    });

    it("and its `requires` is the lab file's rule: without cluster-proxy the file is refused at its line", async () => {
      const file = await labFile('managed-serviceaccount, echo');
      expect((await refusal(file)).message).toContain(
        `${file}:1: addons[1] = "echo": needs cluster-proxy in the same lab (it echoes through the tunnel); add cluster-proxy`,
      );
    });

    it('and a misspelt name is refused with the registry’s names, echo among them', async () => {
      const file = await labFile('cluster-proxy, ehco');
      expect((await refusal(file)).message).toContain(
        `${file}:1: addons[1] = "ehco": is not an addon ocm-lab knows; use one of: cluster-proxy, managed-serviceaccount, cluster-gateway, helloworld, echo`,
      );
    });
  });

  it("is an addon a scenario's `requires.addons` may name", () => {
    const doc = '---\ntitle: Echo\nsummary: It echoes.\nrequires:\n  addons: [cluster-proxy, echo]\n---\n\n```sh\ntrue\n```\n';
    expect(parseScenario(doc, 'echo.md').requires.addons).toEqual(['cluster-proxy', ECHO]);
    expect(() => parseScenario(doc.replace('echo]', 'ehco]'), 'echo.md')).toThrow(
      "echo.md:5: front matter field 'requires.addons[1]' ('ehco') is not an addon ocm-lab knows (cluster-proxy, managed-serviceaccount, cluster-gateway, helloworld, echo)",
    );
  });

  it('is in `up --dry-run` and in the steps of up when the lab names it', () => {
    const config = parseLabConfig(`addons: [${[...DEFAULT_ADDONS, ECHO].join(', ')}]\n${VALID_LAB_FILE}`, 'lab.yaml', addonVocabulary());
    const plan = planInstalls(config);
    expect(plan.addons.map((a) => a.name)).toEqual([...DEFAULT_ADDONS, ECHO]);
    expect(plan.addons.find((a) => a.name === ECHO)).toMatchObject({
      implementation: 'ocm-lab',
      manager: { namespace: 'open-cluster-management-addon', name: 'echo-addon-manager' },
      hub: [`Deployment ${ECHO_HUB_NAMESPACE}/echo-server`],
    });
    expect(renderInstalls(plan, 'up', true)).toMatch(
      /^ {2}echo {2}implementation=ocm-lab {2}manager open-cluster-management-addon\/echo-addon-manager .*, Deployment echo-system\/echo-server;/m,
    );
    const steps = addonSteps()[0]!.children!({ config } as InstallContext);
    expect(steps.map((s) => s.title)).toEqual([...DEFAULT_ADDONS, ECHO]);
    expect(planInstalls(defaultLabConfig()).addons.map((a) => a.name)).not.toContain(ECHO);
  });

  it('`addon enable --cluster` installs it Manual and creates its ManagedClusterAddOns with its install namespace', async () => {
    expect(enabledPerCluster(ECHO)).toBe(true);
    const hub = fakeCluster();
    const result = await enableAddon(hub.client, { addon: ECHO, spokes: SPOKES, clusters: ['cluster1'], timeoutMs: 1_000 });
    expect(result).toMatchObject({ addon: ECHO, managerInstalled: true, createdOn: ['cluster1'] });
    expect(hub.store.get(objectPath(cma(null)))).toMatchObject({ spec: { installStrategy: { type: 'Manual' } } });
    expect(hub.store.get(objectPath(mca('cluster1')))).toMatchObject({ spec: { installNamespace: ECHO_AGENT_NAMESPACE } });
    expect(hub.store.has('/apis/rbac.authorization.k8s.io/v1/clusterroles/echo-extra')).toBe(true);
    expect(await listedAddons(hub.client, ['cluster-proxy'])).toEqual(['cluster-proxy', ECHO]);
  });

  it('`addon disable` removes it, what its agent left on the cluster, and at last its manager', async () => {
    const hub = fakeCluster([cma({ type: 'Manual' }), mca('cluster1'), ...managerObjects(ECHO, '')]);
    const spoke = fakeCluster([echoLeftover, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'echo-hub-kubeconfig', namespace: ECHO_AGENT_NAMESPACE } }]);
    const result = await disableAddon(hub.client, {
      addon: ECHO,
      spokes: SPOKES,
      clusters: ['cluster1', 'cluster2'],
      spokeClient: async () => spoke.client,
      timeoutMs: 1_000,
    });
    expect(result).toMatchObject({ addon: ECHO, disabledOn: ['cluster1', 'cluster2'], managerRemoved: true });
    expect(spoke.deleted).toEqual([objectPath(echoLeftover), '/api/v1/namespaces/echo-agent/secrets/echo-hub-kubeconfig']);
    expect(hub.deleted).toContain(objectPath(mca('cluster1')));
    expect(hub.deleted).toContain('/apis/rbac.authorization.k8s.io/v1/clusterroles/echo-extra');
    expect(hub.deleted).toContain('/apis/apps/v1/namespaces/open-cluster-management-addon/deployments/echo-addon-manager');
  });

  it('is taken off the lab by uninstall: its manager, workloads, ManagedClusterAddOns, hub objects and namespaces', async () => {
    const removal = await addonRemoval();
    expect(removal.addons).toContain(ECHO);
    expect(removal.workloads.map((o) => o.metadata.name)).toEqual(expect.arrayContaining(['echo-addon-manager', 'echo-server']));
    expect(removal.hubNamespaces).toContain(ECHO_HUB_NAMESPACE);
    expect(removal.agentNamespaces).toContain(ECHO_AGENT_NAMESPACE);

    const hub = fakeCluster([mca('cluster1'), cma({ type: 'Manual' }), echoServer, ...managerObjects(ECHO, ''), namespace(ECHO_HUB_NAMESPACE)]);
    const spoke = fakeCluster([namespace(ECHO_AGENT_NAMESPACE)]);
    await uninstallAddons(hub.client, [spoke.client], { timeoutMs: 1_000 });
    expect(hub.store.size).toBe(0);
    expect(hub.deleted).toEqual(
      expect.arrayContaining([objectPath(echoServer), objectPath(mca('cluster1')), objectPath(cma(null)), objectPath(namespace(ECHO_HUB_NAMESPACE))]),
    );
    expect(spoke.deleted).toEqual([objectPath(namespace(ECHO_AGENT_NAMESPACE))]);
  });
});
