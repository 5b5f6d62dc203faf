import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectl } from '../support/lab.js';
import { useSharedLab } from '../support/test-lab.js';
import { sleep } from '../../src/kube/wait.js';
import { waitUntil } from '../support/wait.js';

// The klusterlet's addon namespace: helloworld's agent lives there, and cluster-proxy's moves in and out
// (as upstream's, it follows a config's agentInstallNamespace; managed-serviceaccount's ignores it).
const SHARED_NS = 'open-cluster-management-agent-addon';
const PROXY_NS = 'open-cluster-management-cluster-proxy';
const PROXY_AGENT = 'cluster-proxy-proxy-agent';
const PROXY_WORK = 'addon-cluster-proxy-deploy-0';
const MCA = 'managedclusteraddons.v1alpha1.addon.open-cluster-management.io';

/**
 * An addon never deletes what another addon still uses (issue 28): cluster-proxy moves
 * into the klusterlet's addon namespace (an AddOnDeploymentConfig added), out of it (the config
 * removed) and is then removed from cluster1, while helloworld's agent in that namespace stays the
 * same pod in the same namespace throughout. On the shared hub + cluster1 lab: afterAll starts the
 * cluster-proxy manager again, which gives cluster1 its ManagedClusterAddOn back, and waits for the
 * agent at home. That `cluster remove` leaves no agent certificate of the removed cluster on the hub
 * adds and removes a cluster: it runs in cluster-add-remove.test.ts, on a lab of its own.
 */
describe('addons sharing a namespace on a cluster', () => {
  const lab = useSharedLab('hub-cluster1', 'test/e2e/shared-namespace.test.ts');
  let kubeconfig: string;
  let stoppedProxyManager = false;
  const k = (context: string, args: string[], input?: string) => kubectl(kubeconfig, ['--context', context, ...args], input);
  const ok = async (context: string, args: string[], input?: string) => {
    const r = await k(context, args, input);
    if (r.exitCode !== 0) throw new Error(`kubectl --context ${context} ${args.join(' ')}: ${r.stderr}`);
    return r.stdout.trim();
  };
  const exists = async (context: string, args: string[]) => (await k(context, ['get', ...args, '--ignore-not-found', '-o', 'name'])).stdout.trim() !== '';
  /** What must not change: the shared namespace's uid, and helloworld's agent pod (its uid), Ready. */
  const helloworldState = async () => ({
    // A namespace being deleted keeps its uid while it is Terminating: its phase and deletionTimestamp say it.
    namespace: await ok('cluster1', ['get', 'namespace', SHARED_NS, '-o', 'jsonpath={.metadata.uid} {.status.phase} {.metadata.deletionTimestamp}']),
    pods: await ok('cluster1', ['-n', SHARED_NS, 'get', 'pods', '-l', 'app=helloworld-agent', '-o', 'jsonpath={.items[*].metadata.uid}']),
    ready: await ok('cluster1', ['-n', SHARED_NS, 'get', 'deployment', 'helloworld-agent', '-o', 'jsonpath={.status.readyReplicas}']),
  });
  /** The work agent deletes what a work dropped a moment after the work changes: the state must hold for a while, not once. */
  const holdsFor = async (expected: Awaited<ReturnType<typeof helloworldState>>, ms = 15_000) => {
    for (const end = Date.now() + ms; Date.now() < end; await sleep(1_000)) expect(await helloworldState()).toEqual(expected);
  };
  const proxyAgentReadyIn = (ns: string) =>
    waitUntil(
      async () =>
        (await k('cluster1', ['-n', ns, 'get', 'deployment', PROXY_AGENT, '-o', 'jsonpath={.status.readyReplicas}'])).stdout === '1' ? true : undefined,
      `cluster-proxy's agent ready in ${ns} on cluster1`,
      180_000,
    );
  const proxyAgentGoneFrom = (ns: string) =>
    waitUntil(
      async () => (!(await exists('cluster1', ['-n', ns, 'deployment', PROXY_AGENT])) ? true : undefined),
      `cluster-proxy's agent gone from ${ns}`,
      180_000,
    );
  const useConfig = (configs: unknown) =>
    ok('hub', ['-n', 'cluster1', 'patch', MCA, 'cluster-proxy', '--type=merge', '-p', JSON.stringify({ spec: { configs } })]);
  const moveIntoSharedNamespace = async () => {
    await useConfig([{ group: 'addon.open-cluster-management.io', resource: 'addondeploymentconfigs', namespace: 'cluster1', name: 'proxy-shared' }]);
    await proxyAgentReadyIn(SHARED_NS);
  };
  const scaleProxyManager = (replicas: number) =>
    ok('hub', ['-n', 'open-cluster-management-addon', 'scale', 'deployment', 'cluster-proxy-addon-manager', `--replicas=${replicas}`]);

  beforeAll(async () => {
    ({ kubeconfig } = lab);
    // No agentInstallNamespace: the API server fills in the klusterlet's addon namespace.
    await ok(
      'hub',
      ['apply', '-f', '-'],
      'apiVersion: addon.open-cluster-management.io/v1alpha1\nkind: AddOnDeploymentConfig\nmetadata: {name: proxy-shared, namespace: cluster1}\nspec: {}\n',
    );
  });

  // The shared lab as this file found it: the manager running, cluster1's ManagedClusterAddOn back (its Placement's
  // decision), without a config, and the agent ready in its own namespace (useSharedLab then compares every object).
  afterAll(async () => {
    if (stoppedProxyManager) await scaleProxyManager(1);
    await waitUntil(
      async () => ((await exists('hub', ['-n', 'cluster1', MCA, 'cluster-proxy'])) ? true : undefined),
      "cluster1's cluster-proxy addon back",
      180_000,
    );
    await useConfig(null);
    await ok('hub', ['-n', 'cluster1', 'delete', 'addondeploymentconfig', 'proxy-shared', '--ignore-not-found']);
    await proxyAgentReadyIn(PROXY_NS);
    await proxyAgentGoneFrom(SHARED_NS);
  }, 600_000);

  it('cluster-proxy moved in and out of the shared namespace: helloworld keeps its pod, the namespace is never deleted', async () => {
    const before = await helloworldState();
    expect(before.ready).toBe('1');
    await moveIntoSharedNamespace();
    // The work orphans the namespace it shares, so the work agent never deletes it.
    const work = JSON.parse(await ok('hub', ['-n', 'cluster1', 'get', 'manifestwork', PROXY_WORK, '-o', 'json'])) as { spec: { deleteOption?: unknown } };
    expect(work.spec.deleteOption).toEqual({
      propagationPolicy: 'SelectivelyOrphan',
      selectivelyOrphans: { orphaningRules: [{ group: '', resource: 'namespaces', namespace: '', name: SHARED_NS }] },
    });
    await holdsFor(before);

    // The config removed: the agent goes back home and its work drops the shared Namespace manifest.
    await useConfig(null);
    await proxyAgentReadyIn(PROXY_NS);
    await proxyAgentGoneFrom(SHARED_NS);
    await holdsFor(before);
  }, 600_000);

  it('cluster-proxy removed from cluster1 while in the shared namespace: helloworld is untouched', async () => {
    const before = await helloworldState();
    await moveIntoSharedNamespace();
    // As the addons' uninstall does: its manager stopped (it would recreate the ManagedClusterAddOn), then the ManagedClusterAddOn deleted.
    stoppedProxyManager = true;
    await scaleProxyManager(0);
    await waitUntil(
      async () =>
        (await ok('hub', ['-n', 'open-cluster-management-addon', 'get', 'pods', '-l', 'app=cluster-proxy-addon-manager', '-o', 'name'])) === ''
          ? true
          : undefined,
      'the cluster-proxy manager stopped',
      120_000,
    );
    await ok('hub', ['-n', 'cluster1', 'delete', MCA, 'cluster-proxy', '--wait=true', '--timeout=180s']);
    await waitUntil(
      async () => (!(await exists('hub', ['-n', 'cluster1', 'manifestwork', PROXY_WORK])) ? true : undefined),
      `ManifestWork ${PROXY_WORK} gone`,
      180_000,
    );
    await proxyAgentGoneFrom(SHARED_NS);
    await holdsFor(before);
    await scaleProxyManager(1);
    stoppedProxyManager = false;
  }, 600_000);
});
