import { KubeClient } from '../kube/client.js';
import type { KubeObject } from '../kube/objects.js';
import { acceptClusters, managedClusterPath, type AcceptDiagnostics } from './accept.js';
import { applyClusterInventory, applyClusterManager, waitForClusterManager } from './cluster-manager.js';
import { clusterProfileEnabled, LOCAL_CLUSTER_LABEL, LOCAL_CLUSTER_NAME, localClusterEnabled } from '../config/types.js';
import { AGENT_DEPLOYMENTS, AGENT_NAMESPACE, HUB_CONTROLLER_NAMESPACE } from './constants.js';
import { joinCluster, waitForKlusterlet } from './klusterlet.js';
import { deploymentSummary } from './operator-install.js';
import { labOperators } from './operators.js';
import type { LabCluster, Step } from '../runtime/types.js';
import { hubOf, spokesOf, timeoutOf, type InstallContext } from './install-context.js';

interface Operators {
  clusterManager?: KubeObject[];
  klusterlet?: KubeObject[];
}

function need<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`internal: ${what} is not ready yet`);
  return value;
}

async function withClient<T>(cluster: LabCluster, use: (client: KubeClient) => Promise<T>): Promise<T> {
  const client = await KubeClient.fromKubeconfig(cluster.kubeconfig);
  try {
    return await use(client);
  } finally {
    client.close();
  }
}

/** The klusterlet's pods on the spoke and the registration controller's on the hub: where a failed join says why. */
function acceptDiagnostics(ctx: InstallContext): AcceptDiagnostics {
  return {
    report: async (name) => {
      const spoke = ctx.clusters.find((c) => c.name === name);
      const parts = [
        spoke ? `${name}:\n${await withClient(spoke, (c) => deploymentSummary(c, AGENT_NAMESPACE, AGENT_DEPLOYMENTS, { allLogs: true, logLines: 25 }))}` : '',
        `${hubOf(ctx).name}:\n` +
          (await withClient(hubOf(ctx), (c) =>
            deploymentSummary(c, HUB_CONTROLLER_NAMESPACE, ['cluster-manager-registration-controller'], { allLogs: true, logLines: 25 }),
          )),
      ];
      return parts.filter(Boolean).join('\n');
    },
  };
}

/**
 * The clusters that join the hub, with their ManagedCluster names: every spoke, and with localCluster the hub
 * itself as local-cluster (upstream's local-up.sh of v1.3.1, ocm PR #1515).
 */
function joiners(ctx: Pick<InstallContext, 'clusters' | 'config'>): { name: string; cluster: LabCluster }[] {
  const spokes = spokesOf(ctx).map((cluster) => ({ name: cluster.name, cluster }));
  return localClusterEnabled(ctx.config) ? [...spokes, { name: LOCAL_CLUSTER_NAME, cluster: hubOf(ctx) }] : spokes;
}

async function labelLocalCluster(hub: KubeClient): Promise<void> {
  await hub.mergePatch(managedClusterPath(LOCAL_CLUSTER_NAME), { metadata: { labels: { [LOCAL_CLUSTER_LABEL]: 'true' } } });
}

/**
 * OCM as clusteradm installs it, on whatever clusters the runtime provided:
 * `init` on the hub (cluster-manager operator + ClusterManager), `join` on
 * every spoke (klusterlet operator + Klusterlet with a bootstrap kubeconfig
 * for the hub address the spoke's VPC reaches), then `accept`. Every step
 * leaves what is already right alone, so a second `up` changes nothing.
 */
export function ocmSteps(): Step<InstallContext>[] {
  const operators: Operators = {};
  return [
    {
      title: 'OCM operators',
      run: async (ctx, progress) => {
        const rendered = await labOperators({
          ...ctx.config,
          binDir: ctx.options.binDir,
          artifacts: ctx.options.artifacts,
          mirrors: ctx.options.mirrors,
          onProgress: progress,
        });
        [operators.clusterManager, operators.klusterlet] = [rendered['cluster-manager'], rendered.klusterlet];
        return `cluster-manager and klusterlet operators of OCM ${ctx.config.ocmVersion}`;
      },
    },
    {
      title: 'OCM hub: cluster-manager operator, ClusterManager, bootstrap identity',
      run: async (ctx) => {
        const changed = await withClient(hubOf(ctx), (hub) =>
          applyClusterManager(hub, {
            operatorObjects: need(operators.clusterManager, 'cluster-manager manifests'),
            ocmVersion: ctx.config.ocmVersion,
            timeoutMs: timeoutOf(ctx),
            clusterProfile: clusterProfileEnabled(ctx.config),
            featureGates: ctx.config.featureGates?.hub,
          }),
        );
        return changed.length ? `${changed.length} objects applied` : 'unchanged';
      },
    },
    {
      // Spokes join while the hub's controllers start: the agents retry until the hub answers.
      title: 'OCM',
      concurrent: true,
      children: (ctx) => [
        {
          title: `${hubOf(ctx).name}: cluster manager rolled out`,
          run: async (c, progress) => {
            await withClient(hubOf(c), (hub) => waitForClusterManager(hub, { timeoutMs: timeoutOf(c), progress, featureGates: c.config.featureGates?.hub }));
            if (!clusterProfileEnabled(c.config)) return 'up to date';
            const inventory = await withClient(hubOf(c), (hub) => applyClusterInventory(hub));
            return `up to date${inventory.length ? `; ClusterProfile inventory: ${inventory.join(', ')}` : ''}`;
          },
        },
        ...joiners(ctx).map(({ name, cluster }) => ({
          title: `${name}: klusterlet${cluster.hub ? ' (the hub joined to itself)' : ''}`,
          run: async (c: InstallContext, progress: (line: string) => void) => {
            const hub = hubOf(c);
            const changed = await withClient(hub, (hubClient) =>
              withClient(cluster, (spokeClient) =>
                joinCluster(spokeClient, hubClient, {
                  clusterName: name,
                  hubServer: hub.internalServer,
                  hubCaPem: hub.caPem,
                  ownServer: cluster.internalServer,
                  ocmVersion: c.config.ocmVersion,
                  operatorObjects: need(operators.klusterlet, 'klusterlet manifests'),
                  featureGates: c.config.featureGates?.klusterlet,
                  timeoutMs: timeoutOf(c),
                  progress,
                }),
              ),
            );
            return changed.length ? changed.join('; ') : 'joined before';
          },
        })),
      ],
    },
    {
      title: 'OCM accept',
      run: async (ctx, progress) => {
        const states = await withClient(hubOf(ctx), async (hub) => {
          const accepted = await acceptClusters(
            hub,
            joiners(ctx).map((j) => j.name),
            {
              timeoutMs: timeoutOf(ctx),
              diagnostics: acceptDiagnostics(ctx),
              progress,
            },
          );
          // As local-up.sh labels it once accepted (`kubectl label managedcluster local-cluster local-cluster=true`).
          if (localClusterEnabled(ctx.config)) await labelLocalCluster(hub);
          return accepted;
        });
        await Promise.all(
          joiners(ctx).map(({ name, cluster }) =>
            withClient(cluster, (client) => waitForKlusterlet(client, { clusterName: name, timeoutMs: timeoutOf(ctx), progress })),
          ),
        );
        return `${states.map((s) => s.name).join(', ')} accepted, joined, available; klusterlet agents Available`;
      },
    },
  ];
}
